"""SQLiteStore: the embedded default backend (one file, WAL, FTS5, exact vector search).

The connection, the write lock, erasure and search are SQLite's; memory admin, reads,
rebuild, jobs, receipts and tokens are the shared SQL of :mod:`remem.stores.sql`.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cached_property
from typing import Any

from remem.errors import NotFound
from remem.stores.sql.dialect import SQLITE
from remem.stores.sql.export import SqlExport
from remem.stores.sql.jobs import SqlJobs
from remem.stores.sql.store import READ_MODEL_TABLES, not_found
from remem.stores.sql.cached import SqlCached
from remem.stores.sql.tokens import SqlTokens
from remem.stores.sqlite import erasure
from remem.stores.sqlite.connection import TranslatingConnection, connect
from remem.stores.sqlite.search import SQLiteSearchIndex
from remem.stores.sqlite.uow import NORMAL_WAL_AUTOCHECKPOINT_PAGES, SQLiteUnitOfWork

#: Every table holding rows of a memory (purged by ``delete_memory``; dumped by tests).
MEMORY_TABLES = ("ledger", "payloads", "items", "keys", "key_revisions", "tombstones",
                 "provenance", "idempotency", "sources", "search_docs", "vectors",
                 "profile_renders", "receipts", "jobs", "runs", "capture_cursors", "feedback",
                 "tokens", "memory_secrets", "labels", "cached_sources")
__all__ = ["MEMORY_TABLES", "READ_MODEL_TABLES", "SQLiteStore"]

#: The connection's page cache (SQLite's default is 2 MiB). Writes insert at random keys in
#: about ten indexes (item, payload, claim, vector and document ids); with 2 MiB even their
#: interior pages fall out between inserts and every insert re-reads them from the OS (a
#: 150k bulk load spent 46 of 237 CPU-s in the kernel, 19 with this cache). 64 MiB
#: holds the interior pages of every index at 1M items; it is a ceiling, filled as pages
#: are read, and part of the process's RSS.
CACHE_KIB = 65_536
#: After a checkpoint the WAL file is cut back to this size (a bulk load lets it grow to
#: ``uow.BULK_WAL_AUTOCHECKPOINT_PAGES``; without a limit it would stay that large).
WAL_KEEP_BYTES = 64 * 2**20


class SQLiteStore(SqlJobs, SqlTokens, SqlCached, SqlExport):
    """A SQLite database file holding any number of memories.

    Args:
        path: file path (created if missing) or ``:memory:``.
        busy_timeout_ms: how long a writer waits for another process's transaction.
        scrub_wait_ms: how long the post-erasure checkpoint waits for readers on older
            snapshots; if they outlive it, the erasure report says pending and the scrub
            stays owed (finished on the next open, by a worker, or by the next erasure).

    The constructor does not touch the file; the first call connects, migrates and finishes
    any scrub a previous process owed (e.g. one killed between an erasure and its scrub).
    """

    backend = "sqlite"
    dialect = SQLITE
    erasure = erasure

    def __init__(self, path: str, *, busy_timeout_ms: int = 30_000,
                 scrub_wait_ms: int = 1_000) -> None:
        self.path = path
        self.busy_timeout_ms = busy_timeout_ms
        self.scrub_wait_ms = scrub_wait_ms
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.RLock()

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            with self._lock:
                if self._conn is None:
                    conn = connect(self.path, busy_timeout_ms=self.busy_timeout_ms)
                    conn.row_factory = sqlite3.Row
                    conn.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
                    conn.execute(f"PRAGMA journal_size_limit={WAL_KEEP_BYTES}")
                    self._conn = conn
                    if erasure.pending_scrubs(conn):
                        self.scrub_after_erasure()
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

    def _write(self) -> Any:
        return self._tx()

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        yield self.conn

    @contextmanager
    def _export_connection(self) -> Iterator[sqlite3.Connection]:
        """A read connection of its own in one transaction (WAL: its snapshot is taken at
        the first read and writers on the store's connection go on). ``:memory:`` has no
        second connection: the store's own, in a transaction, locked for the export."""
        if self.path == ":memory:":
            with self._lock:
                conn = self.conn
                conn.execute("BEGIN")
                try:
                    yield conn
                finally:
                    conn.execute("COMMIT")
            return
        self.conn  # migrated and scrubbed first  # noqa: B018
        conn = sqlite3.connect(self.path, timeout=self.busy_timeout_ms / 1000,
                               isolation_level=None, check_same_thread=False,
                               factory=TranslatingConnection)
        conn.row_factory = sqlite3.Row
        try:
            conn.execute(f"PRAGMA busy_timeout={int(self.busy_timeout_ms)}")
            conn.execute("BEGIN")
            conn.execute("SELECT count(*) FROM memories").fetchone()  # the snapshot starts
            yield conn
        finally:
            if conn.in_transaction:
                conn.execute("COMMIT")
            conn.close()

    # --- memory admin ----------------------------------------------------------------------
    def delete_memory(self, memory_id: str, at: str) -> dict[str, int]:
        """Purges the memory's ledger and every row of every table; returns rows per table."""
        counts: dict[str, int] = {}
        with self._tx() as c:
            if not c.execute("SELECT 1 FROM memories WHERE memory_id=?", (memory_id,)).fetchone():
                raise NotFound(f"No memory {memory_id!r}.", memory=memory_id)
            erasure.purge_search_rows(c, memory_id)
            for table in self.memory_tables():
                counts[table] = c.execute(f"DELETE FROM {table} WHERE memory_id=?",
                                          (memory_id,)).rowcount
            c.execute("DELETE FROM memories WHERE memory_id=?", (memory_id,))
            erasure.record_scrub(c, None, "delete_memory", at)  # its id must not survive
        self.scrub_after_erasure()
        return counts

    def memory_tables(self) -> tuple[str, ...]:
        return MEMORY_TABLES

    # --- writes ------------------------------------------------------------------------------
    @contextmanager
    def unit_of_work(self, memory_id: str) -> Iterator[SQLiteUnitOfWork]:
        """One write transaction on a memory (BEGIN IMMEDIATE: serialises writers). A batch's
        bulk-only setting (``SQLiteUnitOfWork.defer_inserts``) is undone once it committed or
        rolled back."""
        with self._lock:
            uow = None
            try:
                with self._tx() as c:
                    if not c.execute("SELECT 1 FROM memories WHERE memory_id=?",
                                     (memory_id,)).fetchone():
                        raise not_found(memory_id)
                    uow = SQLiteUnitOfWork(c, memory_id)
                    yield uow
            finally:
                if uow is not None and uow.bulk:
                    self.conn.execute(
                        f"PRAGMA wal_autocheckpoint={NORMAL_WAL_AUTOCHECKPOINT_PAGES}")

    # --- erasure -------------------------------------------------------------------------
    def scrub_after_erasure(self, memory_id: str | None = None,
                            now: str | None = None) -> dict[str, Any]:
        """Merges FTS segments and truncates the WAL so erased bytes leave the files; the
        owed scrubs are done only if the TRUNCATE checkpoint succeeded. The scrub is
        file-wide, so ``memory_id`` changes nothing here (PostgreSQL scrubs per memory), and
        finished scrubs are deleted, so ``now`` is unused.

        Returns:
            {"state", "reason", "pending"}: "completed" when the checkpoint succeeded after
            every erasure committed so far, else "pending" with the reason; pending counts
            the owed scrubs left.
        """
        with self._lock:
            reason = erasure.scrub(self.conn, wait_ms=self.scrub_wait_ms,
                                   busy_timeout_ms=self.busy_timeout_ms)
            owed = erasure.pending_scrubs(self.conn)
        return {"state": "pending" if reason else "completed", "reason": reason,
                "pending": owed}

    def pending_erasures(self, memory_id: str | None = None) -> int:
        """Scrubs owed (erased text may still be in the files): of one memory or all."""
        return erasure.pending_scrubs(self.conn, memory_id)

    def _scrub_owed(self, conn: Any, memory_id: str, tables: list[str], at: str) -> None:
        if tables:
            erasure.record_scrub(conn, memory_id, "forget_source", at)

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
