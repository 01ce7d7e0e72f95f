"""Bulk index writes on PostgreSQL: ``COPY`` of a batch's rows and the HNSW build after a load.

pgvector keeps each memory partition's HNSW graph up to date row by row: at 10k items that was
83% of the server's statement time (~6.2 ms per inserted row), while building the graph once
over the loaded rows (in ``maintenance_work_mem``) costs a fraction of that per row. So:

- :func:`copy_docs` / :func:`copy_vectors`: a batch's full-text rows (text ``COPY``; a document
  indexed again replaces its row, as the per-item upsert does) and vectors (binary ``COPY``).
- :func:`built_after`: when a batch is large next to what the partition already holds (at
  least :data:`REBUILD_SHARE` of it; an empty partition always) and the partition stays small
  (:data:`REBUILD_MAX_ROWS`), the partition's HNSW indexes are dropped before the rows go in
  and built again after, inside the batch's transaction.
  The ``DROP INDEX`` locks the partition until commit, so a recall of that memory waits for
  the batch; it never sees the partition without its index.
- :func:`defer` / :func:`build`: a bulk load over many transactions
  (``PostgresStore.bulk_load``) drops the indexes once, loads without them (a recall meanwhile
  searches exactly: the planner has no index and scans) and builds them when it ends;
  before the build, :func:`cluster_by_scope` rewrites the partition in scope order (the exact
  search of one scope then reads its own pages, not a page per row) and after it
  :func:`mark_visible` vacuums it.

Measured (2026-12-02): the docstring of ``bench/scale_pg.py`` has the figures.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

import psycopg
from psycopg import sql
from psycopg.rows import tuple_row

from remem.stores.postgres.connection import partition_name

#: A batch of at least this share of the rows already in the partition builds the HNSW index
#: after its load instead of inserting into it row by row.
REBUILD_SHARE = 0.3
#: A batch builds the index after its load only up to this many rows in the partition after
#: it: the dropped index locks the partition against reads until the batch commits (a build
#: of 20,000 rows takes ~11 s of CPU); larger loads go through ``PostgresStore.bulk_load``.
REBUILD_MAX_ROWS = 20_000
#: ``maintenance_work_mem`` of an index build: the graph must fit in it or pgvector falls back
#: to its slow on-disk build. Per row (384-dim vectors, m = 16) and the cap.
BUILD_KB_PER_ROW, BUILD_MAX_MB = 3, 3072

_COPY_DOCS = "COPY search_docs (memory_id, doc_id, doc_type, scope, tsv) FROM STDIN"
_COPY_VECTORS = ("COPY vectors (memory_id, doc_id, doc_type, scope, model, content_hash, vec, "
                 "seq) FROM STDIN (FORMAT BINARY)")
_VECTOR_TYPES = ["text", "text", "text", "text", "text", "text", "vector", "int8"]
#: The partition's copy of the parent's ``vectors_scope_model`` btree (memory_id, scope, model):
#: the order :func:`cluster_by_scope` writes the rows in.
_SCOPE_INDEX_OF = (
    "SELECT c.relname FROM pg_inherits h JOIN pg_class c ON c.oid = h.inhrelid JOIN pg_index x "
    "ON x.indexrelid = c.oid WHERE h.inhparent = 'vectors_scope_model'::regclass AND "
    "x.indrelid = %s::regclass")
_HNSW_OF = ("SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() "
            "AND tablename = %s AND indexdef LIKE '%% USING hnsw %%'")


def copy_docs(conn: psycopg.Connection, memory_id: str, docs: Sequence[tuple]) -> None:
    """Writes full-text rows ``(memory_id, doc_id, doc_type, scope, tsv literal)`` in call
    order: a document given twice keeps its last row, one already stored is replaced."""
    last = {d[1]: d for d in docs}
    conn.execute("DELETE FROM search_docs WHERE memory_id=%s AND doc_id = ANY(%s)",
                 (memory_id, list(last)))
    with conn.cursor() as cur, cur.copy(_COPY_DOCS) as copy:
        for row in last.values():
            copy.write_row(row)


def copy_vectors(conn: psycopg.Connection, rows: Sequence[tuple]) -> None:
    """Writes vector rows ``(memory_id, doc_id, doc_type, scope, model, content_hash,
    float32 array, seq)`` (none of them may be stored yet)."""
    with conn.cursor() as cur, cur.copy(_COPY_VECTORS) as copy:
        copy.set_types(_VECTOR_TYPES)
        for row in rows:
            copy.write_row(row)


def hnsw_indexes(conn: psycopg.Connection, mno: int) -> list[tuple[str, str]]:
    """(name, CREATE statement) of the HNSW indexes on a memory's vector partition."""
    return conn.cursor(row_factory=tuple_row).execute(
        _HNSW_OF, (partition_name("vectors", mno),)).fetchall()


def build_memory(conn: psycopg.Connection, rows: int) -> str:
    """Sets the transaction's ``maintenance_work_mem`` for an HNSW build over ``rows``
    vectors; returns the setting."""
    mb = min(BUILD_MAX_MB, 64 + (rows * BUILD_KB_PER_ROW) // 1024)
    conn.execute("SELECT set_config('maintenance_work_mem', %s, true)", (f"{mb}MB",))
    return f"{mb}MB"


def _stored_rows(conn: psycopg.Connection, mno: int, cap: int) -> int:
    """Rows in the memory's vector partition, counted up to ``cap + 1``."""
    return conn.execute(sql.SQL("SELECT count(*) AS n FROM (SELECT 1 FROM {} LIMIT {}) s").format(
        sql.Identifier(partition_name("vectors", mno)), sql.Literal(cap + 1))).fetchone()["n"]


@contextmanager
def built_after(conn: psycopg.Connection, mno: int, batch_rows: int,
                deferred: bool = False) -> Iterator[bool]:
    """Around a batch's vector load: yields whether the partition's HNSW indexes were dropped,
    to be built again when the block ends (batch >= :data:`REBUILD_SHARE` of the stored rows,
    at most :data:`REBUILD_MAX_ROWS` after it); ``deferred`` (a bulk load builds them at its
    end): nothing is done."""
    small = 0 < batch_rows <= REBUILD_MAX_ROWS
    indexes = hnsw_indexes(conn, mno) if small and not deferred else []
    cap = min(int(batch_rows / REBUILD_SHARE), REBUILD_MAX_ROWS - batch_rows)
    stored = _stored_rows(conn, mno, cap) if indexes else 0
    if stored > cap:
        indexes = []
    for name, _ in indexes:
        conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(name)))
    yield bool(indexes)
    if indexes:
        build_memory(conn, stored + batch_rows)
        for _, create in indexes:
            conn.execute(create)  # type: ignore[arg-type]  (pg_indexes' own definition)


def defer(conn: psycopg.Connection, mno: int) -> list[str]:
    """Drops the partition's HNSW indexes for a bulk load; returns their names."""
    names = [name for name, _ in hnsw_indexes(conn, mno)]
    for name in names:
        conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(name)))
    return names


def cluster_by_scope(conn: psycopg.Connection, mno: int) -> bool:
    """Rewrites the memory's vector partition in (scope, model) order (``CLUSTER`` on its
    scope index), so the exact search of one scope reads that scope's pages only instead of
    a page per row scattered over the partition. Skipped (False) while the partition has an
    HNSW index: ``CLUSTER`` would rebuild the graph as well. Holds ``ACCESS EXCLUSIVE`` on
    the partition until the transaction ends: that memory's recalls wait (the other
    memories' partitions are not locked; the store plans every statement with its
    parameters, so a recall locks its own memory's partitions only); rows written later are
    appended unordered. The sort uses ``maintenance_work_mem`` (:func:`build_memory`)."""
    name = partition_name("vectors", mno)
    index = conn.execute(_SCOPE_INDEX_OF, (name,)).fetchone()
    if index is None or hnsw_indexes(conn, mno):
        return False
    conn.execute(sql.SQL("CLUSTER {} USING {}").format(
        sql.Identifier(name), sql.Identifier(index["relname"])))
    return True


def mark_visible(conn: psycopg.Connection, mno: int) -> None:
    """``VACUUM`` of the memory's vector partition (an autocommit connection): a rewritten
    partition has no visibility map, so the recall's count of a scope's vectors (an
    index-only scan) would visit every row's heap page until autovacuum ran, which no
    insert may trigger. Measured at 100k: 0.4-0.7 s; the count's heap fetches 964 -> 0."""
    conn.execute(sql.SQL("VACUUM {}").format(sql.Identifier(partition_name("vectors", mno))))


def build(conn: psycopg.Connection, mno: int, ensure: Callable[[str, int], None]) -> int:
    """Builds the HNSW index of every (model, dimensions) stored in the memory's partition
    with ``ensure(model, dims)`` (``SearchWriter._ensure_hnsw``) after sizing
    ``maintenance_work_mem`` and analysing the partition; returns the rows indexed."""
    part = sql.Identifier(partition_name("vectors", mno))
    kinds = conn.cursor(row_factory=tuple_row).execute(sql.SQL(
        "SELECT model, vector_dims(vec), count(*) FROM {} GROUP BY 1, 2").format(part)).fetchall()
    rows = sum(n for _, _, n in kinds)
    conn.execute(sql.SQL("ANALYZE {}").format(part))
    build_memory(conn, rows)
    for model, dims, _ in kinds:
        ensure(model, dims)
    return rows
