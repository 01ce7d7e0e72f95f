"""MemoryProvider: each step injects current facts, skills and lessons once per conversation."""

from __future__ import annotations

import threading

import pytest
from conftest import AGENT, OTHER, USER

from remem.agent import MemoryProvider
from remem.agent.provider import HEADER, PROVIDED_KINDS
from remem.providers.registry import build_tokenizer

STEPS = ["what is my dog called?", "tell me about my dog Rex", "miles to kilometres?",
         "how far is the Tour du Mont Blanc in miles?", "book a trip for my dog and me",
         "what is my dog called?"]


@pytest.fixture
def provider(seeded):
    memory, _ = seeded
    return MemoryProvider(memory, user_scope=USER, agent_scope=AGENT, budget_tokens=300)


def test_the_provider_never_injects_the_same_id_twice(provider):
    seen: list[str] = []
    for text in STEPS:
        step = provider.recall("c1", text)
        assert not set(step.ids) & set(seen), f"re-injected at {text!r}"
        seen += step.ids
    assert len(seen) == len(set(seen)) >= 3
    assert provider.injected("c1") == frozenset(seen)
    assert provider.recall("c1", STEPS[0]).items == ()


def test_it_injects_current_facts_skills_and_lessons_of_the_bound_scopes(provider, seeded):
    memory, ids = seeded
    items = [i for text in STEPS for i in provider.recall("c1", text).items]
    assert {i.kind for i in items} <= set(PROVIDED_KINDS)
    assert {i.scope for i in items} <= {USER, AGENT}
    got = {i.id for i in items}
    assert {ids[(USER, "dog_name")], ids[(AGENT, "unit_conversion")]} <= got
    assert ids[(OTHER, "dog_name")] not in got
    assert not got & {ids[(AGENT, "tone")], ids[(USER, "home_city")], ids[(USER, "diet")]}


def test_superseded_items_are_not_injected(provider, seeded):
    memory, ids = seeded
    memory.remember(USER, "dog_name", "Max")
    step = provider.recall("c1", "what is my dog called?")
    values = {(i.key, i.value) for i in step.items}
    assert ("dog_name", "Max") in values and ("dog_name", "Rex") not in values


def test_conversations_are_kept_apart(provider):
    first = provider.recall("c1", "what is my dog called?")
    assert first.ids
    assert provider.recall("c1", "what is my dog called?").ids == []
    assert provider.recall("c2", "what is my dog called?").ids == first.ids
    provider.end("c1")
    assert provider.recall("c1", "what is my dog called?").ids == first.ids


def test_the_step_text_fits_the_budget_and_the_rest_comes_later(memory):
    for n in range(12):
        memory.remember(USER, f"trip_{n}", f"Trip number {n} to the mountains with the dog",
                        kind="fact")
    provider = MemoryProvider(memory, user_scope=USER, budget_tokens=60)
    tok = build_tokenizer()
    first = provider.recall("c1", "trips to the mountains with the dog")
    assert first.text.startswith(HEADER) and first.truncated
    assert 0 < len(first.items) < 12
    assert first.tokens == tok.count(first.text) <= 60
    total = set(first.ids)
    for _ in range(12):
        step = provider.recall("c1", "trips to the mountains with the dog")
        assert step.tokens <= 60 and not total & set(step.ids)
        total |= set(step.ids)
    assert len(total) == 12


def test_blank_input_injects_nothing(provider):
    step = provider.recall("c1", "   ")
    assert step.items == () and step.text == "" and step.tokens == 0


def test_concurrent_steps_of_one_conversation_never_share_an_id(provider):
    results: list[list[str]] = []

    def step():
        results.append(provider.recall("c1", "what is my dog called?").ids)

    threads = [threading.Thread(target=step) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    flat = [i for ids in results for i in ids]
    assert flat and len(flat) == len(set(flat))
