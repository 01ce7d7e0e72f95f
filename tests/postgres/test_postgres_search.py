"""PostgreSQL search internals the contract cannot see: the literal tsvector (diacritics,
CJK bigrams, the scope lexeme), dropping frequent terms on a large memory, and the HNSW path
(forced on a small memory, where the planner would otherwise sort) against exact search."""

from __future__ import annotations

import re

import numpy as np
import psycopg
import pytest

import remem
import remem.stores.postgres.search as pgsearch
import remem.testing.hashembed  # noqa: F401 - the "hash" embedding provider
from remem.domain.textindex import scope_term
from remem.stores.postgres.search import tsquery_literal, tsvector_literal
from remem.stores.postgres.tsterms import MAX_LEXEME_BYTES, scoped_keys


def test_the_tsvector_holds_folded_terms_positions_and_a_weighted_scope_lexeme():
    lit = tsvector_literal("Café au lait, 東京都 🐈 it's", scope_key="kabc")
    assert "'cafe':1" in lit and "'東京':" in lit and "'京都':" in lit and "'u1f408':" in lit
    assert re.search(r" 'kabc':\d+A$", lit) and lit.count("A") == 1
    assert tsquery_literal(["o'brien", "a\\b"]) == "'o''brien' | 'a\\\\b'"


@pytest.fixture
def big_memory(pg_url):
    """A memory with 6,000 search documents in two scopes (written directly), analysed."""
    store = remem.open(pg_url)
    store.create_memory("m1", {"embedding": {"provider": "hash", "dimensions": 16}})
    rows = []
    for i in range(6000):
        scope = "user:a" if i % 2 else "user:b"
        text = f"common words everywhere number {i}" + (" zebra" if i % 1000 == 1 else "")
        rows.append(("m1", f"itm_{i:05d}", "item", scope,
                     tsvector_literal(text, scope_term("m1", scope))))
    with psycopg.connect(pg_url, autocommit=True) as conn:
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO search_docs(memory_id, doc_id, doc_type, scope, tsv) "
                            "VALUES (%s,%s,%s,%s,%s::tsvector)", rows)
        conn.execute("ANALYZE search_docs")
    yield store
    store.close()


def test_frequent_terms_are_dropped_on_a_large_memory_and_rare_ones_rank(big_memory):
    with big_memory.adapter.search_index.read("m1") as snap:
        kept, share = snap._affordable(["common", "zebra"], ["user:a"])
        assert kept == ["zebra"] and 0.3 < share < 0.7
        hits = snap.fts(["common", "zebra"], ["user:a"], 10)
        assert {d for d, _ in hits} == {f"itm_{i:05d}" for i in range(6000)
                                         if i % 1000 == 1}
        assert {s for _, s in hits} == {"user:a"}
        assert snap.fts(["zebra"], ["user:b"], 10) == []  # the scoped index keys restrict


def test_the_full_text_index_keys_each_lexeme_by_its_scope(big_memory, monkeypatch):
    """Migration 018: the SQL function that keys a stored document and the keys a query asks
    for agree, and the search reads them through that index (not a scan)."""
    with big_memory.adapter.search_index.read("m1") as snap:
        stored = snap.conn.execute(
            "SELECT remem_scoped_terms(scope, tsv) AS k, tsvector_to_array(tsv) AS lex, scope "
            "FROM search_docs WHERE memory_id = 'm1' AND doc_id = 'itm_00001'").fetchone()
        assert stored["scope"] == "user:a" and "zebra" in stored["lex"]
        assert stored["k"] == scoped_keys(["user:a"], stored["lex"])
        snap.conn.execute("SET LOCAL enable_seqscan = off")
        sent: list[tuple] = []
        orig = psycopg.Cursor.execute

        def traced(cur, query, params=None, **kw):
            sent.append((query, params))
            return orig(cur, query, params, **kw)

        monkeypatch.setattr(psycopg.Cursor, "execute", traced)
        snap.fts(["zebra"], ["user:a"], 10)
        monkeypatch.undo()
        query, params = sent[-1]  # the statement sent, planned again
        plan = "\n".join(r["QUERY PLAN"] for r in snap.conn.execute("EXPLAIN " + query, params))
    mno = big_memory.adapter.db.fetchone("SELECT mno FROM memories WHERE memory_id='m1'")["mno"]
    assert f"search_docs_m{mno}_remem_scoped_terms_idx" in plan, plan


def test_the_longest_scope_with_the_longest_lexeme_is_indexed_and_found(pg_url):
    """A key is scope + U+001F + lexeme: with a 127-character id of 4-byte characters (516
    bytes) and a 2,046-byte lexeme it stays under GIN's key limit."""
    store = remem.open(pg_url)
    store.create_memory("m1")
    scope, word = "session:" + "\U0001f600" * 127, "w" * MAX_LEXEME_BYTES
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("INSERT INTO search_docs(memory_id, doc_id, doc_type, scope, tsv) VALUES "
                     "('m1', 'itm_long', 'item', %s, %s::tsvector)",
                     (scope, tsvector_literal(f"{word} short", scope_term("m1", scope))))
    with store.adapter.search_index.read("m1") as snap:
        assert snap.fts([word], [scope], 10) == [("itm_long", scope)]
        assert snap.fts([word], ["session:other"], 10) == []
    store.close()


def test_the_hnsw_path_finds_what_exact_search_finds(pg_url, monkeypatch):
    store = remem.open(pg_url)
    store.create_memory("m1")
    rng = np.random.default_rng(7)
    vecs = rng.normal(size=(400, 24)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    ad = store.adapter
    with ad.unit_of_work("m1") as uow:
        w = ad.search_index.writer(uow)
        w.record_embedding("test-24", 24)
        w.put_vectors("test-24", [(f"d{i:03d}", "item", "user:a" if i % 4 else "user:b", "h",
                                   v) for i, v in enumerate(vecs)])
    queries = rng.normal(size=(20, 24)).astype(np.float32)
    monkeypatch.setattr(pgsearch, "EXACT_MAX_ROWS", 0)  # force the index path
    recall = []
    with ad.search_index.read("m1") as snap:
        snap.conn.execute("SET LOCAL enable_sort = off")  # 400 rows: the planner would sort
        for q in queries:
            q /= np.linalg.norm(q)
            hits = snap.vectors(q, ["user:a"], 10, -1.0)
            assert all(scope == "user:a" for _, _, scope in hits) and len(hits) == 10
            mask = np.array([i % 4 != 0 for i in range(400)])
            sims = np.where(mask, vecs @ q, -9)
            truth = {f"d{i:03d}" for i in np.argsort(-sims)[:10]}
            recall.append(len(truth & {d for d, _, _ in hits}) / 10)
        plan = "\n".join(r["QUERY PLAN"] for r in snap.conn.execute(
            "EXPLAIN SELECT doc_id FROM vectors WHERE memory_id='m1' AND model='test-24' "
            "ORDER BY vec::vector(24) <=> %s::vector(24) LIMIT 10", (queries[0],)))
    assert "vectors_m1_hnsw_" in plan
    assert np.mean(recall) >= 0.9, recall
    store.close()
