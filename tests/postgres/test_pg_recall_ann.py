"""The scale bench's ANN pass on PostgreSQL reports what decides HNSW recall at scale: how often
one vector is stored (pgvector folds at most 10 rows with one vector into a graph element), and
recall at several ``ef_search`` floors against the same exact results."""

from __future__ import annotations

import remem
import remem.stores.postgres.search as pgsearch
import remem.testing.hashembed  # noqa: F401 - the "hash" embedding provider
from remem.bench.scale_ann import EF_SEARCH_PROBES, ann_pass


def _memory(store_url: str, texts: int, copies: int):
    store = remem.open(store_url)
    mem = store.create_memory("ann", {"embedding": {"provider": "hash", "dimensions": 32}})
    mem.remember_many([{"scope": f"user:u{c}", "key": "likes", "kind": "preference",
                        "value": f"walks by lake number {t}"}
                       for t in range(texts) for c in range(copies)])
    return store, mem


def test_vector_copies_counts_rows_per_distinct_text(pg_server):
    from _plugins.backends import migrated_database
    from remem.testing.pgdb import drop_database

    url = migrated_database(pg_server)
    store, mem = _memory(url, texts=6, copies=12)
    try:
        with store.adapter.search_index.read("ann") as snap:
            assert snap.vector_copies() == 12.0
        empty = store.create_memory("empty", {"embedding": {"provider": "hash",
                                                            "dimensions": 32}})
        with store.adapter.search_index.read(empty.id) as snap:
            assert snap.vector_copies() is None
    finally:
        store.close()
        drop_database(pg_server, url)


def test_the_ann_pass_reports_recall_by_ef_search_and_copies_per_text(pg_server, monkeypatch):
    from _plugins.backends import migrated_database
    from remem.testing.pgdb import drop_database

    url = migrated_database(pg_server)
    store, mem = _memory(url, texts=10, copies=12)
    try:
        monkeypatch.setattr(pgsearch, "EXACT_MAX_ROWS", 50)  # 120 rows: HNSW answers
        floor = pgsearch.EF_SEARCH_MIN
        out = ann_pass(mem, ["walks by lake number 3", "lake walks"], scopes=12)
        assert out["ann"] == "HNSW above 50 rows"
        assert list(out["ann_recall_by_ef"]) == list(EF_SEARCH_PROBES)
        assert all(0.0 <= r <= 1.0 for r in out["ann_recall_by_ef"].values())
        assert out["ann_rows_per_text"] == 12.0
        # the limits the pass lifts or probes are restored
        assert (pgsearch.EXACT_MAX_ROWS, pgsearch.EF_SEARCH_MIN) == (50, floor)
    finally:
        store.close()
        drop_database(pg_server, url)
