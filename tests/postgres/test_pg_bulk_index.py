"""Bulk vector loads on PostgreSQL build the HNSW index after the rows go in
(``stores/postgres/vector_index.py``): a large batch into a memory, and a bulk load over many
batches (``PostgresStore.bulk_load``), leave the rows one-at-a-time writes leave, a valid
HNSW index the planner uses, and the same recall; a small batch into a large memory keeps the
index and inserts into it."""

from __future__ import annotations

import hashlib
import itertools
import os
from collections.abc import Iterator
from datetime import UTC, datetime

import psycopg
import pytest

import remem
import remem.stores.postgres.search as pgsearch
import remem.testing.hashembed  # noqa: F401 - the "hash" embedding provider
from remem.service.clock import FixedClock

CONFIG = {"embedding": {"provider": "hash", "dimensions": 16},
          "keys": {"likes": {"cardinality": "multi", "kind": "preference"}}}
NOUNS = ("lakes", "bicycles", "castles", "gardens", "violins", "trains", "bridges", "markets")


def _open(url: str, monkeypatch: pytest.MonkeyPatch):
    """A store whose ids and secret repeat from database to database (``os.urandom`` made
    deterministic from here on, a fixed clock), so rankings tie-break alike."""
    counter = itertools.count()

    def fake(n: int) -> bytes:
        out = b""
        while len(out) < n:
            out += hashlib.sha256(b"bulk" + str(next(counter)).encode()).digest()
        return out[:n]
    monkeypatch.setattr(os, "urandom", fake)
    return remem.open(url, clock=FixedClock(datetime(2026, 3, 1, 9, 0, tzinfo=UTC)))


def statements(n: int, start: int = 0) -> list[dict]:
    return [{"scope": f"user:u{i % 3}", "key": "likes", "kind": "preference",
             "value": f"hiking near {NOUNS[i % 8]} number {i} in town {i % 13}"}
            for i in range(start, start + n)]


@pytest.fixture
def other_pg_url(pg_server) -> Iterator[str]:
    from remem.testing.pgdb import drop_database, fresh_database

    url = fresh_database(pg_server)
    yield url
    drop_database(pg_server, url)


def _index_state(url: str) -> list[tuple]:
    """(index name, oid, valid) of the HNSW indexes on memory m1's vector partition."""
    with psycopg.connect(url) as conn:
        return conn.execute(
            "SELECT c.relname, c.oid, i.indisvalid FROM pg_index i JOIN pg_class c ON "
            "c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam WHERE a.amname = 'hnsw' AND "
            "i.indrelid = 'vectors_m1'::regclass").fetchall()


def _rows(url: str) -> dict[str, list]:
    """The full-text and vector rows by value (doc ids differ between databases)."""
    with psycopg.connect(url) as conn:
        docs = conn.execute("SELECT scope, doc_type, tsv::text FROM search_docs").fetchall()
        vecs = conn.execute("SELECT scope, doc_type, model, content_hash, vec::text, seq "
                            "FROM vectors").fetchall()
    return {"search_docs": sorted(docs), "vectors": sorted(vecs)}


def _recall(mem, queries: list[str]) -> list[list[str]]:
    return [[i.value for i in mem.recall(["user:u0", "user:u1"], q, budget_tokens=400).items]
            for q in queries]


def _plan_uses_hnsw(url: str) -> str:
    with psycopg.connect(url) as conn:
        conn.execute("SET enable_sort = off")  # a few hundred rows: the planner would sort
        model = conn.execute("SELECT embedding_model FROM memories").fetchone()[0]
        return "\n".join(r[0] for r in conn.execute(
            "EXPLAIN SELECT doc_id FROM vectors WHERE memory_id='m1' AND model = %s ORDER BY "
            "vec::vector(16) <=> array_fill(0.5, ARRAY[16])::vector(16) LIMIT 10", (model,)))


QUERIES = ["bicycles in town 4", "castles number 17", "violins", "hiking near markets"]


def test_a_large_batch_into_an_empty_memory_builds_the_index_after_the_same_rows(
        pg_url: str, other_pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pgsearch, "EXACT_MAX_ROWS", 0)  # recall through the HNSW index
    todo = statements(300)
    one = _open(pg_url, monkeypatch)
    a = one.create_memory("m1", CONFIG)
    for st in todo:
        a.remember(st["scope"], st["key"], st["value"], kind=st["kind"])
    many = _open(other_pg_url, monkeypatch)
    try:
        b = many.create_memory("m1", CONFIG)
        before = _index_state(other_pg_url)  # made with the memory's first vector
        b.remember_many([dict(st) for st in todo])
        after = _index_state(other_pg_url)
        assert _rows(pg_url) == _rows(other_pg_url)
        assert len(after) == 1 and after[0][2] is True
        assert before == [] or before[0][1] != after[0][1]  # built after the load
        assert after[0][0] in _plan_uses_hnsw(other_pg_url)
        assert _recall(a, QUERIES) == _recall(b, QUERIES)
        assert all(_recall(b, QUERIES))
    finally:
        one.close()
        many.close()


def test_a_small_batch_into_a_large_memory_keeps_its_index(pg_url: str) -> None:
    store = remem.open(pg_url)
    try:
        mem = store.create_memory("m1", CONFIG)
        mem.remember_many(statements(200))
        built = _index_state(pg_url)
        mem.remember_many(statements(20, start=200))  # 10% of the rows: insert into the graph
        assert _index_state(pg_url) == built and built[0][2] is True
        mem.remember_many(statements(80, start=220))  # 36%: build again after the load
        rebuilt = _index_state(pg_url)
        assert rebuilt[0][1] != built[0][1] and rebuilt[0][2] is True
    finally:
        store.close()


def _plain_load(pg_url: str, other_pg_url: str, monkeypatch: pytest.MonkeyPatch, total: int,
                batch: int) -> tuple:
    """(store, memory m1 loaded with ``total`` statements in plain batches of ``batch`` on
    ``pg_url``, a second store on ``other_pg_url`` for the bulk load to compare with)."""
    one = _open(pg_url, monkeypatch)
    a = one.create_memory("m1", CONFIG)
    for start in range(0, total, batch):
        a.remember_many(statements(batch, start=start))
    return one, a, _open(other_pg_url, monkeypatch)


def test_a_bulk_load_searches_exactly_without_an_index_and_builds_it_at_the_end(
        pg_url: str, other_pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pgsearch, "EXACT_MAX_ROWS", 0)  # the index path, were there an index
    one, a, bulk = _plain_load(pg_url, other_pg_url, monkeypatch, 400, 50)
    try:
        b = bulk.create_memory("m1", CONFIG)
        b.remember_many(statements(50))  # an index exists before the load
        assert len(_index_state(other_pg_url)) == 1
        with bulk.adapter.bulk_load("m1"):
            for start in range(50, 400, 50):
                b.remember_many(statements(50, start=start))
            assert _index_state(other_pg_url) == []
            exact = _recall(b, QUERIES)  # no index: the planner scans every row
        state = _index_state(other_pg_url)
        assert len(state) == 1 and state[0][2] is True
        assert state[0][0] in _plan_uses_hnsw(other_pg_url)
        assert _rows(pg_url) == _rows(other_pg_url)
        assert all(_recall(b, QUERIES))  # through the graph: approximate
        assert exact == _recall(a, QUERIES)
        # The graph is built over the rows in scope order (``cluster_by_scope``), so it is not
        # the plain load's graph; the exact search must not change.
        monkeypatch.setattr(pgsearch, "EXACT_MAX_ROWS", 10_000)
        assert _recall(b, QUERIES) == _recall(a, QUERIES)
    finally:
        one.close()
        bulk.close()


def _pages_by_scope(url: str) -> tuple[list[str], int, int]:
    """Memory m1's vector rows: scopes in physical (ctid) order, the sum over scopes of the
    heap pages holding a scope's rows, and the partition's pages holding any row."""
    with psycopg.connect(url) as conn:
        scopes = [r[0] for r in conn.execute("SELECT scope FROM vectors_m1 ORDER BY ctid")]
        per_scope, pages = conn.execute(
            "SELECT sum(n), (SELECT count(DISTINCT (ctid::text::point)[0]) FROM vectors_m1) "
            "FROM (SELECT count(DISTINCT (ctid::text::point)[0]) AS n FROM vectors_m1 "
            "GROUP BY scope) s").fetchone()
    return scopes, int(per_scope), int(pages)


def test_a_bulk_load_leaves_the_vector_partition_in_scope_order_with_the_same_results(
        pg_url: str, other_pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The exact search of one scope reads that scope's pages only: after a bulk load the
    rows are stored scope by scope (written interleaved, u0 u1 u2 u0 ...), each page holds
    one scope but for the boundaries, and the rows and exact recall equal a plain load's."""
    one, a, bulk = _plain_load(pg_url, other_pg_url, monkeypatch, 600, 100)
    try:
        b = bulk.create_memory("m1", CONFIG)
        with bulk.adapter.bulk_load("m1"):
            for start in range(0, 600, 100):
                b.remember_many(statements(100, start=start))
            assert _pages_by_scope(other_pg_url)[0][:3] == ["user:u0", "user:u1", "user:u2"]
        scopes, per_scope, pages = _pages_by_scope(other_pg_url)
        assert scopes == sorted(scopes) and len(set(scopes)) == 3
        assert pages >= 6 and per_scope <= pages + 2  # a scope shares a page at a boundary
        plain_scopes, plain_per_scope, _ = _pages_by_scope(pg_url)
        assert plain_scopes != sorted(plain_scopes) and plain_per_scope > per_scope
        assert len(_index_state(other_pg_url)) == 1  # the graph built after the rewrite
        with psycopg.connect(other_pg_url) as conn:  # vacuumed: the scope count reads no heap
            assert conn.execute("SELECT relallvisible = relpages FROM pg_class WHERE "
                                "relname = 'vectors_m1'").fetchone()[0] is True
        assert _rows(pg_url) == _rows(other_pg_url)
        assert _recall(b, QUERIES) == _recall(a, QUERIES)
        assert all(_recall(b, QUERIES))
    finally:
        one.close()
        bulk.close()
