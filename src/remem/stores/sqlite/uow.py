"""The SQLite unit of work: one BEGIN IMMEDIATE transaction per decision.

Everything but erasure is the shared :class:`~remem.stores.sql.uow.SqlUnitOfWork`.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from remem.domain.fold import Projection
from remem.stores.sql.dialect import SQLITE
from remem.stores.sql.uow import SqlUnitOfWork
from remem.stores.sql.uow import save_projection as _save


class SQLiteUnitOfWork(SqlUnitOfWork):
    """Transaction-scoped access to one memory. Created by ``SQLiteStore.unit_of_work``."""

    def __init__(self, conn: sqlite3.Connection, memory_id: str) -> None:
        super().__init__(conn, memory_id, SQLITE)

    def erase(self, item_ids: list[str], scope: str, at: str) -> dict[str, Any]:
        """Erases every surface of the items (payloads, provenance, full text, vectors,
        sources containing them, pinned renders, idempotency digests); returns counts.
        ``at``: the erasure time (ISO-8601 UTC, from the service's clock)."""
        from remem.stores.sqlite.erasure import erase_items

        return erase_items(self.conn, self.memory_id, item_ids, scope, at)


def save_projection(conn: sqlite3.Connection, memory_id: str, p: Projection) -> None:
    """Thin alias of the shared ``save_projection`` for SQLite connections."""
    _save(conn, SQLITE, memory_id, p)
