"""The small differences between SQLite and PostgreSQL SQL that shared statements need.

Shared statements are written with ``?`` placeholders and run through ``Dialect.execute``,
which rewrites them for the driver. Everything else (upserts with ``ON CONFLICT``,
``RETURNING``) is the same text on both (SQLite >= 3.35).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from functools import lru_cache
from typing import Any


@lru_cache(maxsize=512)
def _percent_s(text: str) -> str:
    return text.replace("?", "%s")  # shared statements hold no literal '%' or '?' 


@dataclass(frozen=True)
class Dialect:
    """How one backend spells what the shared SQL needs.

    Attributes:
        name: ``sqlite`` or ``postgres``.
        lock_rows: suffix that locks the selected rows for the transaction (PostgreSQL
            ``FOR UPDATE``; SQLite has one writer at a time, so nothing).
        claim_rows: suffix for a job claim: PostgreSQL ``FOR UPDATE SKIP LOCKED`` lets many
            workers share one queue without waiting on each other.
    """

    name: str
    lock_rows: str = ""
    claim_rows: str = ""

    def sql(self, text: str) -> str:
        """The statement for this driver (``?`` placeholders -> ``%s`` on PostgreSQL)."""
        return text if self.name == "sqlite" else _percent_s(text)

    def execute(self, conn: Any, text: str, args: Sequence[Any] | dict[str, Any] = ()) -> Any:
        """Runs one statement; returns the driver's cursor."""
        return conn.execute(self.sql(text), args) if args else conn.execute(self.sql(text))

    def any_of(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        """A ``column`` membership test and its arguments (``IN (?, ...)`` / ``= ANY(?)``)."""
        if self.name == "sqlite":
            return f"{column} IN ({','.join('?' * len(values))})", list(values)
        return f"{column} = ANY(?)", [list(values)]

    def bytewise(self, column: str) -> str:
        """``column`` ordered by bytes, as SQLite orders text (PostgreSQL: ``COLLATE "C"``)."""
        return column if self.name == "sqlite" else f'{column} COLLATE "C"'

    @staticmethod
    def load_json(value: Any) -> Any:
        """A JSON column's value (SQLite keeps text; psycopg parses ``json`` columns)."""
        return json.loads(value) if isinstance(value, (str, bytes, bytearray)) else value

    def flag(self, value: Any) -> Any:
        """A boolean parameter (SQLite stores 0/1)."""
        return int(value) if self.name == "sqlite" else bool(value)

    @contextmanager
    def batch(self, conn: Any) -> Iterator[None]:
        """Groups many statements into one round trip where the driver can (psycopg
        pipeline); SQLite runs in-process, so nothing to do."""
        with (nullcontext() if self.name == "sqlite" else conn.pipeline()):
            yield


SQLITE = Dialect("sqlite")
POSTGRES = Dialect("postgres", lock_rows=" FOR UPDATE", claim_rows=" FOR UPDATE SKIP LOCKED")


def dialect_for(conn: Any) -> Dialect:
    """The dialect of a driver connection (sqlite3, else psycopg)."""
    return SQLITE if isinstance(conn, sqlite3.Connection) else POSTGRES


def as_dict(row: Any) -> dict[str, Any] | None:
    """A driver row (``sqlite3.Row`` or psycopg dict row) as a plain dict; None stays None."""
    return dict(row) if row is not None else None
