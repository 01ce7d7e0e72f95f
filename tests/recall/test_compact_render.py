"""Issue 13 point 1: the compact model-facing rendering is what the recall budget counts."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from remem.domain import render
from remem.errors import ResultLimitExceeded
from remem.providers.tokenizers import get_tokenizer

ALICE = "user:alice"
O200K = get_tokenizer("o200k_base")
FACTS = [("home_city", "Lyon", "profile_slot"), ("diet", "pescatarian", "preference"),
         ("employer", "Acme Robotics", "profile_slot"), ("allergies", "peanuts", "fact")]


def _seed(mem) -> None:
    for key, value, kind in FACTS:
        mem.remember(ALICE, key, value, kind=kind)


def test_an_empty_result_is_one_short_status_line(mem) -> None:
    for tokenizer in ("o200k_base", "cl100k_base"):
        r = mem.recall(ALICE, "where does alice live", budget_tokens=1000, tokenizer=tokenizer)
        assert r.items == [] and r.sources == [] and r.status == "succeeded"
        assert r.text == "recall succeeded: nothing found, coverage complete"
        assert get_tokenizer(tokenizer).count(r.text) == r.tokens <= 30


def test_a_short_fact_costs_at_most_25_tokens_and_appears_once(mem) -> None:
    _seed(mem)
    r = mem.recall(ALICE, "home city diet employer allergies", budget_tokens=1000)
    lines = r.text.split("\n")
    assert lines[1] == ALICE and len(lines) == 2 + len(FACTS)
    assert '- home_city: "Lyon" (profile_slot, 2024-01-01)' in lines
    for line in lines[2:]:
        assert O200K.count(line) + 1 <= 25, line  # the line and its newline
    assert r.text.count("Lyon") == 1 and "itm_" not in r.text
    # the program still gets the structured result beside the text, outside the budget
    item = next(i for i in r.items if i.key == "home_city")
    assert item.id.startswith("itm") and item.score > 0 and item.valid_at.startswith("2024-")
    assert json.loads(r.to_json())["items"][0]["id"] == r.items[0].id
    assert O200K.count(r.to_json()) > r.tokens == O200K.count(r.text)


def test_a_source_line_costs_at_most_15_tokens_besides_its_text(mem) -> None:
    mem.observe(ALICE, "My sister Jane lives in Montreal.", source_id="t1")
    r = mem.recall(ALICE, "Montreal sister", budget_tokens=1000)
    assert [s.id for s in r.sources] == ["t1"]
    line = r.text.split("\n")[-1]
    assert line.startswith("- user ") and line.endswith('"My sister Jane lives in Montreal."')
    assert O200K.count(line) + 1 - O200K.count('"My sister Jane lives in Montreal."') <= 15


def test_the_best_item_is_first_and_the_last_one_is_dropped_first(mem) -> None:
    for i in range(12):
        mem.remember(ALICE, f"trip_{i}", f"trip number {i} to the mountains with friends")
    full = mem.recall(ALICE, "mountains trip", budget_tokens=100_000)
    order = [i.id for i in full.items]
    assert len(order) == 12 and not full.truncated
    previous = 0
    for budget in range(30, 400, 17):
        r = mem.recall(ALICE, "mountains trip", budget_tokens=budget)
        got = [i.id for i in r.items]
        assert got == order[:len(got)], budget  # a prefix of the ranking: best first
        assert len(got) >= previous and r.tokens <= budget
        assert r.truncated == (len(got) < 12)
        previous = len(got)
    assert previous == 12


def test_result_limit_exceeded_only_below_the_status_line(mem) -> None:
    _seed(mem)
    truncated_line = "recall partial: budget full, incomplete: facts"
    need = O200K.count(truncated_line)
    assert need <= render.STATUS_LINE_MAX_TOKENS
    r = mem.recall(ALICE, "diet", budget_tokens=need)
    assert r.items == [] and r.truncated and r.text == truncated_line
    assert r.coverage["facts"] == "incomplete" and r.status == "partial"
    for budget in range(need, render.STATUS_LINE_MAX_TOKENS + 1):
        mem.recall(ALICE, "diet", budget_tokens=budget)  # never raises
    with pytest.raises(ResultLimitExceeded) as exc:
        mem.recall(ALICE, "diet", budget_tokens=need - 1)
    assert exc.value.details["required_size"] == need


def test_required_constraints_are_never_dropped_silently(mem) -> None:
    _seed(mem)
    mem.remember("agent:bot", "answer_format", "Always answer in French", kind="rule")
    r = mem.recall([ALICE, "agent:bot"], "answer format", budget_tokens=40)
    assert r.items[0].constraint and r.text.split("\n")[1:3] == [
        "agent:bot", '- constraint answer_format: "Always answer in French" (rule, 2024-01-01)']
    with pytest.raises(ResultLimitExceeded):
        mem.recall([ALICE, "agent:bot"], "answer format", budget_tokens=20)


LINES = st.text(alphabet=st.sampled_from(list("abc xyz東京🐈é\"\\")), min_size=1, max_size=40)


@settings(max_examples=150, deadline=None)
@given(values=st.lists(st.tuples(LINES, st.sampled_from(["user:a", "user:b"]),
                                 st.booleans()), max_size=15),
       budget=st.integers(1, 400))
def test_packing_the_text_never_exceeds_the_budget(values, budget) -> None:
    entries = []
    for i, (value, scope, required) in enumerate(values):
        d = {"id": f"itm_{i}", "key": "k", "value": value, "kind": "rule", "status": "current",
             "scope": scope, "valid_at": "2024-01-01T00:00:00.000000Z", "score": 0.1,
             "sources": []}
        entries.append(render.Entry("constraints" if required else "facts", d,
                                    render.item_line(d, constraint=required), required,
                                    render.item_heading(scope)))
    build = render.recall_builder(basis_seq=1, budget_tokens=budget, tokenizer="o200k_base")
    try:
        out = render.pack(entries, budget=budget, meter=render.TokenMeter(O200K), build=build,
                          measure=render.model_text)
    except ResultLimitExceeded as exc:
        assert exc.details["required_size"] > budget
        assert any(e.required for e in entries) or budget < render.STATUS_LINE_MAX_TOKENS
        return
    assert O200K.count(out.document["text"]) == out.size <= budget
    assert all(e in out.entries for e in entries if e.required)
    assert out.truncated == (len(out.entries) < len(entries))
