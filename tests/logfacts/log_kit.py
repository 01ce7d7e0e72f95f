"""Fixtures and helpers shared by the log-entry and tenant tests (issue 16 points 1-2).

The backends come from ``tests/_plugins/backends.py``: ``store_url`` runs a test on SQLite
(a file under tmp_path) and on PostgreSQL (a database of its own on the session's one server).
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import jsonschema


def schema() -> dict[str, Any]:
    """The shipped copy of the Log+Facts schema (package data)."""
    text = resources.files("remem").joinpath("specs/kindgi/memory.schema.json").read_text()
    return json.loads(text)


def log_entry_validator() -> jsonschema.Draft202012Validator:
    """A validator of ``$defs/LogEntry`` with date-time format checking."""
    s = schema()
    return jsonschema.Draft202012Validator(
        {**s, "$ref": "#/$defs/LogEntry"},
        format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)


def raw_sql(store_url: str, statement: str) -> int:
    """Runs one SQL statement straight on the database (tampering in tests); rows changed."""
    if not store_url.startswith("postgresql"):
        import sqlite3

        conn = sqlite3.connect(store_url)
        try:
            n = conn.execute(statement).rowcount
            conn.commit()
            return n
        finally:
            conn.close()
    import psycopg

    with psycopg.connect(store_url, autocommit=True) as conn:
        return conn.execute(statement).rowcount
