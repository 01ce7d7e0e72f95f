"""The query vector is embedded on a worker thread beside the full-text and key searches and
remembered per (model, text); token counts of short texts are remembered by hash."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from remem.errors import EmbeddingMismatch
from remem.providers.registry import ProviderRegistry
from remem.providers.tokenizers import COUNT_CACHE_MAX, get_tokenizer
from remem.service import query_vectors
from remem.service.query_vectors import QueryVectors


def test_a_query_vector_is_computed_off_the_callers_thread_and_then_remembered():
    calls: list[str] = []

    def compute(text: str) -> np.ndarray:
        calls.append(threading.current_thread().name)
        return np.ones(4, dtype=np.float32)

    qv = QueryVectors()
    first = qv.start(("m", 4), "hello", compute)()
    again = qv.start(("m", 4), "hello", compute)()
    assert len(calls) == 1 and calls[0].startswith("remem-query")
    assert again is first and not again.flags.writeable
    qv.start(("other-model", 4), "hello", compute)()
    assert len(calls) == 2  # another model is another vector


def test_errors_reach_the_caller_and_nothing_is_remembered():
    qv = QueryVectors()

    def fail(text: str) -> np.ndarray:
        raise EmbeddingMismatch("model changed")

    with pytest.raises(EmbeddingMismatch):
        qv.start(("m", 4), "q", fail)()
    calls = []
    assert qv.start(("m", 4), "q", lambda t: calls.append(t))() is None  # None: not cached
    assert qv.start(("m", 4), "q", lambda t: calls.append(t))() is None
    assert calls == ["q", "q"]


def test_the_cache_keeps_the_most_recent_queries():
    qv = QueryVectors(max_size=2)
    n = []

    def compute(text: str) -> np.ndarray:
        n.append(text)
        return np.zeros(2, dtype=np.float32)

    for t in ("a", "b", "a", "c", "a", "b"):
        qv.start(("m", 2), t, compute)()
    assert n == ["a", "b", "c", "b"]  # "a" stayed (used again), "b" was evicted by "c"


def test_recall_reuses_the_query_vector_of_a_repeated_query(mem, monkeypatch):
    mem.remember("user:a", "home_city", "Lyon")
    emb = mem.ctx.embedding
    real = emb.query_vector
    seen: list[str] = []
    monkeypatch.setattr(emb, "query_vector", lambda t, r: (seen.append(t), real(t, r))[1])
    query = "where does the user live, asked once per test run 7f3a"
    a = mem.recall(["user:a"], query, budget_tokens=200)
    b = mem.recall(["user:a"], query, budget_tokens=200)
    assert seen == [query]
    assert a.to_json() == b.to_json() and a.items[0].value == "Lyon"


def test_a_remembered_query_vector_never_hides_a_model_change(mem, rstore, remote_service):
    url, _ = remote_service
    mem.remember("user:a", "home_city", "Paris")
    query = "home city, asked before the model changed 91c2"
    # limit 1: the item is found by text, so no key vectors are embedded (they check too)
    assert mem.recall(["user:a"], query, budget_tokens=200, limit=1).items  # vector kept
    rstore.providers = ProviderRegistry.from_mapping({"bow": {"type": "openai",
                                                              "base_url": url}})
    rstore.update_config("m1", {"embedding": {"provider": "bow", "model": "bag-of-words",
                                              "dimensions": 64}})
    with pytest.raises(EmbeddingMismatch):
        rstore.memory("m1").recall(["user:a"], query, budget_tokens=200, limit=1)


def test_cached_token_counts_equal_fresh_ones_and_hold_no_text():
    tok = get_tokenizer("o200k_base")
    texts = [f"- likes: \"hiking near quiet lakes {i}\" (preference, 2024-01-01)"
             for i in range(50)] + ["user:alice", "", "x" * 600]
    first = [tok.count(t) for t in texts]
    assert [tok.count(t) for t in texts] == first
    assert first == [len(tok._encoding.encode_ordinary(t)) for t in texts]
    assert all(isinstance(k[0], int) for k in tok._counts)  # (hash, length): no text kept
    assert len(tok._counts) <= COUNT_CACHE_MAX


def test_rows_read_while_the_query_is_embedded_are_not_shown_after_a_change(mem, monkeypatch):
    """The first snapshot preloads the text candidates' rows; a write that lands before the
    main snapshot (here: a forget while the query is embedded) makes recall read them again."""
    mem.remember("user:a", "home_city", "Lyon")
    kept = mem.remember("user:a", "pets", "a cat called Mochi")
    gone = mem.remember("user:a", "pets", "a dog called Rex")
    emb = mem.ctx.embedding
    real = emb.query_vector

    def forget_then_embed(text, recorded):
        mem.forget(gone.item_id)  # waits for the first snapshot's lock, then commits
        return real(text, recorded)

    monkeypatch.setattr(emb, "query_vector", forget_then_embed)
    monkeypatch.setattr(query_vectors, "second_core_free", lambda: True)  # overlap + preload
    r = mem.recall(["user:a"], "pets cat dog called 5be1", budget_tokens=300)
    values = [i.value for i in r.items]
    assert "a dog called Rex" not in values and "a cat called Mochi" in values
    assert r.basis_seq == mem.status()["head_seq"]
    assert kept.item_id in {i.id for i in r.items}


def test_overlap_is_decided_from_the_environment_or_the_usable_cpus():
    assert query_vectors.decide_overlap({}, 2) is True
    assert query_vectors.decide_overlap({}, 1) is False
    assert query_vectors.decide_overlap({"REMEM_QUERY_OVERLAP": "off"}, 8) is False
    assert query_vectors.decide_overlap({"REMEM_QUERY_OVERLAP": "on"}, 1) is True
    assert query_vectors.decide_overlap({"REMEM_QUERY_OVERLAP": "auto"}, 4) is True


def test_overlap_is_decided_once_per_process_not_per_recall(monkeypatch):
    monkeypatch.setattr(query_vectors, "_overlap", None)
    monkeypatch.setenv("REMEM_QUERY_OVERLAP", "off")
    assert query_vectors.second_core_free() is False
    monkeypatch.setenv("REMEM_QUERY_OVERLAP", "on")  # read once: a later change is not seen
    monkeypatch.setattr(query_vectors.os, "getloadavg", lambda: 1 / 0)  # and no load reads
    assert query_vectors.second_core_free() is False


def test_work_chained_on_the_vector_runs_on_the_worker_even_for_a_remembered_vector():
    threads: list[str] = []

    def then(vec: np.ndarray) -> float:
        threads.append(threading.current_thread().name)
        return float(vec.sum())

    qv = QueryVectors()
    compute = lambda text: np.ones(4, dtype=np.float32)  # noqa: E731
    first, extra = qv.start_then(("m", 4), "hi", compute, then)()
    again, extra2 = qv.start_then(("m", 4), "hi", compute, then)()
    assert (extra, extra2) == (4.0, 4.0) and again is first
    assert len(threads) == 2 and all(t.startswith("remem-query") for t in threads)
    vec, none = qv.start_then(("m", 4), "hi", compute, then, background=False)()
    assert vec is first and none is None and len(threads) == 2  # the caller does it itself


def test_a_failing_chained_step_costs_only_its_result_not_the_vector():
    def then(vec: np.ndarray) -> float:
        raise IndexError("rows changed under it")

    qv = QueryVectors()
    vec, extra = qv.start_then(("m", 4), "hi", lambda t: np.ones(4, np.float32), then)()
    assert extra is None and vec is not None and qv.start(("m", 4), "hi", lambda t: 1 / 0)() \
        is vec
