"""The vector channel's in-RAM ranking runs on the thread that embedded the query
(``CandidatePlan``): a planned search returns exactly what an unplanned one does, and rows
planned before the index changed are never used."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from remem.service import query_vectors
from remem.service import recall as recall_service
from remem.stores.sqlite import vecindex
from tests.recall.test_vecindex_quantised import MEMORY, Fixture, clustered, queries

SCOPES = ["user:a", "user:b", "user:c"]


@pytest.fixture
def small(tmp_path: Path) -> Iterator[Fixture]:
    f = Fixture(tmp_path / "v.db", clustered(3000), SCOPES)
    yield f
    f.store.close()


def _plan(f: Fixture, scopes: list[str], k: int, floor: float) -> vecindex.CandidatePlan:
    with f.index.read(MEMORY) as snap:
        return snap.vector_plan(scopes, k, floor)


def _search(f: Fixture, q, scopes, k, floor, planned=None):
    with f.index.read(MEMORY) as snap:
        return snap.vectors(q, scopes, k, floor, planned)


@pytest.mark.parametrize("scopes", [["user:a"], ["user:a", "user:c"]])
def test_a_planned_search_returns_what_an_unplanned_one_does(small: Fixture, scopes):
    used = []
    real = vecindex.VectorIndex.candidates

    def counted(self, *args, **kwargs):
        used.append(kwargs.get("read_only", False))
        return real(self, *args, **kwargs)

    for q in queries(small.vectors, 12):
        planned = _plan(small, scopes, 50, 0.15).run(q)
        assert planned is not None
        vecindex.VectorIndex.candidates = counted
        try:
            assert _search(small, q, scopes, 50, 0.15, planned) == _search(
                small, q, scopes, 50, 0.15)
        finally:
            vecindex.VectorIndex.candidates = real
        assert used == [False]  # the planned search ranked nothing itself; the other did
        used.clear()


def test_rows_planned_before_new_vectors_arrived_are_not_used(tmp_path: Path):
    vectors = clustered(2001, seed=3)
    f = Fixture(tmp_path / "v.db", vectors, SCOPES)
    f.erase(["d2000"])  # then stored again after the plan ran: "user:c" (2000 % 3)
    try:
        q = vectors[2000]
        planned = _plan(f, ["user:c"], 10, -1.0).run(q)
        assert planned is not None
        f.put([2000])
        hits = _search(f, q, ["user:c"], 10, -1.0, planned)
        assert hits[0][0] == "d2000" and hits[0][1] > 0.999  # the new row, found anyway
        assert hits == _search(f, q, ["user:c"], 10, -1.0)
    finally:
        f.store.close()


def test_planned_rows_are_only_used_for_the_query_and_arguments_they_were_made_for(
        small: Fixture):
    q1, q2 = queries(small.vectors, 2, seed=9)
    planned = _plan(small, ["user:a"], 20, 0.1).run(q1)
    view = small.view()
    assert planned.holds(view.index, q1, ("user:a",), 20, 0.1)
    assert not planned.holds(view.index, q2, ("user:a",), 20, 0.1)
    assert not planned.holds(view.index, q1, ("user:b",), 20, 0.1)
    assert not planned.holds(view.index, q1, ("user:a",), 21, 0.1)
    assert _search(small, q2, ["user:a"], 20, 0.1, planned) == _search(
        small, q2, ["user:a"], 20, 0.1)


def test_a_plan_never_changes_the_index_it_reads(tmp_path: Path, monkeypatch):
    """Off the snapshot a plan builds no ANN and caches no row list: it gives up (None) and
    the search does that work inside its snapshot."""
    monkeypatch.setattr(vecindex, "EXACT_MAX_ROWS", 1000)
    f = Fixture(tmp_path / "v.db", clustered(6000, seed=5), SCOPES)
    try:
        q = queries(f.vectors, 1)[0]
        plan = _plan(f, SCOPES, 10, -1.0)  # 6,000 rows: the ANN, not built yet
        assert plan.run(q) is None and plan.index.ann is None
        f.search(q, SCOPES)  # builds it in a snapshot
        planned = _plan(f, SCOPES, 10, -1.0).run(q)
        assert planned is not None
        assert _search(f, q, SCOPES, 10, -1.0, planned) == f.search(q, SCOPES)
        monkeypatch.setattr(vecindex, "EXACT_MAX_ROWS", 2000)  # one scope: exact search
        index = f.view().index
        index._rows_cache.clear()
        assert index.candidates(q, ["user:a"], 40, read_only=True) is None
        assert index._rows_cache == {}
    finally:
        f.store.close()


def test_recall_ranks_the_vector_channel_on_the_embedding_thread(mem, monkeypatch):
    for i, (key, value) in enumerate([("home_city", "Lyon"), ("pets", "a cat called Mochi"),
                                      ("diet", "pescatarian"), ("job", "violin maker")]):
        mem.remember("user:a", key, value)
    monkeypatch.setattr(query_vectors, "second_core_free", lambda: True)
    threads: list[str] = []
    held: list[bool] = []
    real_run, real_holds = vecindex.CandidatePlan.run, vecindex.PlannedRows.holds

    def run(self, query):
        threads.append(threading.current_thread().name)
        return real_run(self, query)

    def holds(self, *args):
        held.append(real_holds(self, *args))
        return held[-1]

    monkeypatch.setattr(vecindex.CandidatePlan, "run", run)
    monkeypatch.setattr(vecindex.PlannedRows, "holds", holds)
    query_vectors.SHARED._cache.clear()
    planned = mem.recall(["user:a"], "what instrument work", budget_tokens=400).to_dict()
    monkeypatch.setattr(recall_service, "_vector_plan", lambda snap, scopes: None)
    query_vectors.SHARED._cache.clear()
    plain = mem.recall(["user:a"], "what instrument work", budget_tokens=400).to_dict()
    assert threads and threads[0].startswith("remem-query") and held == [True]
    assert planned == plain
