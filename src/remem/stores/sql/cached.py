"""Rows of Kind-B cached facts (``cached_sources``), shared by both backends.

One row per cached item holds the Log+Facts ``Source`` block (kind, uri, freshness, refresh)
beside the item, like its payload: never in the ledger. Writes that belong to a decision (the
row of a new item, moving it to the item that superseded it, deleting it when the item is
forgotten) run in that decision's unit of work through the module functions; freshness updates
(verified, stale) are single-row writes through :class:`SqlCached`. Times are ISO-8601 UTC
strings (``domain.timefmt.to_iso``), so text order is time order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from remem.stores.sql.store import SqlStore

COLUMNS = ("item_id", "scope", "key", "source_kind", "uri", "ttl_seconds", "last_verified_at",
           "etag", "source_version", "strategy", "handler", "priority", "due_at",
           "stale_reason", "stale_at")
#: The freshness columns a check may change.
FRESHNESS = ("last_verified_at", "etag", "source_version", "due_at", "stale_reason",
             "stale_at")


def put_cached(uow: Any, row: dict[str, Any]) -> None:
    """Inserts (or replaces) an item's cached-source row in the unit of work."""
    cols = ", ".join(COLUMNS)
    marks = ",".join("?" * (len(COLUMNS) + 1))
    updates = ", ".join(f"{c}=excluded.{c}" for c in COLUMNS[1:])
    uow.dialect.execute(uow.conn, f"INSERT INTO cached_sources(memory_id, {cols}) VALUES "
                        f"({marks}) ON CONFLICT (memory_id, item_id) DO UPDATE SET {updates}",
                        (uow.memory_id, *[row.get(c) for c in COLUMNS]))


def cached_in(uow: Any, item_id: str) -> dict[str, Any] | None:
    """An item's cached-source row, read in the unit of work (None: not a cached fact)."""
    cur = uow.dialect.execute(uow.conn, f"SELECT {', '.join(COLUMNS)} FROM cached_sources "
                              "WHERE memory_id=? AND item_id=?", (uow.memory_id, item_id))
    row = cur.fetchone()
    return dict(row) if row is not None else None


def drop_cached(uow: Any, item_ids: Sequence[str], at: str) -> int:
    """Deletes the rows of ``item_ids`` in the unit of work (forgotten or replaced items);
    on PostgreSQL an erasure also owes a scrub of the table (its URI may hold a secret)."""
    if not item_ids:
        return 0
    where, args = uow.dialect.any_of("item_id", list(item_ids))
    n = uow.dialect.execute(uow.conn, f"DELETE FROM cached_sources WHERE memory_id=? AND "
                            f"{where}", (uow.memory_id, *args)).rowcount
    if n and uow.dialect.name == "postgres":
        uow.erasure.record_scrub(uow.conn, uow.memory_id, ["cached_sources"], at)
    return n


class SqlCached(SqlStore):
    """Reads and freshness updates of cached facts (mixed into both stores)."""

    def cached_sources(self, memory_id: str, item_ids: Sequence[str]) -> dict[str, dict]:
        """{item_id: row} of the cached items among ``item_ids``."""
        if not item_ids:
            return {}
        where, args = self.dialect.any_of("item_id", list(item_ids))
        rows = self._all(f"SELECT {', '.join(COLUMNS)} FROM cached_sources WHERE "
                         f"memory_id=? AND {where}", (memory_id, *args))
        return {r["item_id"]: r for r in rows}

    def cached_due(self, memory_id: str, strategy: str, now: str,
                   limit: int) -> list[dict[str, Any]]:
        """Rows of ``strategy`` that are stale at ``now`` (past ``due_at`` or labelled
        stale), highest priority first, then the longest overdue; at most ``limit``."""
        return self._all(
            f"SELECT {', '.join(COLUMNS)} FROM cached_sources WHERE memory_id=? AND "
            "strategy=? AND ((due_at IS NOT NULL AND due_at <= ?) OR stale_reason IS NOT "
            "NULL) ORDER BY coalesce(priority, 0) DESC, coalesce(due_at, stale_at), "
            + self.dialect.bytewise("item_id") + " LIMIT ?", (memory_id, strategy, now, limit))

    def next_cached_due(self, memory_id: str, strategy: str) -> str | None:
        """The earliest ``due_at`` of ``strategy``'s rows (None: none has a TTL)."""
        row = self._one("SELECT min(due_at) AS due FROM cached_sources WHERE memory_id=? "
                        "AND strategy=?", (memory_id, strategy))
        return row["due"] if row else None

    def update_cached(self, memory_id: str, item_id: str, fields: dict[str, Any]) -> bool:
        """Sets freshness columns of one row; False when the row is gone (forgotten or
        moved meanwhile)."""
        bad = set(fields) - set(FRESHNESS)
        if bad:
            raise ValueError(f"not freshness columns: {sorted(bad)}")
        sets = ", ".join(f"{c}=?" for c in fields)
        with self._write() as c:
            cur = self._x(c, f"UPDATE cached_sources SET {sets} WHERE memory_id=? AND "
                             "item_id=?", (*fields.values(), memory_id, item_id))
            return cur.rowcount > 0

    def drop_cached_rows(self, memory_id: str, item_ids: Sequence[str]) -> int:
        """Deletes the rows of items that are no longer current (superseded by another
        writer); returns how many."""
        if not item_ids:
            return 0
        where, args = self.dialect.any_of("item_id", list(item_ids))
        with self._write() as c:
            return self._x(c, f"DELETE FROM cached_sources WHERE memory_id=? AND {where}",
                           (memory_id, *args)).rowcount
