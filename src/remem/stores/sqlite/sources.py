"""Source log SQL (SQLite): captured inputs chained per (memory, run); verification.

Rows of ``sources`` (migration 002). The hash chain itself is computed by
:mod:`remem.domain.sourcelog`; this module only stores and reads rows. Every recorded source
also has a ``source.recorded`` ledger event carrying its ``entry_hash``, so ``verify`` can
detect a rewritten chain as well as a tampered row.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from remem.domain.canonical import ZERO_HASH
from remem.domain.sourcelog import check_sources

COLUMNS = ("memory_id", "source_id", "run_id", "sequence", "scope", "kind", "role", "actor",
           "occurred_at", "recorded_at", "digest", "salt", "text", "prev_hash", "entry_hash",
           "tz_offset_min")


def _dict(row: sqlite3.Row | None) -> dict[str, Any] | None:
    if row is None:
        return None
    out = {k: row[k] for k in row.keys()}
    out["memory"] = out["memory_id"]
    return out


def get(conn: sqlite3.Connection, memory_id: str, source_id: str) -> dict[str, Any] | None:
    """One source row as a dict (``memory`` = memory id), or None."""
    conn_row = conn.execute("SELECT * FROM sources WHERE memory_id=? AND source_id=?",
                            (memory_id, source_id)).fetchone()
    return _dict(conn_row)


def run_head(conn: sqlite3.Connection, memory_id: str, run_id: str) -> tuple[int, str]:
    """(last sequence, its entry hash) of a run; (0, zero hash) for a new run."""
    row = conn.execute("SELECT sequence, entry_hash FROM sources WHERE memory_id=? AND "
                       "run_id=? ORDER BY sequence DESC LIMIT 1", (memory_id, run_id)).fetchone()
    return (row[0], row[1]) if row else (0, ZERO_HASH)


def insert(conn: sqlite3.Connection, row: dict[str, Any]) -> None:
    """Inserts one source row (keys: :data:`COLUMNS`)."""
    conn.execute(f"INSERT INTO sources({', '.join(COLUMNS)}) VALUES "
                 f"({', '.join('?' * len(COLUMNS))})", tuple(row.get(c) for c in COLUMNS))


def visible(conn: sqlite3.Connection, memory_id: str,
            source_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Unredacted source rows by id (text present)."""
    out: dict[str, dict[str, Any]] = {}
    for i in range(0, len(source_ids), 500):
        chunk = list(source_ids[i:i + 500])
        for r in conn.execute(f"SELECT * FROM sources WHERE memory_id=? AND source_id IN "
                              f"({','.join('?' * len(chunk))}) AND text IS NOT NULL",
                              (memory_id, *chunk)):
            d = _dict(r)
            assert d is not None
            out[d["source_id"]] = d
    return out


def verify(conn: sqlite3.Connection, memory_id: str) -> dict[str, Any]:
    """Walks every run's chain and cross-checks the ledger's ``source.recorded`` events.

    Returns:
        ``{"sources_ok": bool, "sources": n, "sources_broken": None | {run_id, sequence,
        source_id, reason}}`` naming the first broken link.
    """
    recorded = {}
    for (data,) in conn.execute("SELECT data FROM ledger WHERE memory_id=? AND "
                                "type='source.recorded' ORDER BY seq", (memory_id,)):
        d = json.loads(data)
        recorded[d["source_id"]] = d
    rows = [_dict(r) for r in conn.execute(
        "SELECT * FROM sources WHERE memory_id=? ORDER BY run_id, sequence", (memory_id,))]
    return check_sources(rows, recorded)
