"""Round-5 probe of the int8 vector index and its IVF ANN (SQLite): above 10,000 rows in the
caller's scopes recall goes through the ANN, built on the first such query. Can a recall
ever return another scope's item: through the ANN, with rows added after it was built (a
scope the ANN never saw), after forget, after rebuild and after reembed? It never did; this
pins it. One fill of ~10,100 rows with the hash embedder (cheap), on a real SQLite file."""

from __future__ import annotations

import pytest

import remem
import remem.testing.hashembed  # noqa: F401  (registers the "hash" embedder)
from remem.domain.access import Principal, Role
from remem.stores.sqlite.vecivf import ClusterIndex

BIG, VICTIM, LATE = "user:big", "user:victim", "user:late"
WORDS = [f"w{i}" for i in range(60)]
SECRET = "saffron lighthouse passport"  # words the filler rows never use


def _filler(n: int) -> list[dict]:
    return [{"scope": BIG, "key": f"k{i}", "value": " ".join(WORDS[(i * 7 + j) % 60]
                                                             for j in range(4))}
            for i in range(n)]


@pytest.fixture(scope="module")
def memory(tmp_path_factory):
    store = remem.open(str(tmp_path_factory.mktemp("ann") / "ann.db"))
    mem = store.create_memory("m1", {"embedding": {"provider": "hash", "dimensions": 32}})
    rows = _filler(10_100)
    for lo in range(0, len(rows), 1_000):
        mem.remember_many(rows[lo:lo + 1_000])
    mem.remember(VICTIM, "passport", SECRET)
    mem.remember(VICTIM, "lighthouse", "saffron lighthouse")
    yield store, mem
    store.close()


@pytest.fixture
def ann_calls(monkeypatch):
    """How many times the ANN picked candidates (so the tests know they went through it)."""
    calls = []
    real = ClusterIndex.candidates

    def spy(self, *args, **kw):
        calls.append(1)
        return real(self, *args, **kw)

    monkeypatch.setattr(ClusterIndex, "candidates", spy)
    return calls


def _reader(mem, subject: str):
    return mem.as_principal(Principal("m1", Role.READER, subject, "t" + subject[-3:]))


def _scopes_returned(mem, subject: str, query: str) -> set[str]:
    res = _reader(mem, subject).recall([subject], query, budget_tokens=4_000, mode="vector",
                                       limit=50)
    return {i["scope"] for i in res.document["items"]} | {
        s["scope"] for s in res.document["sources"]}


def _assert_only_own(mem, subject: str) -> None:
    for q in (SECRET, "saffron", "passport lighthouse w1 w2"):
        assert _scopes_returned(mem, subject, q) <= {subject}, q


def test_the_ann_path_returns_only_the_callers_scope(memory, ann_calls):
    _, mem = memory
    assert mem.items(scope=BIG, limit=1).total > 10_000  # above the exact-search limit
    _assert_only_own(mem, BIG)
    assert ann_calls


def test_rows_added_after_the_ann_was_built_stay_in_their_scope(memory, ann_calls):
    _, mem = memory
    _assert_only_own(mem, BIG)  # the ANN exists now
    mem.remember(LATE, "passport", SECRET + " late")
    mem.remember_many([{"scope": BIG, "key": f"late{i}", "value": "w3 w4 w5"}
                       for i in range(5)])
    _assert_only_own(mem, BIG)
    assert _scopes_returned(mem, LATE, SECRET) == {LATE}
    assert ann_calls


def test_after_forget_rebuild_and_reembed_nothing_crosses(memory, ann_calls):
    store, mem = memory
    mem.forget(scope=BIG, key="k1", expected_revision=1)
    _assert_only_own(mem, BIG)
    store.rebuild()
    _assert_only_own(mem, BIG)
    mem.reembed(force=True)
    _assert_only_own(mem, BIG)
    assert _scopes_returned(mem, VICTIM, SECRET) == {VICTIM}
    assert len(ann_calls) >= 9  # three passes of three queries went through the ANN
