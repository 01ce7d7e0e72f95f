"""Source log SQL (both backends): captured inputs chained per (memory, run); verification.

Rows of ``sources`` (migration 002). The hash chain is computed by
:mod:`remem.domain.sourcelog`; this module only stores and reads rows. Every recorded source
also has a ``source.recorded`` ledger event carrying its ``entry_hash``, so ``verify`` detects
a rewritten chain as well as a tampered row. Functions take the driver connection of the
caller's transaction; the dialect follows from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from remem.domain.sourcelog import check_sources, recorded_entries
from remem.stores.sql.dialect import dialect_for

COLUMNS = ("memory_id", "source_id", "run_id", "sequence", "scope", "kind", "role", "actor",
           "occurred_at", "recorded_at", "digest", "salt", "text", "prev_hash", "entry_hash",
           "tz_offset_min", "metadata", "tenant_id", "payload", "content_hash", "caused_by",
           "log_format")
_INSERT = (f"INSERT INTO sources({', '.join(COLUMNS)}) VALUES "
           f"({', '.join('?' * len(COLUMNS))})")
_CHUNK = 500


def _dict(row: Any) -> dict[str, Any] | None:
    if row is None:
        return None
    out = dict(row)
    out["memory"] = out["memory_id"]
    return out


def get(conn: Any, memory_id: str, source_id: str) -> dict[str, Any] | None:
    """One source row as a dict (``memory`` = memory id), or None."""
    return _dict(dialect_for(conn).execute(
        conn, "SELECT * FROM sources WHERE memory_id=? AND source_id=?",
        (memory_id, source_id)).fetchone())


def run_head(conn: Any, memory_id: str, run_id: str) -> tuple[int, str] | None:
    """(last sequence, its entry hash) of a run; None for a new run (its first entry takes
    sequence 0 and the zero hash: ``domain.logentry``)."""
    row = dialect_for(conn).execute(
        conn, "SELECT sequence, entry_hash FROM sources WHERE memory_id=? AND run_id=? "
        "ORDER BY sequence DESC LIMIT 1", (memory_id, run_id)).fetchone()
    return (row["sequence"], row["entry_hash"]) if row else None


def insert(conn: Any, row: dict[str, Any]) -> None:
    """Inserts one source row (keys: :data:`COLUMNS`; missing optional ones are NULL)."""
    dialect_for(conn).execute(conn, _INSERT, tuple(row.get(c) for c in COLUMNS))


def visible(conn: Any, memory_id: str, source_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Unredacted source rows by id (text present)."""
    d = dialect_for(conn)
    out: dict[str, dict[str, Any]] = {}
    for i in range(0, len(source_ids), _CHUNK):
        test, args = d.any_of("source_id", list(source_ids[i:i + _CHUNK]))
        for r in d.execute(conn, f"SELECT * FROM sources WHERE memory_id=? AND {test} AND "
                                 "text IS NOT NULL", (memory_id, *args)).fetchall():
            row = _dict(r)
            assert row is not None
            out[row["source_id"]] = row
    return out


def run_windows(conn: Any, memory_id: str, ranges: Sequence[tuple[str, int, int]]
                ) -> list[dict[str, Any]]:
    """Source rows of runs within sequence ranges: ``(run_id, first, last)`` inclusive; each
    row has ``source_id, run_id, sequence, scope, text`` (text None when redacted)."""
    d = dialect_for(conn)
    out: list[dict[str, Any]] = []
    for i in range(0, len(ranges), 50):
        chunk = ranges[i:i + 50]
        test = " OR ".join(["(run_id=? AND sequence BETWEEN ? AND ?)"] * len(chunk))
        args = [v for r in chunk for v in r]
        out.extend(dict(r) for r in d.execute(
            conn, f"SELECT source_id, run_id, sequence, scope, text FROM sources WHERE "
                  f"memory_id=? AND ({test})", (memory_id, *args)).fetchall())
    return out


def verify(conn: Any, memory_id: str) -> dict[str, Any]:
    """Walks every run's chain and cross-checks the ledger's ``source.recorded`` events.
    Never raises on damaged rows (unparsable event data, fields of the wrong type).

    Returns:
        ``{"sources_ok", "sources", "sources_broken", "sources_breaks"}``: the first broken
        link and every one (``domain.sourcelog.check_sources``).
    """
    d = dialect_for(conn)
    recorded = recorded_entries(r["data"] for r in d.execute(
        conn, "SELECT data FROM ledger WHERE memory_id=? AND type='source.recorded' "
        "ORDER BY seq", (memory_id,)).fetchall())
    rows = [_dict(r) for r in d.execute(
        conn, f"SELECT * FROM sources WHERE memory_id=? ORDER BY {d.bytewise('run_id')}, "
        "sequence", (memory_id,)).fetchall()]
    return check_sources([r for r in rows if r is not None], recorded)


class SourceLogWriter:
    """Source-log access for a search writer bound to ``conn`` and ``memory_id`` (both
    backends' ``SearchWriter`` mix it in)."""

    conn: Any
    memory_id: str

    def source(self, source_id: str) -> dict[str, Any] | None:
        return get(self.conn, self.memory_id, source_id)

    def run_head(self, run_id: str) -> tuple[int, str] | None:
        return run_head(self.conn, self.memory_id, run_id)

    def insert_source(self, row: dict[str, Any]) -> None:
        insert(self.conn, {**row, "memory_id": self.memory_id})

    def run_windows(self, ranges: Sequence[tuple[str, int, int]]) -> list[dict[str, Any]]:
        """See :func:`run_windows` (digest windows, ``domain.digests``)."""
        return run_windows(self.conn, self.memory_id, ranges)
