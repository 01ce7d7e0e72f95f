"""KickSide ``item.revised`` for a new priority of the same claim: remember, correct and
observe take a priority (0..100, higher is more important); restating a current claim with
another priority writes ``item.revised`` carrying it, and the read model (items, inspect,
history, a rebuild) shows the new priority. Both backends; also over HTTP."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest
from service.kickside_kit import T0, store  # noqa: F401

from remem.errors import InvalidInput
from remem.testing.served import Server

ALICE = "user:alice"


@pytest.fixture
def mem(store):
    return store.create_memory("m1")


def events(mem, type_: str) -> list[dict]:
    return [e["data"] for e in mem.store.events(mem.id) if e["type"] == type_]


def test_a_new_priority_of_the_same_claim_revises_the_item(store, mem):
    first = mem.remember(ALICE, "diet", "vegetarian", priority=3)
    assert events(mem, "item.added")[0]["priority"] == 3
    assert mem.get(first.item_id).priority == 3
    again = mem.remember(ALICE, "diet", "Vegetarian", priority=8)  # same claim
    assert (again.outcome, again.item_id, again.revision) == ("duplicate", first.item_id, 2)
    (revised,) = events(mem, "item.revised")
    assert revised["item_id"] == first.item_id and revised["priority"] == 8
    assert "payload_id" not in revised  # same text: the payload stays
    assert mem.get(first.item_id).priority == 8
    assert mem.get(first.item_id).value == "vegetarian"
    assert mem.inspect(ALICE, "diet").current[0].priority == 8
    assert mem.items(scope=ALICE).items[0].to_dict()["priority"] == 8
    same = mem.remember(ALICE, "diet", "vegetarian", priority=8)  # nothing new: seen again
    assert same.revision == 2 and len(events(mem, "item.revised")) == 1
    unsaid = mem.remember(ALICE, "diet", "vegetarian")  # no priority: it is kept
    assert unsaid.revision == 2 and mem.get(first.item_id).priority == 8
    store.rebuild("m1")
    assert mem.get(first.item_id).priority == 8
    assert mem.owner.verify()["ok"]


def test_a_new_text_and_priority_revise_both_in_one_event(mem):
    first = mem.remember(ALICE, "diet", "vegetarian", source={"text": "I'm vegetarian."})
    mem.remember(ALICE, "diet", "vegetarian", priority=5,
                 source={"text": "As I said, vegetarian."})
    (revised,) = events(mem, "item.revised")
    assert revised["priority"] == 5 and "payload_id" in revised
    view = mem.get(first.item_id)
    assert (view.priority, view.quote) == (5, "As I said, vegetarian.")


def test_a_correction_and_a_new_value_carry_their_own_priority(mem):
    mem.remember(ALICE, "home_city", "Paris", priority=2, valid_at=T0)
    moved = mem.remember(ALICE, "home_city", "Lyon", priority=9,
                         valid_at=T0 + timedelta(days=1))
    assert mem.get(moved.item_id).priority == 9
    fixed = mem.correct(ALICE, "home_city", "Lille", expected_revision=moved.revision,
                        priority=4)
    assert mem.get(fixed.item_id).priority == 4
    assert events(mem, "item.revised") == []


def test_observed_facts_take_the_observations_priority(mem):
    mem.observe(ALICE, "I live in Lyon.", occurred_at=T0, priority=4)
    (item,) = mem.items(scope=ALICE, key="home_city").items
    assert item.priority == 4
    mem.observe(ALICE, "I live in Lyon.", occurred_at=T0 + timedelta(hours=2), priority=9)
    (same,) = mem.items(scope=ALICE, key="home_city").items  # revised, not an occurrence
    assert same.item_id == item.item_id and same.priority == 9
    assert [r["priority"] for r in events(mem, "item.revised")] == [9]


@pytest.mark.parametrize("bad", [-1, 101, 2.5, True, "high"])
def test_a_bad_priority_is_invalid_input_and_writes_nothing(mem, bad):
    head = mem.store.head_seq(mem.id)
    with pytest.raises(InvalidInput) as err:
        mem.remember(ALICE, "diet", "vegan", priority=bad)
    assert err.value.details["field"] == "priority"
    with pytest.raises(InvalidInput):
        mem.observe(ALICE, "I am vegan.", priority=bad)
    assert mem.store.head_seq(mem.id) == head


def test_priority_over_http(store_url, mem):
    writer, _ = mem.create_token("writer", ALICE)
    with Server(store_url, startup_s=60) as srv, httpx.Client(
            base_url=srv.base, timeout=30,
            headers={"Authorization": f"Bearer {writer}"}) as http:
        body = {"scope": ALICE, "key": "diet", "value": "vegetarian"}
        r = http.post("/memory/m1/items", json={**body, "priority": 3})
        assert r.status_code == 200, r.text
        item_id = r.json()["item_id"]
        assert http.post("/memory/m1/items", json={**body, "priority": 101}).status_code == 422
        r = http.post("/memory/m1/items", json={**body, "priority": 6})
        assert r.json()["outcome"] == "duplicate"
        assert http.get(f"/memory/m1/items/{item_id}").json()["priority"] == 6
        hist = http.get(f"/memory/m1/items/{item_id}/history").json()
        assert [e["data"]["priority"] for e in hist["events"]
                if e["type"] == "item.revised"] == [6]
