"""PostgresStore: the server backend (many API processes and workers, one database).

Same methods, signatures and semantics as ``SQLiteStore`` (the service layer cannot tell them
apart): memory admin, the write unit of work, read queries, erasure, ``verify`` and
``rebuild``. Differences are confined to how the guarantees are met:

- writers of one memory are serialised by ``SELECT ... FOR UPDATE`` on its ``memories`` row
  (not a database-wide lock), the ledger key (memory_id, seq) is the backstop;
- text-bearing tables are partitioned per memory, and forget rewrites the memory's partitions
  (VACUUM FULL) so erased text leaves the table files;
- job claims (intake) use ``FOR UPDATE SKIP LOCKED`` so many workers share one queue.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cached_property
from typing import Any

from psycopg import sql
from psycopg.rows import tuple_row

from remem.domain.canonical import ChainBreak, verify_chain
from remem.domain.events import upcast
from remem.domain.fold import ItemRecord, Projection
from remem.errors import AlreadyExists, NotFound
from remem.stores import names_a_row
from remem.stores.postgres import erasure
from remem.stores.postgres.connection import (
    Database,
    ensure_partitions,
    partition_name,
    partitioned_tables,
)
from remem.stores.postgres.jobs import PostgresJobs
from remem.stores.postgres.search import PostgresSearchIndex
from remem.stores.postgres.tokens import PostgresTokens
from remem.stores.postgres.uow import PostgresUnitOfWork, save_projection
from remem.stores.sqlite.rows import row_to_item

#: The read-model tables ``rebuild`` drops and refolds (as SQLite).
READ_MODEL_TABLES = ("items", "keys", "key_revisions", "tombstones", "provenance")
_EVENT_PAGE = 2000
#: Locks the memory's row (serialising its writers) and reads what a unit of work keeps for
#: its transaction. The ledger head is read by a separate statement *after* the lock: in READ
#: COMMITTED a lock that waited re-reads the locked row only, so a head joined into this
#: statement could predate the previous writer's commit.
_LOCK_MEMORY = ("SELECT mno, embedding_model, dimensions, vector_seq FROM memories "
                "WHERE memory_id = %s FOR UPDATE")
_HEAD = "SELECT seq, hash FROM ledger WHERE memory_id=%s ORDER BY seq DESC LIMIT 1"


class PostgresStore(PostgresJobs, PostgresTokens):
    """A PostgreSQL database holding any number of memories.

    Args:
        url: ``postgresql://user:password@host:port/dbname``.
        max_connections: connection pool size of this process.
        connect_timeout_s: seconds to wait for a connection before ``StoreUnavailable``.
        scrub_wait_s: how long forget waits for older snapshots to end before rewriting the
            memory's text partitions; if they outlive it, the erasure report says pending and
            the next ``scrub_after_erasure`` (any forget, or a worker) finishes the job.

    The constructor does not connect; the first call opens the pool and migrates.
    """

    backend = "postgres"

    def __init__(self, url: str, *, max_connections: int = 8, connect_timeout_s: float = 10.0,
                 scrub_wait_s: float = 10.0) -> None:
        self.url = url
        self.scrub_wait_s = scrub_wait_s
        self.db = Database(url, max_connections=max_connections,
                           connect_timeout_s=connect_timeout_s)

    def close(self) -> None:
        self.db.close()

    def _mno(self, conn: Any, memory_id: str, *, lock: bool = False) -> int:
        row = conn.execute("SELECT mno FROM memories WHERE memory_id=%s"
                           + (" FOR UPDATE" if lock else ""), (memory_id,)).fetchone()
        if row is None:
            raise NotFound(f"No memory {memory_id!r}; create it with `remem memory create "
                           f"{memory_id}`.", memory=memory_id)
        return row["mno"]

    # --- memory admin ----------------------------------------------------------------------
    def create_memory(self, memory_id: str, config: dict[str, Any], at: str) -> None:
        with self.db.transaction() as c:
            row = c.execute("INSERT INTO memories(memory_id, config, created_at, updated_at) "
                            "VALUES (%s,%s,%s,%s) ON CONFLICT (memory_id) DO NOTHING "
                            "RETURNING mno", (memory_id, json.dumps(config), at, at)).fetchone()
            if row is None:
                raise AlreadyExists(f"Memory {memory_id!r} already exists.", memory=memory_id)
            ensure_partitions(c, memory_id, row["mno"])

    def memory_config(self, memory_id: str) -> dict[str, Any]:
        row = self.db.fetchone("SELECT config FROM memories WHERE memory_id=%s", (memory_id,))
        if row is None:
            raise NotFound(f"No memory {memory_id!r}; create it with `remem memory create "
                           f"{memory_id}`.", memory=memory_id)
        return row["config"]

    def update_memory_config(self, memory_id: str, config: dict[str, Any], at: str) -> None:
        with self.db.transaction() as c:
            cur = c.execute("UPDATE memories SET config=%s, updated_at=%s WHERE memory_id=%s",
                            (json.dumps(config), at, memory_id))
            if cur.rowcount == 0:
                raise NotFound(f"No memory {memory_id!r}.", memory=memory_id)

    def list_memories(self) -> list[dict[str, Any]]:
        return self.db.fetchall("SELECT memory_id, created_at, updated_at FROM memories "
                                "ORDER BY memory_id COLLATE \"C\"")

    def memory_tables(self) -> tuple[str, ...]:
        """Every table holding rows of a memory (purged by ``delete_memory``)."""
        rows = self.db.fetchall(
            "SELECT c.table_name FROM information_schema.columns c JOIN pg_class p ON "
            "p.relname = c.table_name AND p.relnamespace = current_schema()::regnamespace "
            "WHERE c.table_schema = current_schema() AND c.column_name = 'memory_id' AND "
            "c.table_name <> 'memories' AND NOT p.relispartition AND p.relkind IN ('r', 'p') "
            "ORDER BY c.table_name")
        return tuple(r["table_name"] for r in rows)

    def delete_memory(self, memory_id: str) -> dict[str, int]:
        """Purges the memory's ledger and every row of every table; returns rows per table.
        The memory's partitions are dropped after commit (their files are removed)."""
        tables = self.memory_tables()
        counts: dict[str, int] = {}
        with self.db.transaction() as c:
            mno = self._mno(c, memory_id, lock=True)
            for table in tables:
                counts[table] = c.execute(sql.SQL("DELETE FROM {} WHERE memory_id=%s").format(
                    sql.Identifier(table)), (memory_id,)).rowcount
            c.execute("DELETE FROM memories WHERE memory_id=%s", (memory_id,))
        with self.db.connection() as c:  # one lock at a time: no deadlock with writers
            for parent in partitioned_tables(c):
                c.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(
                    sql.Identifier(partition_name(parent, mno))))
        return counts

    # --- writes ------------------------------------------------------------------------------
    @contextmanager
    def unit_of_work(self, memory_id: str) -> Iterator[PostgresUnitOfWork]:
        """One write transaction on a memory; ``FOR UPDATE`` on the memory row serialises the
        memory's writers across processes and hosts."""
        with self.db.transaction() as c:
            row = c.execute(_LOCK_MEMORY, (memory_id,)).fetchone()
            if row is None:
                raise NotFound(f"No memory {memory_id!r}; create it with `remem memory create "
                               f"{memory_id}`.", memory=memory_id)
            head = c.execute(_HEAD, (memory_id,)).fetchone() or {"seq": 0, "hash": None}
            yield PostgresUnitOfWork(c, memory_id, {**row, **head})

    # --- reads ---------------------------------------------------------------------------
    def item(self, memory_id: str, item_id: str) -> ItemRecord | None:
        if not names_a_row(item_id):
            return None
        row = self.db.fetchone("SELECT * FROM items WHERE memory_id=%s AND item_id=%s",
                               (memory_id, item_id))
        return row_to_item(row) if row else None

    def items(self, memory_id: str, *, scope: str | None = None, key: str | None = None,
              kind: str | None = None, statuses: list[str] | None = None,
              after: str | None = None, limit: int = 100) -> list[ItemRecord]:
        """Items ordered by item_id (bytewise, like SQLite), filtered; ``after`` is the last
        id of the previous page."""
        q = ["SELECT * FROM items WHERE memory_id=%s"]
        args: list[Any] = [memory_id]
        for col, val in (("scope", scope), ("key", key), ("kind", kind)):
            if val is not None:
                q.append(f"AND {col}=%s")
                args.append(val)
        if statuses:
            q.append("AND status = ANY(%s)")
            args.append(list(statuses))
        if after:
            q.append("AND item_id > %s COLLATE \"C\"")
            args.append(after)
        q.append("ORDER BY item_id COLLATE \"C\" LIMIT %s")
        args.append(limit)
        return [row_to_item(r) for r in self.db.fetchall(" ".join(q), args)]

    def key_items(self, memory_id: str, scope: str, key: str) -> list[ItemRecord]:
        rows = self.db.fetchall("SELECT * FROM items WHERE memory_id=%s AND scope=%s AND key=%s"
                                " ORDER BY revision, created_seq", (memory_id, scope, key))
        return [row_to_item(r) for r in rows]

    def key_meta(self, memory_id: str, scope: str, key: str) -> dict[str, Any]:
        row = self.db.fetchone(
            "SELECT (SELECT revision FROM key_revisions WHERE memory_id=%(m)s AND scope=%(s)s "
            "AND key=%(k)s) AS revision, k.cardinality, k.on_change, (SELECT count(*) FROM "
            "tombstones WHERE memory_id=%(m)s AND scope=%(s)s AND key=%(k)s) AS tombstones "
            "FROM (SELECT 1) one LEFT JOIN keys k ON k.memory_id=%(m)s AND k.key=%(k)s",
            {"m": memory_id, "s": scope, "k": key})
        return {"revision": row["revision"] or 0, "cardinality": row["cardinality"],
                "on_change": row["on_change"], "tombstones": row["tombstones"]}

    def payloads(self, memory_id: str, payload_ids: list[str]) -> dict[str, dict[str, Any]]:
        """Payload rows by id: {payload_id: {"value": JSON, "quote": str | None}}."""
        if not payload_ids:
            return {}
        rows = self.db.fetchall("SELECT payload_id, value, quote FROM payloads WHERE "
                                "memory_id=%s AND payload_id = ANY(%s)",
                                (memory_id, list(payload_ids)))
        return {r["payload_id"]: {"value": json.loads(r["value"]), "quote": r["quote"]}
                for r in rows}

    def provenance(self, memory_id: str, item_id: str) -> list[dict[str, Any]]:
        return self.db.fetchall("SELECT seq, source_id, source_role, seen_at FROM provenance "
                                "WHERE memory_id=%s AND item_id=%s ORDER BY seq",
                                (memory_id, item_id))

    def events(self, memory_id: str, *, after_seq: int = 0) -> Iterator[dict[str, Any]]:
        """Ledger events in seq order as dicts (memory, seq, type, data, actor, at, hashes),
        read in pages (no connection is held between pages)."""
        last = after_seq
        while True:
            rows = self.db.fetchall("SELECT * FROM ledger WHERE memory_id=%s AND seq>%s "
                                    "ORDER BY seq LIMIT %s", (memory_id, last, _EVENT_PAGE))
            yield from (_event(memory_id, r) for r in rows)
            if len(rows) < _EVENT_PAGE:
                return
            last = rows[-1]["seq"]

    def head_seq(self, memory_id: str) -> int:
        row = self.db.fetchone("SELECT max(seq) AS seq FROM ledger WHERE memory_id=%s",
                               (memory_id,))
        return row["seq"] or 0

    def status_counts(self, memory_id: str) -> dict[str, int]:
        rows = self.db.fetchall("SELECT status, count(*) AS n FROM items WHERE memory_id=%s "
                                "GROUP BY status", (memory_id,))
        return {r["status"]: r["n"] for r in rows}

    # --- erasure -------------------------------------------------------------------------
    def scrub_after_erasure(self) -> dict[str, str]:
        """Rewrites (VACUUM FULL) the text partitions of every memory owed a scrub, once no
        snapshot older than its erasure remains; returns {memory_id: done | pending}."""
        from datetime import UTC, datetime

        from remem.domain.timefmt import to_iso

        with self.db.connection() as c:
            return erasure.scrub(c, wait_s=self.scrub_wait_s, now=to_iso(datetime.now(UTC)))

    def erasure_remaining(self, memory_id: str, item_ids: list[str],
                          source_ids: list[str]) -> dict[str, int]:
        with self.db.connection() as c:
            return erasure.remaining(c, memory_id, item_ids, source_ids)

    def retention_due(self, memory_id: str, now: str,
                      created_before: str | None) -> list[ItemRecord]:
        """Items whose keep_until has passed, or (without keep_until) created at or before
        ``created_before`` (the memory's keep_days cutoff, computed by the service)."""
        rows = self.db.fetchall("SELECT * FROM items WHERE memory_id=%s AND ((keep_until IS NOT "
                                "NULL AND keep_until <= %s) OR (keep_until IS NULL AND "
                                "created_at <= %s)) ORDER BY item_id COLLATE \"C\"",
                                (memory_id, now, created_before or ""))
        return [row_to_item(r) for r in rows]

    # --- integrity ---------------------------------------------------------------------------
    def verify_ledger(self, memory_id: str) -> ChainBreak | None:
        return verify_chain(self.events(memory_id))

    def rebuild(self, memory_id: str) -> int:
        """Drops the memory's read model and refolds it from the ledger (in one transaction
        holding the memory's writer lock); returns events folded."""
        with self.db.transaction() as c:
            self._mno(c, memory_id, lock=True)
            for table in READ_MODEL_TABLES:
                c.execute(sql.SQL("DELETE FROM {} WHERE memory_id=%s").format(
                    sql.Identifier(table)), (memory_id,))
            p = Projection()
            n = 0
            with c.cursor(name="remem_rebuild") as cur:  # server-side: streams the ledger
                cur.itersize = _EVENT_PAGE
                cur.execute("SELECT * FROM ledger WHERE memory_id=%s ORDER BY seq",
                            (memory_id,))
                for r in cur:
                    p.apply(_event(memory_id, r))
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


def _event(memory_id: str, r: dict[str, Any]) -> dict[str, Any]:
    return {"memory": memory_id, "seq": r["seq"], "type": r["type"],
            "data": upcast(r["type"], json.loads(r["data"])), "actor": r["actor"],
            "at": r["at"], "prev_hash": r["prev_hash"], "hash": r["hash"]}
