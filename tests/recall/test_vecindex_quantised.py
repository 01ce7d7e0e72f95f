"""The SQLite vector index on a real SQLite file: int8 rows in RAM ranked, then rescored exactly
from ``vectors.vec``; an inverted-file ANN above the exact-search limit; scope filtering; erasure
reaching the RAM structures."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import remem
from remem.stores.sqlite import vecindex
from remem.stores.sqlite.erasure import erase_docs

DIMS, MODEL, MEMORY = 384, "test-model", "m"


def clustered(n: int, seed: int = 0) -> np.ndarray:
    """Unit vectors in 40 topics x 8 subtopics (cosine ~0.85 to their subtopic's centre, ~0.7
    to each other, ~0.45 to the topic's other subtopics), float32 ``[n, DIMS]``: like texts
    that restate, paraphrase or relate to each other."""
    rng = np.random.default_rng(seed)
    topics = _unit(rng.standard_normal((40, DIMS)))
    subs = _unit(np.repeat(topics, 8, axis=0) + 0.8 * _unit(rng.standard_normal((320, DIMS))))
    v = subs[rng.integers(0, 320, n)] + rng.standard_normal((n, DIMS)) * (0.62 / np.sqrt(DIMS))
    return _unit(v).astype(np.float32)


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=1, keepdims=True)


class Fixture:
    """A SQLite store holding ``vectors`` in ``scopes`` (row i in ``scopes[i % len]``)."""

    def __init__(self, path: Path, vectors: np.ndarray, scopes: list[str]) -> None:
        self.store = remem.open(str(path))
        self.store.create_memory(MEMORY)
        self.index = self.store.adapter.search_index
        self.vectors, self.scopes = vectors, scopes
        self.put(range(len(vectors)))

    def scope_of(self, i: int) -> str:
        return self.scopes[i % len(self.scopes)]

    def put(self, rows, vectors: np.ndarray | None = None) -> None:
        vecs = self.vectors if vectors is None else vectors
        with self.store.adapter.unit_of_work(MEMORY) as uow:
            w = self.index.writer(uow)
            w.record_embedding(MODEL, DIMS)
            w.put_vectors(MODEL, [(f"d{i}", "item", self.scope_of(i), f"h{i}", vecs[i])
                                  for i in rows])

    def erase(self, doc_ids: list[str]) -> None:
        with self.store.adapter.unit_of_work(MEMORY) as uow:
            erase_docs(uow.conn, MEMORY, doc_ids)

    def search(self, q: np.ndarray, scopes: list[str], k: int = 10):
        with self.index.read(MEMORY) as snap:
            return snap.vectors(q, scopes, k, -1.0)

    def view(self) -> vecindex.IndexView:
        with self.index.read(MEMORY) as snap:
            return self.index.cache.index_for(snap.conn, MEMORY)

    def exact(self, q: np.ndarray, scopes: list[str], k: int = 10) -> list[str]:
        ok = np.array([self.scope_of(i) in scopes for i in range(len(self.vectors))])
        s = np.where(ok, self.vectors @ q, -np.inf)
        return [f"d{i}" for i in np.argsort(-s, kind="stable")[:k]]


def queries(vectors: np.ndarray, count: int, seed: int = 1) -> np.ndarray:
    """Stored rows plus a little noise, unit length."""
    rng = np.random.default_rng(seed)
    q = vectors[rng.choice(len(vectors), count, replace=False)]
    q = q + rng.standard_normal(q.shape).astype(np.float32) * (0.4 / np.sqrt(DIMS))
    return q / np.linalg.norm(q, axis=1, keepdims=True)


@pytest.fixture
def small(tmp_path: Path) -> Iterator[Fixture]:
    f = Fixture(tmp_path / "v.db", clustered(3000), ["user:a", "user:b", "user:c"])
    yield f
    f.store.close()


@pytest.fixture
def above_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Fixture]:
    """6,000 rows in three scopes with the exact-search limit at 1,000: two scopes take the
    ANN."""
    monkeypatch.setattr(vecindex, "EXACT_MAX_ROWS", 1000)
    f = Fixture(tmp_path / "v.db", clustered(6000, seed=5), ["user:a", "user:b", "user:c"])
    yield f
    f.store.close()


def test_quantised_search_returns_the_exact_top_10_with_exact_cosines(small: Fixture):
    view = small.view()
    assert view.index.codec == "int8" and view.index._codes.dtype == np.int8
    for q in queries(small.vectors, 40):
        hits = small.search(q, ["user:a", "user:b"])
        assert [h[0] for h in hits] == small.exact(q, ["user:a", "user:b"])
        for doc, score, scope in hits:
            i = int(doc[1:])
            assert score == pytest.approx(float(small.vectors[i] @ q), abs=1e-6)
            assert scope == small.scope_of(i)


def test_ram_holds_int8_codes_seqs_and_scope_codes_not_doc_id_strings(small: Fixture):
    idx = small.view().index
    assert idx.size == idx.live == 3000
    per_row = idx.ram_bytes() / idx.size
    assert per_row <= DIMS + 4 + 8 + 4 + 1  # codes + scale + seq + scope code
    assert not hasattr(idx, "_doc_ids")


def test_ann_above_the_limit_recalls_at_least_98_percent_of_the_exact_top_10(
        above_limit: Fixture):
    f, found = above_limit, []
    scopes = ["user:a", "user:b"]
    for q in queries(f.vectors, 60, seed=3):
        got = [h[0] for h in f.search(q, scopes)]
        found.append(len(set(got) & set(f.exact(q, scopes))) / 10)
    assert f.view().index.ann is not None  # the ANN served these queries
    assert np.mean(found) >= 0.98


def test_a_scope_set_within_the_limit_is_searched_exactly_without_an_ann(above_limit: Fixture):
    q = queries(above_limit.vectors, 1)[0]
    # 2,000 rows per scope: above the limit of 1,000, so limit it to one scope's share
    vecindex.EXACT_MAX_ROWS = 2000
    assert [h[0] for h in above_limit.search(q, ["user:c"])] == above_limit.exact(q, ["user:c"])
    assert above_limit.view().index.ann is None


@pytest.mark.parametrize("scopes", [["user:a"], ["user:a", "user:b"]], ids=["exact", "ann"])
def test_scope_filtering_never_returns_another_scopes_row(above_limit: Fixture, scopes):
    f = above_limit
    others = [i for i in range(300) if f.scope_of(i) not in scopes]
    for i in others[:20]:  # a query equal to another scope's row: its nearest rows are there
        hits = f.search(f.vectors[i], scopes, k=100)
        assert hits and all(scope in scopes for _d, _s, scope in hits)
        assert all(f.scope_of(int(d[1:])) in scopes for d, _s, _c in hits)
        assert f"d{i}" not in {d for d, _s, _c in hits}


def test_an_erased_vector_leaves_ram_and_the_ann(above_limit: Fixture):
    f, scopes = above_limit, ["user:a", "user:b"]
    f.search(f.vectors[0], scopes)
    idx = f.view().index
    ann = idx.ann
    assert ann is not None
    sampled = set(ann.sample.tolist())
    kept = next(i for i in range(0, 600, 3) if i not in sampled)  # user:a, did not train
    assert f.search(f.vectors[kept], scopes, k=1)[0][0] == f"d{kept}"
    row = int(np.flatnonzero(idx._seqs[: idx.size] == kept + 1)[0])  # seq = i + 1 here
    f.erase([f"d{kept}"])
    hits = f.search(f.vectors[kept], scopes, k=50)
    assert f"d{kept}" not in {d for d, _s, _c in hits}
    assert f.view().index is idx and idx.ann is ann  # pruned in place, not reloaded
    assert not idx._codes[row].any() and idx._scale[row] == 0 and idx._seqs[row] == -1
    assert idx.scope_codes[row] == -1 and idx.live == 5999
    assert row not in set(ann.order.tolist())  # deleted from its list, not only masked
    # erasing a row that trained the centroids discards the ANN (rebuilt on the next query)
    trained = int(ann.sample[0])
    f.erase([f"d{trained}"])
    f.view()
    assert idx.ann is None
    assert f"d{trained}" not in {d for d, _s, _c in f.search(f.vectors[trained], scopes, 50)}
    assert idx.ann is not None and trained not in set(idx.ann.sample.tolist())
    assert int(np.flatnonzero(idx._seqs[: idx.size] == -1).size) == 2


def test_rows_added_after_the_ann_was_built_are_found(above_limit: Fixture):
    f, scopes = above_limit, ["user:a", "user:b"]
    f.search(f.vectors[0], scopes)
    ann = f.view().index.ann
    fresh = clustered(40, seed=9)
    f.vectors = np.concatenate([f.vectors, fresh])
    f.put(range(6000, 6040))
    for i in range(6000, 6040):
        if f.scope_of(i) in scopes:
            assert f.search(f.vectors[i], scopes, k=1)[0][0] == f"d{i}"
    assert f.view().index.ann is ann  # kept: the new rows sit in its tail


def test_a_replaced_vector_is_scored_with_its_new_value(small: Fixture):
    q = small.vectors[7]
    assert small.search(q, ["user:b"], k=1)[0][0] == "d7"
    moved = small.vectors.copy()
    moved[7] = -small.vectors[7]
    small.put([7], moved)
    hits = small.search(q, ["user:b"], k=1000)
    assert dict((d, s) for d, s, _c in hits)["d7"] == pytest.approx(-1.0, abs=1e-5)
    assert small.view().index.live == 3000


def test_forget_through_the_memory_erases_the_vector_from_the_cached_index(mem, rstore):
    kept = mem.remember("user:alice", "diet", "vegan")
    for key, value in [("employer", "Acme"), ("pet", "a cat"), ("hobby", "chess"),
                       ("language", "Portuguese")]:  # erasing 1 of 6 rows prunes in place
        mem.remember("user:alice", key, value)
    gone = mem.remember("user:alice", "home_city", "Paris")
    assert gone.item_id in {i.id for i in mem.recall("user:alice", "Paris",
                                                           budget_tokens=500).items}
    index = rstore.adapter.search_index
    view = index.cache.index_for(rstore.adapter.conn, "m1")
    idx = view.index
    assert idx.live == 6
    seq = rstore.adapter.conn.execute("SELECT seq FROM vectors WHERE doc_id=?",
                                      (gone.item_id,)).fetchone()[0]
    row = int(np.flatnonzero(idx._seqs[: idx.size] == seq)[0])
    assert idx._codes[row].any()
    paris = np.frombuffer(rstore.adapter.conn.execute(
        "SELECT vec FROM vectors WHERE doc_id=?", (gone.item_id,)).fetchone()[0], dtype="<f4")
    mem.forget(gone.item_id)
    with index.read("m1") as snap:
        hits = snap.vectors(paris.copy(), ["user:alice"], 10, -1.0)
    assert gone.item_id not in {h[0] for h in hits} and kept.item_id in {h[0] for h in hits}
    assert index.cache.index_for(rstore.adapter.conn, "m1").index is idx  # pruned in place
    assert idx.live == 5 and not idx._codes[row].any() and idx._seqs[row] == -1


@pytest.mark.parametrize("k,min_score", [(10, -1.0), (50, 0.15), (50, 0.6)])
def test_pruning_by_the_quantisation_bound_reads_fewer_rows_and_returns_the_same_hits(
        small: Fixture, monkeypatch: pytest.MonkeyPatch, k: int, min_score: float):
    view, scopes = small.view(), ["user:a", "user:b"]
    fetched: list[int] = []
    fetch = vecindex.IndexView._fetch

    def counting(self, seqs):
        fetched.append(len(seqs))
        return fetch(self, seqs)

    monkeypatch.setattr(vecindex.IndexView, "_fetch", counting)
    for q in queries(small.vectors, 20, seed=7):
        with small.index.read(MEMORY) as snap:
            pruned = snap.vectors(q, scopes, k, min_score)
        with monkeypatch.context() as m:  # every candidate read back, as before pruning
            m.setattr(vecindex.VectorIndex, "prune", lambda self, q, rows, k, s: rows)
            with small.index.read(MEMORY) as snap:
                full = snap.vectors(q, scopes, k, min_score)
        assert pruned == full
    with_prune, without = fetched[0::2], fetched[1::2]
    assert sum(with_prune) < 0.8 * sum(without)
    assert view.index.prune(queries(small.vectors, 1)[0], np.arange(0), k, min_score).size == 0
