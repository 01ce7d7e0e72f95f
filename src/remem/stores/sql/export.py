"""Streaming reads of a whole memory for the Log+Facts export (both backends).

Each reader pages by keyset (``EXPORT_PAGE`` rows per statement), so an export never holds a
whole memory in RAM. The order is the export's order: sources by (run, sequence), items by
(scope, key, revision, created_seq), tombstones by (scope, key, claim id), all bytewise so
both backends give the same bytes.

One snapshot: :meth:`SqlExport.export_snapshot` gives a view of the store whose every read
runs in one read transaction (SQLite: a connection of its own in WAL mode, so writers go on;
PostgreSQL: REPEATABLE READ, READ ONLY), so the pages of an export and the per-item reads
beside them (provenance, event times, vector models) all show the memory at one moment, never
a write that landed between two pages.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

from remem.domain.filters import load_metadata
from remem.stores.sql.rows import row_to_item
from remem.stores.sql.store import SqlStore

EXPORT_PAGE = 1000


class SqlExport(SqlStore):
    """``export_*`` reads (mixed into ``SQLiteStore`` and ``PostgresStore``)."""

    def _export_connection(self) -> AbstractContextManager[Any]:
        """A connection in one read transaction for a whole export (default: the backend's
        ``_snapshot``)."""
        return self._snapshot()

    @contextmanager
    def export_snapshot(self) -> Iterator[SqlExport]:
        """A view of this store whose reads (every method built on ``_read``, ``_all``,
        ``_one``) all run in one read transaction, held until the block ends; it must not
        write. Use it for every read of one export."""
        with self._export_connection() as conn:
            view = copy.copy(self)
            view._read = lambda: nullcontext(conn)  # type: ignore[method-assign]
            view._snapshot = view._read  # type: ignore[method-assign]
            view._write = _read_only  # type: ignore[method-assign]
            yield view

    def export_counts(self, memory_id: str) -> dict[str, int]:
        """``{"sources", "items", "tombstones"}``: what the ``export_*`` readers yield."""
        row = self._one(
            "SELECT (SELECT count(*) FROM sources WHERE memory_id=?) AS s,"
            " (SELECT count(*) FROM items WHERE memory_id=? AND status <> 'forgotten') AS i,"
            " (SELECT count(*) FROM tombstones WHERE memory_id=?) AS t",
            (memory_id, memory_id, memory_id)) or {}
        return {"sources": int(row.get("s") or 0), "items": int(row.get("i") or 0),
                "tombstones": int(row.get("t") or 0)}

    def export_sources(self, memory_id: str) -> Iterator[dict[str, Any]]:
        """Every source row (an erased one has no payload or text left), by run and sequence,
        with the columns ``domain.logentry.log_entry_record`` reads."""
        b = self.dialect.bytewise
        last: tuple[str, int] | None = None
        while True:
            cond, args = "", [memory_id]
            if last is not None:
                cond = f"AND ({b('run_id')} > ? OR (run_id = ? AND sequence > ?)) "
                args += [last[0], last[0], last[1]]
            rows = self._all(
                "SELECT source_id, run_id, sequence, scope, kind, role, actor, occurred_at, "
                "text, metadata, payload, content_hash, caused_by, prev_hash, entry_hash, "
                "tenant_id, log_format FROM sources WHERE memory_id=? "
                f"{cond}ORDER BY {b('run_id')}, sequence LIMIT ?", (*args, EXPORT_PAGE))
            for r in rows:
                r["metadata"] = load_metadata(r["metadata"])
                yield r
            if len(rows) < EXPORT_PAGE:
                return
            last = (rows[-1]["run_id"], rows[-1]["sequence"])

    def export_items(self, memory_id: str) -> Iterator[tuple[Any, dict[str, Any]]]:
        """``(ItemRecord, payload)`` of every item not forgotten, by scope, key, revision;
        payload: ``{"value", "quote", "metadata", "found", "fact"}`` (found: the payload row
        exists; fact: its fact attributes JSON or None)."""
        b = self.dialect.bytewise
        last: tuple[str, str, int, int] | None = None
        while True:
            cond, args = "", [memory_id]
            if last is not None:
                cond = (f"AND ({b('i.scope')} > ? OR (i.scope = ? AND ({b('i.key')} > ? OR "
                        "(i.key = ? AND (i.revision > ? OR (i.revision = ? AND "
                        "i.created_seq > ?)))))) ")
                args += [last[0], last[0], last[1], last[1], last[2], last[2], last[3]]
            rows = self._all(
                "SELECT i.*, p.value AS p_value, p.quote AS p_quote, p.metadata AS p_metadata, "
                "p.fact AS p_fact, p.payload_id AS p_id "
                "FROM items i LEFT JOIN payloads p ON p.memory_id = i.memory_id AND "
                "p.payload_id = i.payload_id WHERE i.memory_id=? AND i.status <> 'forgotten' "
                f"{cond}ORDER BY {b('i.scope')}, {b('i.key')}, i.revision, i.created_seq "
                "LIMIT ?", (*args, EXPORT_PAGE))
            for r in rows:
                payload = {"value": json.loads(r["p_value"]) if r["p_value"] is not None
                           else None, "quote": r["p_quote"],
                           "metadata": load_metadata(r["p_metadata"]),
                           "found": r["p_id"] is not None,
                           "fact": json.loads(r["p_fact"]) if r["p_fact"] else None}
                yield row_to_item(r), payload
            if len(rows) < EXPORT_PAGE:
                return
            t = rows[-1]
            last = (t["scope"], t["key"], t["revision"], t["created_seq"])

    def export_tombstones(self, memory_id: str) -> Iterator[tuple[str, str, str]]:
        """``(scope, key, claim_id)`` of every tombstone (keyed claim ids; no value)."""
        b = self.dialect.bytewise
        last: tuple[str, str, str] | None = None
        while True:
            cond, args = "", [memory_id]
            if last is not None:
                cond = (f"AND ({b('scope')} > ? OR (scope = ? AND ({b('key')} > ? OR "
                        "(key = ? AND claim_id > ?)))) ")
                args += [last[0], last[0], last[1], last[1], last[2]]
            rows = self._all(
                f"SELECT scope, key, claim_id FROM tombstones WHERE memory_id=? {cond}"
                f"ORDER BY {b('scope')}, {b('key')}, {b('claim_id')} LIMIT ?",
                (*args, EXPORT_PAGE))
            yield from ((r["scope"], r["key"], r["claim_id"]) for r in rows)
            if len(rows) < EXPORT_PAGE:
                return
            last = (rows[-1]["scope"], rows[-1]["key"], rows[-1]["claim_id"])

    def export_merges(self, memory_id: str) -> dict[str, list[str]]:
        """``{into item id: [merged item ids]}`` of every ``item.merged`` event, in ledger
        order (one read for the whole export, in place of one ledger scan per item)."""
        out: dict[str, list[str]] = {}
        for r in self._all("SELECT data FROM ledger WHERE memory_id=? AND type='item.merged' "
                           "ORDER BY seq", (memory_id,)):
            data = json.loads(r["data"])
            into = data.get("into")
            out.setdefault(into, []).extend(i for i in data.get("item_ids", []) if i != into)
        return out

    def adopt_claim_secret(self, memory_id: str, secret: bytes) -> bool:
        """Sets the memory's claim-id secret to an imported one, only while the memory holds
        no item and no tombstone (claim ids already written would no longer match). Returns
        whether it was set (one transaction, the memory's row locked)."""
        with self._write() as c:
            self._lock_memory(c, memory_id)
            row = self._x(c, "SELECT (SELECT count(*) FROM items WHERE memory_id=?) AS i, "
                             "(SELECT count(*) FROM tombstones WHERE memory_id=?) AS t",
                          (memory_id, memory_id)).fetchone()
            if row["i"] or row["t"]:
                return False
            self._x(c, "INSERT INTO memory_secrets(memory_id, claim_secret) VALUES (?,?) "
                       "ON CONFLICT (memory_id) DO UPDATE SET claim_secret = "
                       "excluded.claim_secret", (memory_id, secret))
            return True


def _read_only() -> Any:
    raise AssertionError("an export snapshot does not write")


def put_tombstone(uow: Any, scope_ref: str, key_ref: str, claim_id: str) -> None:
    """The read-model row of an imported keyed tombstone, in the import's transaction (its
    ``item.forgotten`` event is appended beside it, so a rebuild folds the same row)."""
    uow.dialect.execute(uow.conn, "INSERT INTO tombstones(memory_id, scope, key, claim_id) "
                        "VALUES (?,?,?,?) ON CONFLICT DO NOTHING",
                        (uow.memory_id, scope_ref, key_ref, claim_id))
