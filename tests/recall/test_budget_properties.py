"""Property tests: the serialised result never exceeds the budget; ``truncated`` is exact."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import remem
from remem.domain import render
from remem.errors import ResultLimitExceeded
from remem.providers.tokenizers import get_tokenizer

TEXT = st.text(alphabet=st.sampled_from(list("abcdef xyz東京寿司🐈é\"\\\n{}")), min_size=1,
               max_size=60)


def _entries(draw_data: list[tuple[str, str, bool]]) -> list[render.Entry]:
    out = []
    for i, (value, channel, required) in enumerate(draw_data):
        d = {"id": f"itm_{i}", "key": "k", "value": value, "kind": "rule", "status": "current",
             "scope": "agent:a", "valid_at": "2024-01-01T00:00:00.000000Z", "score": 0.1,
             "sources": []}
        out.append(render.Entry(channel, d, render.item_line(d, constraint=required), required))
    return out


@settings(max_examples=300, deadline=None)
@given(data=st.lists(st.tuples(TEXT, st.sampled_from(["facts", "sources"])), max_size=25),
       required_share=st.floats(0, 0.3), budget=st.integers(1, 3000),
       tokenizer=st.sampled_from(["o200k_base", "cl100k_base"]))
def test_pack_never_exceeds_the_budget_and_truncated_is_exact(data, required_share, budget,
                                                             tokenizer) -> None:
    n_req = int(len(data) * required_share)
    entries = _entries([(v, c, i < n_req) for i, (v, c) in enumerate(data)])
    tok = get_tokenizer(tokenizer)
    build = render.recall_builder(basis_seq=7, budget_tokens=budget, tokenizer=tokenizer)
    try:
        out = render.pack(entries, budget=budget, meter=render.TokenMeter(tok), build=build)
    except ResultLimitExceeded as exc:
        required = [e for e in entries if e.required]
        coverage = {c: "complete" for c in render.RECALL_CHANNELS}
        coverage.update({e.channel: "incomplete" for e in entries if not e.required})
        minimal = build(required, len(required) < len(entries), coverage)
        assert tok.count(render.serialise(minimal)) == exc.details["required_size"] > budget
        return
    assert tok.count(out.serialised) == out.size <= budget
    kept = {id(e) for e in out.entries}
    assert all(id(e) in kept for e in entries if e.required)
    left_out = [e for e in entries if id(e) not in kept]
    assert out.truncated == bool(left_out) == out.document["truncated"]
    for channel in render.RECALL_CHANNELS:
        incomplete = any(e.channel == channel for e in left_out)
        assert out.coverage[channel] == ("incomplete" if incomplete else "complete")


@settings(max_examples=200, deadline=None)
@given(values=st.lists(TEXT, max_size=20), budget=st.integers(128, 4000))
def test_byte_budgets_are_bytes(values, budget) -> None:
    entries = _entries([(v, "facts", False) for v in values])
    out = render.pack(entries, budget=budget, meter=render.ByteMeter(),
                      build=render.items_builder(max_bytes=budget), channels=("facts",))
    assert len(out.serialised.encode()) == out.size <= budget
    assert out.truncated == (len(out.entries) < len(entries))


WORDS = st.sampled_from(["lake", "東京", "寿司", "🐈", "café", "mountain", "trip", "red",
                         "bicycle", "Paris", "de", "la"])


@pytest.mark.slow
@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(items=st.lists(st.tuples(st.sampled_from(["user:a", "user:b", "agent:x"]),
                                st.sampled_from(["fact", "rule", "preference"]),
                                st.lists(WORDS, min_size=1, max_size=8)), min_size=1,
                      max_size=12),
       query=st.lists(WORDS, min_size=1, max_size=4), budget=st.integers(1, 2500),
       tokenizer=st.sampled_from(["o200k_base", "cl100k_base"]))
def test_recall_over_random_items_and_budgets(local_embedder, items, query, budget,
                                              tokenizer) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = remem.open(Path(tmp) / "p.db")
        try:
            mem = store.create_memory("p")
            for i, (scope, kind, words) in enumerate(items):
                mem.remember(scope, f"note_{i}", " ".join(words), kind=kind)
            scopes, q = ["user:a", "agent:x"], " ".join(query)
            full = mem.recall(scopes, q, budget_tokens=1_000_000, tokenizer=tokenizer)
            assert not full.truncated
            assert {i.scope for i in full.items} <= set(scopes)
            try:
                r = mem.recall(scopes, q, budget_tokens=budget, tokenizer=tokenizer)
            except ResultLimitExceeded:
                return
            assert get_tokenizer(tokenizer).count(r.text) == r.tokens <= budget
            got, eligible = {i.id for i in r.items}, {i.id for i in full.items}
            assert got <= eligible
            assert r.truncated == (got != eligible)
            assert {i.id for i in full.items if i.constraint} <= got
        finally:
            store.close()
