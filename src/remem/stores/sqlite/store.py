"""SQLiteStore: the embedded default backend (one file, WAL, FTS5, exact vector search).

The only module family with SQL for SQLite. Memory admin, the write unit of work, read
queries, ``verify`` and ``rebuild``.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cached_property
from typing import Any

from remem.domain.canonical import ChainBreak, verify_chain
from remem.domain.events import upcast
from remem.domain.fold import ItemRecord, Projection
from remem.errors import AlreadyExists, NotFound
from remem.stores import names_a_row
from remem.stores.sqlite.connection import connect
from remem.stores.sqlite.jobs import JobsMixin
from remem.stores.sqlite.rows import row_to_item
from remem.stores.sqlite.search import SQLiteSearchIndex
from remem.stores.sqlite.tokens import SQLiteTokens
from remem.stores.sqlite.uow import SQLiteUnitOfWork, save_projection

#: Every table holding rows of a memory (purged by ``delete_memory``; dumped by tests).
MEMORY_TABLES = ("ledger", "payloads", "items", "keys", "key_revisions", "tombstones",
                 "provenance", "idempotency", "sources", "search_docs", "vectors",
                 "profile_renders", "receipts", "jobs", "runs", "capture_cursors", "feedback",
                 "tokens")
#: The read-model tables ``rebuild`` drops and refolds.
READ_MODEL_TABLES = ("items", "keys", "key_revisions", "tombstones", "provenance")


class SQLiteStore(JobsMixin, SQLiteTokens):
    """A SQLite database file holding any number of memories.

    Args:
        path: file path (created if missing) or ``:memory:``.
        busy_timeout_ms: how long a writer waits for another process's transaction.

    The constructor does not touch the file; the first call connects and migrates.
    """

    backend = "sqlite"

    def __init__(self, path: str, *, busy_timeout_ms: int = 30_000) -> None:
        self.path = path
        self.busy_timeout_ms = busy_timeout_ms
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.RLock()

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            with self._lock:
                if self._conn is None:
                    conn = connect(self.path, busy_timeout_ms=self.busy_timeout_ms)
                    conn.row_factory = sqlite3.Row
                    self._conn = conn
        return self._conn

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            conn = self.conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    # --- memory admin ----------------------------------------------------------------------
    def create_memory(self, memory_id: str, config: dict[str, Any], at: str) -> None:
        with self._tx() as c:
            if c.execute("SELECT 1 FROM memories WHERE memory_id=?", (memory_id,)).fetchone():
                raise AlreadyExists(f"Memory {memory_id!r} already exists.", memory=memory_id)
            c.execute("INSERT INTO memories(memory_id, config, created_at, updated_at) "
                      "VALUES (?,?,?,?)", (memory_id, json.dumps(config), at, at))

    def memory_config(self, memory_id: str) -> dict[str, Any]:
        row = self.conn.execute("SELECT config FROM memories WHERE memory_id=?",
                                (memory_id,)).fetchone()
        if row is None:
            raise NotFound(f"No memory {memory_id!r}; create it with `remem memory create "
                           f"{memory_id}`.", memory=memory_id)
        return json.loads(row[0])

    def update_memory_config(self, memory_id: str, config: dict[str, Any], at: str) -> None:
        with self._tx() as c:
            cur = c.execute("UPDATE memories SET config=?, updated_at=? WHERE memory_id=?",
                            (json.dumps(config), at, memory_id))
            if cur.rowcount == 0:
                raise NotFound(f"No memory {memory_id!r}.", memory=memory_id)

    def list_memories(self) -> list[dict[str, Any]]:
        rows = self.conn.execute("SELECT memory_id, created_at, updated_at FROM memories "
                                 "ORDER BY memory_id").fetchall()
        return [dict(r) for r in rows]

    def delete_memory(self, memory_id: str) -> dict[str, int]:
        """Purges the memory's ledger and every row of every table; returns rows per table."""
        counts: dict[str, int] = {}
        with self._tx() as c:
            if not c.execute("SELECT 1 FROM memories WHERE memory_id=?", (memory_id,)).fetchone():
                raise NotFound(f"No memory {memory_id!r}.", memory=memory_id)
            from remem.stores.sqlite.erasure import purge_search_rows

            purge_search_rows(c, memory_id)
            for table in self.memory_tables():
                counts[table] = c.execute(f"DELETE FROM {table} WHERE memory_id=?",
                                          (memory_id,)).rowcount
            c.execute("DELETE FROM memories WHERE memory_id=?", (memory_id,))
        self.scrub_after_erasure()
        return counts

    def memory_tables(self) -> tuple[str, ...]:
        return MEMORY_TABLES

    # --- writes ------------------------------------------------------------------------------
    @contextmanager
    def unit_of_work(self, memory_id: str) -> Iterator[SQLiteUnitOfWork]:
        """One write transaction on a memory (BEGIN IMMEDIATE: serialises writers)."""
        with self._tx() as c:
            if not c.execute("SELECT 1 FROM memories WHERE memory_id=?", (memory_id,)).fetchone():
                raise NotFound(f"No memory {memory_id!r}; create it with `remem memory create "
                               f"{memory_id}`.", memory=memory_id)
            yield SQLiteUnitOfWork(c, memory_id)

    # --- reads ---------------------------------------------------------------------------
    def item(self, memory_id: str, item_id: str) -> ItemRecord | None:
        if not names_a_row(item_id):
            return None
        row = self.conn.execute("SELECT * FROM items WHERE memory_id=? AND item_id=?",
                                (memory_id, item_id)).fetchone()
        return row_to_item(row) if row else None

    def items(self, memory_id: str, *, scope: str | None = None, key: str | None = None,
              kind: str | None = None, statuses: list[str] | None = None,
              after: str | None = None, limit: int = 100) -> list[ItemRecord]:
        """Items ordered by item_id, filtered; ``after`` is the last id of the previous page."""
        sql = ["SELECT * FROM items WHERE memory_id=?"]
        args: list[Any] = [memory_id]
        for col, val in (("scope", scope), ("key", key), ("kind", kind)):
            if val is not None:
                sql.append(f"AND {col}=?")
                args.append(val)
        if statuses:
            sql.append(f"AND status IN ({','.join('?' * len(statuses))})")
            args.extend(statuses)
        if after:
            sql.append("AND item_id > ?")
            args.append(after)
        sql.append("ORDER BY item_id LIMIT ?")
        args.append(limit)
        return [row_to_item(r) for r in self.conn.execute(" ".join(sql), args)]

    def key_items(self, memory_id: str, scope: str, key: str) -> list[ItemRecord]:
        rows = self.conn.execute("SELECT * FROM items WHERE memory_id=? AND scope=? AND key=? "
                                 "ORDER BY revision, created_seq", (memory_id, scope, key))
        return [row_to_item(r) for r in rows]

    def key_meta(self, memory_id: str, scope: str, key: str) -> dict[str, Any]:
        rev = self.conn.execute("SELECT revision FROM key_revisions WHERE memory_id=? AND "
                                "scope=? AND key=?", (memory_id, scope, key)).fetchone()
        card = self.conn.execute("SELECT cardinality, on_change FROM keys WHERE memory_id=? AND "
                                 "key=?", (memory_id, key)).fetchone()
        tombs = self.conn.execute("SELECT count(*) FROM tombstones WHERE memory_id=? AND "
                                  "scope=? AND key=?", (memory_id, scope, key)).fetchone()[0]
        return {"revision": rev[0] if rev else 0,
                "cardinality": card[0] if card else None,
                "on_change": card[1] if card else None,
                "tombstones": tombs}

    def payloads(self, memory_id: str, payload_ids: list[str]) -> dict[str, dict[str, Any]]:
        """Payload rows by id: {payload_id: {"value": JSON, "quote": str | None}}."""
        out: dict[str, dict[str, Any]] = {}
        for i in range(0, len(payload_ids), 500):
            chunk = payload_ids[i:i + 500]
            rows = self.conn.execute(
                f"SELECT payload_id, value, quote FROM payloads WHERE memory_id=? AND "
                f"payload_id IN ({','.join('?' * len(chunk))})", (memory_id, *chunk))
            for r in rows:
                out[r[0]] = {"value": json.loads(r[1]), "quote": r[2]}
        return out

    def provenance(self, memory_id: str, item_id: str) -> list[dict[str, Any]]:
        rows = self.conn.execute("SELECT seq, source_id, source_role, seen_at FROM provenance "
                                 "WHERE memory_id=? AND item_id=? ORDER BY seq",
                                 (memory_id, item_id))
        return [dict(r) for r in rows]

    def events(self, memory_id: str, *, after_seq: int = 0) -> Iterator[dict[str, Any]]:
        """Ledger events in seq order as dicts (memory, seq, type, data, actor, at, hashes)."""
        cur = self.conn.execute("SELECT * FROM ledger WHERE memory_id=? AND seq>? ORDER BY seq",
                                (memory_id, after_seq))
        for r in cur:
            yield {"memory": memory_id, "seq": r["seq"], "type": r["type"],
                   "data": upcast(r["type"], json.loads(r["data"])), "actor": r["actor"],
                   "at": r["at"], "prev_hash": r["prev_hash"], "hash": r["hash"]}

    def head_seq(self, memory_id: str) -> int:
        row = self.conn.execute("SELECT max(seq) FROM ledger WHERE memory_id=?",
                                (memory_id,)).fetchone()
        return row[0] or 0

    def status_counts(self, memory_id: str) -> dict[str, int]:
        rows = self.conn.execute("SELECT status, count(*) FROM items WHERE memory_id=? "
                                 "GROUP BY status", (memory_id,))
        return {r[0]: r[1] for r in rows}

    # --- erasure -------------------------------------------------------------------------
    def scrub_after_erasure(self) -> None:
        """Merges FTS segments and truncates the WAL so erased bytes leave the files."""
        from remem.stores.sqlite.erasure import scrub

        with self._lock:
            scrub(self.conn)

    def erasure_remaining(self, memory_id: str, item_ids: list[str],
                          source_ids: list[str]) -> dict[str, int]:
        from remem.stores.sqlite.erasure import remaining

        return remaining(self.conn, memory_id, item_ids, source_ids)

    def retention_due(self, memory_id: str, now: str,
                      created_before: str | None) -> list[ItemRecord]:
        """Items whose keep_until has passed, or (without keep_until) created at or before
        ``created_before`` (the memory's keep_days cutoff, computed by the service)."""
        rows = self.conn.execute("SELECT * FROM items WHERE memory_id=? AND ((keep_until IS NOT "
                                "NULL AND keep_until <= ?) OR (keep_until IS NULL AND "
                                "created_at <= ?)) ORDER BY item_id",
                                (memory_id, now, created_before or ""))
        return [row_to_item(r) for r in rows]

    # --- integrity ---------------------------------------------------------------------------
    def verify_ledger(self, memory_id: str) -> ChainBreak | None:
        return verify_chain(self.events(memory_id))

    def rebuild(self, memory_id: str) -> int:
        """Drops the memory's read model and refolds it from the ledger; returns events folded."""
        with self._tx() as c:
            for table in READ_MODEL_TABLES:
                c.execute(f"DELETE FROM {table} WHERE memory_id=?", (memory_id,))
            p = Projection()
            n = 0
            for ev in self.events(memory_id):
                p.apply(ev)
                n += 1
            p.mark_all_new()
            save_projection(c, memory_id, p)
        self.rebuild_extras(memory_id)
        return n

    def rebuild_extras(self, memory_id: str) -> None:
        """Rebuilds the full-text rows from payloads and sources (vectors stay)."""
        self.search_index.rebuild_text(memory_id)

    def verify_extras(self, memory_id: str) -> dict[str, Any]:
        """Source chains: ``{"sources_ok", "sources", "sources_broken"}`` (first broken link)."""
        return self.search_index.verify_sources(memory_id)

    @cached_property
    def search_index(self) -> SQLiteSearchIndex:
        """Recall storage: sources, full text, vectors, profile renders (``search.py``)."""
        return SQLiteSearchIndex(self)

    def dump(self, memory_id: str, tables: tuple[str, ...] = READ_MODEL_TABLES) -> dict:
        """Sorted rows of the given tables (tests compare dumps before and after rebuild)."""
        out = {}
        for t in tables:
            rows = self.conn.execute(f"SELECT * FROM {t} WHERE memory_id=?", (memory_id,))
            out[t] = sorted(tuple(r) for r in rows)
        return out
