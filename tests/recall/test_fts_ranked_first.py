"""In a large scope set SQLite full text ranks inside FTS5 first and joins only the best rows
to their documents (``SearchSnapshot._ranked_first``); the answer is the full join's, ties
included, and anything it cannot tell apart sends the query back to the full join."""

from __future__ import annotations

import pytest

from remem.domain.textindex import query_terms
from remem.stores.sqlite import search as sqlite_search

ALICE, BOB = "user:alice", "user:bob"


@pytest.fixture
def filled(mem, monkeypatch):
    """60 documents of Alice (many with equal bm25 scores) and 20 of Bob; the large-scope
    threshold lowered to 10 documents."""
    rows = [{"scope": ALICE, "key": f"note_{i}", "value": f"pie number {i % 7}" if i % 3
             else "apple pie"} for i in range(60)]
    rows += [{"scope": BOB, "key": f"note_{i}", "value": "apple pie"} for i in range(20)]
    mem.remember_many(rows)
    monkeypatch.setattr(sqlite_search, "FTS_RANK_CAP", 10)
    monkeypatch.setattr(sqlite_search, "FTS_RANKED_SHARE", 1)  # ties straddle the cut often
    return mem


def _fts(mem, query: str, scopes: list[str], limit: int, *, first: bool):
    real = sqlite_search.SearchSnapshot._ranked_first
    calls: list[object] = []

    def spy(self, *args):
        calls.append(real(self, *args) if first else None)
        return calls[-1]

    sqlite_search.SearchSnapshot._ranked_first = spy
    try:
        with mem.ctx.embedding.index.read(mem.ctx.id) as snap:
            return snap.fts(query_terms(query), scopes, limit), calls
    finally:
        sqlite_search.SearchSnapshot._ranked_first = real


@pytest.mark.parametrize("query", ["apple pie", "pie number 3", "number apple", "pie"])
@pytest.mark.parametrize("limit", [1, 5, 12, 50, 100])
def test_ranking_inside_fts5_first_gives_the_full_joins_answer(filled, query, limit):
    got, calls = _fts(filled, query, [ALICE], limit, first=True)
    full, _ = _fts(filled, query, [ALICE], limit, first=False)
    assert got == full and got and {s for _, s in got} == {ALICE}
    assert calls  # the large-scope path ran (its answer or None: then the full join)


def test_the_fast_path_answers_when_no_tie_straddles_the_cut(filled, monkeypatch):
    monkeypatch.setattr(sqlite_search, "FTS_RANKED_SHARE", 4)
    got, calls = _fts(filled, "pie number 3", [ALICE, BOB], 5, first=True)
    assert calls[0] is not None and got == _fts(filled, "pie number 3", [ALICE, BOB], 5,
                                                first=False)[0]


def test_a_row_failing_the_scope_check_sends_the_query_to_the_full_join(filled, monkeypatch):
    real = sqlite_search.SearchSnapshot._docs_of

    def collide(self, rowids, scopes):  # as if one best row's scope key collided
        docs = real(self, rowids, scopes)
        docs.pop(next(iter(docs)))
        return docs

    monkeypatch.setattr(sqlite_search.SearchSnapshot, "_docs_of", collide)
    monkeypatch.setattr(sqlite_search, "FTS_RANKED_SHARE", 4)
    got, calls = _fts(filled, "pie number 3", [ALICE], 5, first=True)
    assert calls == [None] and len(got) == 5
