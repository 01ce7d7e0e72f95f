"""What a recall costs PostgreSQL: the statements it sends (each is a round trip, and under
load a round trip costs milliseconds), the planner statistics it re-reads, and the plans of
the vector search's scope count. Results are pinned by tests/contract; these pin the cost."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import psycopg
import pytest

import remem
import remem.stores.postgres.search as pgsearch
import remem.testing.hashembed  # noqa: F401 - the "hash" embedding provider

SCOPES = ["user:a", "user:b", "user:c"]


@contextmanager
def statements() -> Iterator[list[str]]:
    """Every statement psycopg sends meanwhile (one line each)."""
    log: list[str] = []
    orig = psycopg.Cursor.execute

    def traced(self, query, params=None, **kw):
        text = query.as_string(self) if hasattr(query, "as_string") else (
            query.decode() if isinstance(query, bytes) else query)
        log.append(" ".join(text.split()))
        return orig(self, query, params, **kw)

    psycopg.Cursor.execute = traced
    try:
        yield log
    finally:
        psycopg.Cursor.execute = orig


@pytest.fixture(scope="module")
def pg_url(pg_server) -> Iterator[str]:
    """One database for the module (the memory is only read)."""
    from remem.testing.pgdb import drop_database, fresh_database

    url = fresh_database(pg_server)
    yield url
    drop_database(pg_server, url)


@pytest.fixture(scope="module")
def store(pg_url):
    """A memory of 300 hashed-vector items, 100 in each of three user scopes, analysed."""
    st = remem.open(pg_url)
    mem = st.create_memory("m1", {"embedding": {"provider": "hash", "dimensions": 32}})
    words = ["hiking", "violins", "lakes", "trains", "castles", "gardens", "markets", "maps"]
    mem.remember_many([{"scope": SCOPES[i % 3], "key": "likes", "kind": "preference",
                        "value": f"{words[i % 8]} near {words[i // 8 % 8]} number {i}"}
                       for i in range(300)])
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
    yield st
    st.close()


def test_a_warm_recall_sends_seven_statements_and_no_catalog_read(store):
    mem = store.memory("m1")
    mem.recall(["user:a"], "warm up the caches", budget_tokens=500)
    with statements() as log:
        r = mem.recall(["user:a"], "violins near lakes", budget_tokens=500)
    assert r.items and all(i.scope == "user:a" for i in r.items)
    assert not [s for s in log if "pg_stats" in s]  # the statistics are cached per memory
    assert len([s for s in log if "FROM vectors" in s]) == 1  # count + exact ranking at once
    assert len([s for s in log if "set_config" in s]) == 0  # exact search sets nothing
    # the model is read by the embedding service's own snapshot and once more with the head
    assert len([s for s in log if "FROM memories" in s]) == 2
    # payloads and source refs of the chosen items came with the items
    assert not [s for s in log if s.startswith(("SELECT payload_id", "SELECT item_id, source_id"))]
    # 7 when the vector channel finds only items full text or keys found (their rows were read
    # while the query was embedded); one more item read when it brings another (seen once in a
    # loaded full-suite run, never alone, since the embed-beside-search overlap is decided by
    # CPU count rather than the load average).
    assert len(log) <= 8, log  # 13 before: stats, the model twice, a separate count, payloads
    # and provenance on their own; 9 before the head was read with the model
    # each snapshot read the ledger head with the model: no head read of its own
    assert not [s for s in log if s.startswith("SELECT max(seq)")], log


def test_a_read_snapshot_reads_the_head_with_the_model_once(store):
    index = store.adapter.search_index
    with index.read("m1") as snap, statements() as log:
        model = snap.embedding()
        head = snap.head_seq()
        assert (snap.embedding(), snap.head_seq()) == (model, head)
    assert len(log) == 1 and "max(seq)" in log[0] and "FROM memories" in log[0], log
    assert model[0] is not None and head == store.memory("m1").status()["head_seq"]
    with index.read("m1") as snap, statements() as log:  # the other order: one statement too
        assert (snap.head_seq(), snap.embedding()) == (head, model)
    assert len(log) == 1, log


def test_the_statistics_cache_is_per_store_and_expires(store, monkeypatch):
    index = store.adapter.search_index
    with index.read("m1") as snap, statements() as log:
        snap._affordable(["violins"], ["user:a"])
        snap._affordable(["lakes"], ["user:a"])
    assert len([s for s in log if "pg_stats" in s]) <= 1
    monkeypatch.setattr(pgsearch, "STATS_TTL_S", 0.0)
    with index.read("m1") as snap, statements() as log:
        snap._affordable(["violins"], ["user:a"])
    assert len([s for s in log if "pg_stats" in s]) == 1


def test_the_scope_count_reads_only_the_index(store, pg_url):
    mno = store.adapter.db.fetchone("SELECT mno FROM memories WHERE memory_id='m1'")["mno"]
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("VACUUM vectors")  # sets the visibility map (else autovacuum's timing decides)
        conn.execute("SET enable_seqscan = off")  # 300 rows: the planner would scan them
        # Heap fetches and the bitmap-vs-index choice follow the visibility map, which any other
        # open snapshot in the cluster can keep VACUUM from setting (CI once got a bitmap scan).
        # What the schema decides is that the index alone covers the count: with bitmap scans off
        # the planner must say "Index Only Scan" exactly when the index holds every column read.
        conn.execute("SET enable_bitmapscan = off")
        plan = "\n".join(r[0] for r in conn.execute(
            "EXPLAIN (ANALYZE, COSTS OFF) SELECT count(*) FROM (SELECT 1 FROM vectors WHERE "
            "memory_id = 'm1' AND model = 'hash-32' AND scope = ANY('{user:a}') LIMIT 10001) s"))
    assert f"Index Only Scan using vectors_m{mno}_memory_id_scope_model_idx" in plan, plan


def test_the_key_channel_reads_only_the_index(store, pg_url):
    """Migration 019: the key channel's statement needs no item row (valid_at and item_id
    are in ``items_key``), so its matches cost no heap page each."""
    with store.adapter.search_index.read("m1") as snap:
        got = snap.key_items(["likes", "home_city"], ["user:a", "agent:x"], 50)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("VACUUM items")
        conn.execute("SET enable_seqscan = off")  # 300 rows: the planner would scan them
        conn.execute("SET enable_bitmapscan = off")  # as in the count's test above
        plan = "\n".join(r[0] for r in conn.execute(
            "EXPLAIN (ANALYZE, COSTS OFF) SELECT item_id, scope FROM items WHERE memory_id='m1' "
            "AND key = ANY('{likes,home_city}') AND scope = ANY('{user:a,agent:x}') "
            'ORDER BY valid_at DESC, item_id COLLATE "C" LIMIT 50'))
        newest = [r[0] for r in conn.execute(
            "SELECT item_id FROM items WHERE memory_id='m1' AND scope='user:a' "
            'ORDER BY valid_at DESC, item_id COLLATE "C" LIMIT 50')]
    assert "Index Only Scan using items_key" in plan, plan
    assert [d for d, _ in got] == newest and {s for _, s in got} == {"user:a"}


def test_the_items_source_refs_read_only_the_provenance_index(store, pg_url, monkeypatch):
    """Migration 020: an item's source ids come from ``provenance_item`` alone, in seq order
    (no provenance row, no sort per item)."""
    sent: list[tuple] = []
    orig = psycopg.Cursor.execute

    def traced(cur, query, params=None, **kw):
        sent.append((query, params))
        return orig(cur, query, params, **kw)

    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("VACUUM provenance")
    with store.adapter.search_index.read("m1") as snap:
        ids = [d for d, _s in snap.fts(["violins"], ["user:a"], 10)]
        monkeypatch.setattr(psycopg.Cursor, "execute", traced)
        assert snap.items(ids)
        monkeypatch.undo()
        snap.conn.execute("SET LOCAL enable_seqscan = off")
        snap.conn.execute("SET LOCAL enable_bitmapscan = off")
        query, params = sent[-1]
        plan = "\n".join(r["QUERY PLAN"] for r in snap.conn.execute(
            "EXPLAIN " + query, params))
    refs = plan.split("SubPlan", 1)[1]  # the per-item source ids
    assert "Index Only Scan using provenance_item" in refs and "Sort" not in refs, plan


def _nearest(store, q, scopes, k):
    with store.adapter.search_index.read("m1") as snap:
        return snap.vectors(q, scopes, k, -1.0)


def test_payloads_and_refs_read_with_the_items_match_their_own_reads(store):
    index = store.adapter.search_index
    with index.read("m1") as snap:
        ids = [d for d, _s in snap.fts(["violins"], ["user:a", "user:b"], 40)]
        recs = snap.items(ids)
        with statements() as log:
            pre = (snap.payloads([r.payload_id for r in recs.values()]), snap.source_refs(ids))
        assert not log and len(pre[0]) == len(ids) == 40
    with index.read("m1") as fresh:  # no items read first: each is its own statement
        with statements() as log:
            assert (fresh.payloads([r.payload_id for r in recs.values()]),
                    fresh.source_refs(ids)) == pre
        assert len(log) == 2


def test_the_exact_limit_is_inclusive_and_above_it_hnsw_answers(store, monkeypatch):
    rng = np.random.default_rng(5)
    q = rng.normal(size=32).astype(np.float32)
    q /= np.linalg.norm(q)
    exact = _nearest(store, q, ["user:a"], 10)
    assert len(exact) == 10 and {s for _, _, s in exact} == {"user:a"}
    monkeypatch.setattr(pgsearch, "EXACT_MAX_ROWS", 100)  # user:a holds exactly 100 vectors
    with statements() as log:
        assert _nearest(store, q, ["user:a"], 10) == exact
    assert not [s for s in log if "set_config" in s]
    monkeypatch.setattr(pgsearch, "EXACT_MAX_ROWS", 99)  # one more than the limit: HNSW
    with statements() as log:
        approx = _nearest(store, q, ["user:a"], 10)
    assert len([s for s in log if "set_config" in s]) == 1
    assert {s for _, _, s in approx} == {"user:a"} and len(approx) == 10
    found = len({d for d, _, _ in approx} & {d for d, _, _ in exact})
    assert found >= 9, (approx, exact)


def test_the_full_text_pending_list_stays_small_without_vacuum(store, pg_url):
    """A GIN index scans its whole pending list on every search (migration 015): a memory
    written in bulk, before any VACUUM, keeps at most 128 kB (16 pages) of it."""
    mem = store.create_memory("m_pending", {"embedding": {"provider": "hash", "dimensions": 32}})
    words = ["hiking", "violins", "lakes", "trains", "castles", "gardens", "markets", "maps"]
    mem.remember_many([{"scope": "user:p", "key": "likes", "kind": "preference",
                        "value": f"{words[i % 8]} near {words[i // 8 % 8]} {i} and {i * 7}"}
                       for i in range(2500)])
    mno = store.adapter.db.fetchone(
        "SELECT mno FROM memories WHERE memory_id='m_pending'")["mno"]
    with psycopg.connect(pg_url, autocommit=True) as conn:
        index = conn.execute(  # the partition's copy of the scoped-terms index (migration 018)
            "SELECT c.relname FROM pg_inherits h JOIN pg_class c ON c.oid = h.inhrelid JOIN "
            "pg_index x ON x.indexrelid = c.oid WHERE h.inhparent = 'search_docs_scoped'::regclass "
            "AND x.indrelid = %s::regclass", (f"search_docs_m{mno}",)).fetchone()[0]
        options = conn.execute("SELECT reloptions FROM pg_class WHERE relname = %s",
                               (index,)).fetchone()[0]
        assert options == ["gin_pending_list_limit=128"]
        conn.execute("CREATE EXTENSION IF NOT EXISTS pgstattuple")
        pending_pages, pending_tuples = conn.execute(
            "SELECT pending_pages, pending_tuples FROM pgstatginindex(%s)", (index,)).fetchone()
    assert pending_pages <= 16 and pending_tuples < 2500, (pending_pages, pending_tuples)
