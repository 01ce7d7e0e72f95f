"""PostgresStore: the server backend (many API processes and workers, one database).

Memory admin, reads, rebuild, jobs, receipts and tokens are the shared SQL of
:mod:`remem.stores.sql` (the service layer cannot tell the backends apart). Differences are
confined to how the guarantees are met:

- writers of one memory are serialised by ``SELECT ... FOR UPDATE`` on its ``memories`` row
  (not a database-wide lock), the ledger key (memory_id, seq) is the backstop;
- text-bearing tables are partitioned per memory, and forget rewrites the memory's partitions
  (VACUUM FULL) so erased text leaves the table files;
- job claims (intake) use ``FOR UPDATE SKIP LOCKED`` so many workers share one queue.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import cached_property
from typing import Any

from psycopg import sql
from psycopg.rows import tuple_row

from remem.errors import NotFound
from remem.stores.postgres import erasure
from remem.stores.postgres.connection import (
    Database,
    ensure_partitions,
    partition_name,
    partitioned_tables,
)
from remem.stores.postgres import vector_index
from remem.stores.postgres.search import PostgresSearchIndex, SearchWriter
from remem.stores.postgres.uow import PostgresUnitOfWork
from remem.stores.sql.dialect import POSTGRES
from remem.stores.sql.export import SqlExport
from remem.stores.sql.jobs import SqlJobs
from remem.stores.sql.store import EVENT_PAGE, READ_MODEL_TABLES, not_found
from remem.stores.sql.cached import SqlCached
from remem.stores.sql.tokens import SqlTokens

__all__ = ["READ_MODEL_TABLES", "PostgresStore"]
#: Locks the memory's row (serialising its writers) and reads what a unit of work keeps for
#: its transaction. The ledger head is read by a separate statement *after* the lock: in READ
#: COMMITTED a lock that waited re-reads the locked row only, so a head joined into this
#: statement could predate the previous writer's commit.
_LOCK_MEMORY = ("SELECT mno, embedding_model, dimensions, vector_seq FROM memories "
                "WHERE memory_id = %s FOR UPDATE")
_HEAD = "SELECT seq, hash FROM ledger WHERE memory_id=%s ORDER BY seq DESC LIMIT 1"


class PostgresStore(SqlJobs, SqlTokens, SqlCached, SqlExport):
    """A PostgreSQL database holding any number of memories.

    Args:
        url: ``postgresql://user:password@host:port/dbname``.
        max_connections: connection pool size of this process.
        connect_timeout_s: seconds to wait for a connection before ``StoreUnavailable``.
        scrub_wait_s: how long forget waits for older snapshots to end before rewriting the
            memory's text partitions; if they outlive it, the erasure report says pending and
            the next ``scrub_after_erasure`` (any forget, or a worker) finishes the job.
        scrub_inline_max_bytes: right after a forget, the memory's vector partition and the
            items table are rewritten only up to this size (their rewrite grows with the data:
            VACUUM FULL rebuilds the HNSW index); larger ones leave the report pending until
            the worker's catch-up scrub rewrites them.

    The constructor does not connect; the first call opens the pool and migrates.
    """

    backend = "postgres"
    dialect = POSTGRES
    erasure = erasure

    def __init__(self, url: str, *, max_connections: int = 8, connect_timeout_s: float = 10.0,
                 scrub_wait_s: float = 10.0,
                 scrub_inline_max_bytes: int = 32 * 1024 * 1024) -> None:
        self.url = url
        self.scrub_wait_s = scrub_wait_s
        self.scrub_inline_max_bytes = scrub_inline_max_bytes
        self.db = Database(url, max_connections=max_connections,
                           connect_timeout_s=connect_timeout_s)

    def close(self) -> None:
        self.db.close()

    def _write(self) -> Any:
        return self.db.transaction()

    def _read(self) -> Any:
        return self.db.connection()

    def _snapshot(self) -> Any:
        return self.db.snapshot()

    def _memory_created(self, conn: Any, memory_id: str, row: dict[str, Any]) -> None:
        ensure_partitions(conn, memory_id, row["mno"])

    def _ledger_rows(self, conn: Any, memory_id: str) -> Iterable[Any]:
        """Streams the ledger with a server-side cursor (needs a transaction)."""
        with conn.cursor(name="remem_ledger") as cur:
            cur.itersize = EVENT_PAGE
            cur.execute("SELECT * FROM ledger WHERE memory_id=%s ORDER BY seq", (memory_id,))
            yield from cur

    # --- memory admin ----------------------------------------------------------------------
    def memory_tables(self) -> tuple[str, ...]:
        """Every table holding rows of a memory (purged by ``delete_memory``)."""
        rows = self._all(
            "SELECT c.table_name FROM information_schema.columns c JOIN pg_class p ON "
            "p.relname = c.table_name AND p.relnamespace = current_schema()::regnamespace "
            "WHERE c.table_schema = current_schema() AND c.column_name = 'memory_id' AND "
            "c.table_name <> 'memories' AND NOT p.relispartition AND p.relkind IN ('r', 'p') "
            "ORDER BY c.table_name")
        return tuple(r["table_name"] for r in rows)

    def delete_memory(self, memory_id: str, at: str) -> dict[str, int]:
        """Purges the memory's ledger and every row of every table; returns rows per table.
        The memory's partitions are dropped after commit (their files are removed)."""
        tables = self.memory_tables()
        counts: dict[str, int] = {}
        with self.db.transaction() as c:
            row = c.execute("SELECT mno FROM memories WHERE memory_id=%s FOR UPDATE",
                            (memory_id,)).fetchone()
            if row is None:
                raise NotFound(f"No memory {memory_id!r}.", memory=memory_id)
            for table in tables:
                counts[table] = c.execute(sql.SQL("DELETE FROM {} WHERE memory_id=%s").format(
                    sql.Identifier(table)), (memory_id,)).rowcount
            c.execute("DELETE FROM memories WHERE memory_id=%s", (memory_id,))
            if counts.get("memory_secrets"):  # its dead tuple is rewritten away by a scrub
                erasure.record_scrub(c, memory_id, ["memory_secrets"], at)
        with self.db.connection() as c:  # one lock at a time: no deadlock with writers
            for parent in partitioned_tables(c):
                c.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(
                    sql.Identifier(partition_name(parent, row["mno"]))))
        self.scrub_after_erasure(memory_id, at)  # the secret's dead tuple
        return counts

    # --- writes ------------------------------------------------------------------------------
    @contextmanager
    def unit_of_work(self, memory_id: str) -> Iterator[PostgresUnitOfWork]:
        """One write transaction on a memory; ``FOR UPDATE`` on the memory row serialises the
        memory's writers across processes and hosts."""
        with self.db.transaction() as c:
            row = c.execute(_LOCK_MEMORY, (memory_id,)).fetchone()
            if row is None:
                raise not_found(memory_id)
            head = c.execute(_HEAD, (memory_id,)).fetchone() or {"seq": 0, "hash": None}
            yield PostgresUnitOfWork(c, memory_id, {**row, **head})

    @contextmanager
    def bulk_load(self, memory_id: str) -> Iterator[None]:
        """A bulk load of a memory from this store: its vector partition's HNSW indexes are
        dropped when the block starts and built once over every row when it ends, instead
        of updated row by row (``vector_index``). Writes inside go through the usual write
        path (decision, ledger, payloads, index rows); a recall meanwhile searches the
        memory's vectors exactly (no index: a scan, slower but not approximate). Another
        process writing meanwhile makes its index again (correct, only not faster).

        At the end the vector partition is rewritten in scope order, in a transaction of its
        own, before the graph is built (``vector_index.cluster_by_scope``: that memory's
        recalls wait for the rewrite, not for the build; other memories are not locked), and
        vacuumed after it so the count of a scope's vectors stays an index-only scan
        (``vector_index.mark_visible``)."""
        index = self.search_index
        with self.unit_of_work(memory_id) as uow:
            index.known_indexes.difference_update(vector_index.defer(uow.conn, uow.mno))
        index.deferred.add(memory_id)
        try:
            yield
        finally:
            index.deferred.discard(memory_id)
            with self.unit_of_work(memory_id) as uow:  # its own transaction: the lock ends
                vector_index.build_memory(uow.conn, uow.memory["vector_seq"] or 0)
                vector_index.cluster_by_scope(uow.conn, uow.mno)
            with self.unit_of_work(memory_id) as uow:
                writer = SearchWriter(uow, index.known_indexes)
                vector_index.build(uow.conn, uow.mno, writer._ensure_hnsw)
            with self.db.connection() as c:  # VACUUM runs outside a transaction
                vector_index.mark_visible(c, uow.mno)

    # --- erasure -------------------------------------------------------------------------
    def scrub_after_erasure(self, memory_id: str | None = None,
                            now: str | None = None) -> dict[str, Any]:
        """Rewrites (VACUUM FULL) the text partitions of every memory owed a scrub, once no
        snapshot older than its erasure remains. Right after an erasure of ``memory_id`` it
        waits up to ``scrub_wait_s`` for older snapshots; the catch-up call (``memory_id``
        None: worker, ``finish_erasures``) does not wait, so it never stalls a worker.
        ``now`` (ISO-8601 UTC, from the service's clock) stamps the scrubs finished.

        Returns:
            {"state", "reason", "pending"}: state is "pending" (with the reason) while a
            scrub of ``memory_id`` (None: of any memory) is still owed, else "completed";
            pending counts every owed scrub.
        """
        with self.db.connection() as c:
            states = erasure.scrub(
                c, wait_s=self.scrub_wait_s if memory_id else 0.0, now=now or "",
                inline_max_bytes=self.scrub_inline_max_bytes if memory_id else None)
            owed = erasure.pending_count(c)
            mine = owed if memory_id is None else erasure.pending_count(c, memory_id)
        reason = None
        if mine and states.get(memory_id or "") == "deferred":
            reason = ("The erased rows' old versions are still in the memory's vector table or "
                      "the item table, which is too large to rewrite during the request. The "
                      "scrub is recorded; `remem worker` (or `remem worker --once`) rewrites it.")
        elif mine:
            reason = ("A transaction older than the erasure is still open, so the table files "
                      "that held the erased text cannot be rewritten yet. The scrub is "
                      "recorded; `remem worker` or the next erasure finishes it.")
        return {"state": "pending" if reason else "completed", "reason": reason,
                "pending": owed}

    def pending_erasures(self, memory_id: str | None = None) -> int:
        """Scrubs owed (erased text may still be in the files): of one memory or all."""
        with self.db.connection() as c:
            return erasure.pending_count(c, memory_id)

    def _scrub_owed(self, conn: Any, memory_id: str, tables: list[str], at: str) -> None:
        erasure.record_scrub(conn, memory_id, tables, at)

    @cached_property
    def search_index(self) -> PostgresSearchIndex:
        """Recall storage: sources, full text, vectors, profile renders (``search.py``)."""
        return PostgresSearchIndex(self)

    def dump(self, memory_id: str, tables: tuple[str, ...] = READ_MODEL_TABLES) -> dict:
        """Sorted rows of the given tables (tests compare dumps before and after rebuild)."""
        out = {}
        with self.db.connection() as c:
            cur = c.cursor(row_factory=tuple_row)
            for t in tables:
                rows = cur.execute(sql.SQL("SELECT * FROM {} WHERE memory_id=%s").format(
                    sql.Identifier(t)), (memory_id,)).fetchall()
                out[t] = sorted(rows, key=repr)
        return out
