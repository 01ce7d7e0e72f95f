"""Source log SQL (PostgreSQL): captured inputs chained per (memory, run); verification.

Mirrors ``stores/sqlite/sources.py``: rows of ``sources`` (migration 002); the hash chain is
computed by :mod:`remem.domain.sourcelog`; every recorded source also has a
``source.recorded`` ledger event carrying its ``entry_hash``, so ``verify`` detects a
rewritten chain as well as a tampered row.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg import sql

from remem.domain.canonical import ZERO_HASH
from remem.domain.sourcelog import check_sources

COLUMNS = ("memory_id", "source_id", "run_id", "sequence", "scope", "kind", "role", "actor",
           "occurred_at", "recorded_at", "digest", "salt", "text", "prev_hash", "entry_hash",
           "tz_offset_min")
_INSERT = sql.SQL("INSERT INTO sources({}) VALUES ({})").format(
    sql.SQL(", ").join(map(sql.Identifier, COLUMNS)),
    sql.SQL(", ").join(sql.Placeholder() * len(COLUMNS)))


def _dict(row: dict[str, Any] | None) -> dict[str, Any] | None:
    if row is None:
        return None
    out = dict(row)
    out["memory"] = out["memory_id"]
    return out


def get(conn: psycopg.Connection, memory_id: str, source_id: str) -> dict[str, Any] | None:
    """One source row as a dict (``memory`` = memory id), or None."""
    return _dict(conn.execute("SELECT * FROM sources WHERE memory_id=%s AND source_id=%s",
                              (memory_id, source_id)).fetchone())


def run_head(conn: psycopg.Connection, memory_id: str, run_id: str) -> tuple[int, str]:
    """(last sequence, its entry hash) of a run; (0, zero hash) for a new run."""
    row = conn.execute("SELECT sequence, entry_hash FROM sources WHERE memory_id=%s AND "
                       "run_id=%s ORDER BY sequence DESC LIMIT 1", (memory_id, run_id)).fetchone()
    return (row["sequence"], row["entry_hash"]) if row else (0, ZERO_HASH)


def insert(conn: psycopg.Connection, row: dict[str, Any]) -> None:
    """Inserts one source row (keys: :data:`COLUMNS`; missing optional ones are NULL)."""
    conn.execute(_INSERT, tuple(row.get(c) for c in COLUMNS))


def visible(conn: psycopg.Connection, memory_id: str,
            source_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Unredacted source rows by id (text present)."""
    if not source_ids:
        return {}
    rows = conn.execute("SELECT * FROM sources WHERE memory_id=%s AND source_id = ANY(%s) AND "
                        "text IS NOT NULL", (memory_id, list(source_ids))).fetchall()
    return {r["source_id"]: _dict(r) for r in rows}  # type: ignore[misc]


def verify(conn: psycopg.Connection, memory_id: str) -> dict[str, Any]:
    """Walks every run's chain and cross-checks the ledger's ``source.recorded`` events.

    Returns:
        ``{"sources_ok": bool, "sources": n, "sources_broken": None | {run_id, sequence,
        source_id, reason}}`` naming the first broken link.
    """
    recorded = {}
    for r in conn.execute("SELECT data FROM ledger WHERE memory_id=%s AND "
                          "type='source.recorded' ORDER BY seq", (memory_id,)):
        d = json.loads(r["data"])
        recorded[d["source_id"]] = d
    rows = [_dict(r) for r in conn.execute(
        'SELECT * FROM sources WHERE memory_id=%s ORDER BY run_id COLLATE "C", sequence',
        (memory_id,)).fetchall()]
    return check_sources(rows, recorded)
