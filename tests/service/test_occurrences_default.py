"""Occurrences are on by default (KickSide: "the same claim stated again later is a new item
with its own valid_at"); ``{"occurrences": false}`` switches them off. Every output shows a
claim once — recall, profile, context, inspect, query, KIP and the instantKV slot views — and
a re-stated identical value never fills a slot's history or conflicts (they count claims).
Both backends."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from service.kickside_kit import T0, store  # noqa: F401

from remem.domain.model import Authority
from remem.service.apply import apply_document
from remem.service.slots import MAX_SLOT_HISTORY

ALICE = "user:alice"


@pytest.fixture
def mem(store):
    return store.create_memory("m1")


def said(mem, key: str, value, hours: int):
    """A conversation stating ``value`` (the derive path's authority) ``hours`` after T0."""
    return mem.remember(ALICE, key, value, valid_at=T0 + timedelta(hours=hours),
                        kind="profile_slot", authority=Authority.AUTOMATIC)


def apply(mem, value: str, source_id: str, **changes) -> dict:
    doc = {"entity": ALICE, "attribute": "home_city", "value": value, "kind": "profile_slot",
           "operation": "assert", "source": {"id": source_id, "role": "user"}, **changes}
    return apply_document(mem, json.dumps(doc))["results"][0]


def test_a_later_statement_is_an_occurrence_by_default_and_shown_once_everywhere(mem):
    for hours in (1, 3, 5):
        said(mem, "home_city", "Lyon", hours)
    said(mem, "allergies", "peanuts", 1)
    said(mem, "allergies", "peanuts", 4)
    items = mem.items(scope=ALICE, key="home_city").items
    assert len(items) == 3 and len({i.claim_id for i in items}) == 1
    assert {i.status for i in items} == {"current"}

    def lyons(values) -> int:
        return list(values).count("Lyon")

    assert lyons(i.value for i in mem.recall(ALICE, "where does alice live",
                                             budget_tokens=400).items) == 1
    assert lyons(i["value"] for i in mem.profile(ALICE).items) == 1
    assert lyons(i["value"] for i in mem.context(ALICE, "alice city home").items) == 1
    assert lyons(h["value"] for h in mem.query(ALICE, "where does alice live")) == 1
    seen = mem.inspect(ALICE, "home_city")
    assert (seen.value, len(seen.current), seen.history) == ("Lyon", 1, [])
    assert mem.inspect(ALICE, "allergies").value == ["peanuts"]  # a multi key: once too
    kip = mem.kip({"kip_memory": "2.0", "operation": "recall", "scope": {"task_ref": ALICE},
                   "input": {"query": "where does alice live"}})
    assert [i["text"] for i in kip["result"]["items"]].count("home_city: Lyon") == 1
    slot = mem.slot_inspect("user", "home_city", default_scope=ALICE)
    assert (slot["value"], slot["history"], slot["conflicts"]) == ("Lyon", [], [])
    profile = mem.slot_profile(default_scope=ALICE)["items"]
    assert lyons(i["value"] for i in profile) == 1
    assert lyons(i["value"] for i in mem.slot_context("city", default_scope=ALICE)["items"]) == 1


def test_the_config_switches_occurrences_off(store):
    mem = store.create_memory("m2", config={"occurrences": False})
    said(mem, "home_city", "Lyon", 1)
    later = said(mem, "home_city", "Lyon", 3)
    (only,) = mem.items(scope=ALICE, key="home_city").items
    assert later.item_id == only.item_id and only.seen_count == 2


def test_restated_values_fill_neither_a_slots_history_nor_its_conflicts(mem):
    for hours in (1, 2, 3, 4):
        said(mem, "home_city", "Lyon", hours)  # four occurrences of one claim
    contested = apply(mem, "Paris", "turn-p")
    assert contested["receipt"]["status"] == "conflict"
    slot = mem.slot_inspect("user", "home_city", default_scope=ALICE)
    assert sorted(c["value"] for c in slot["conflicts"]) == ["Lyon", "Paris"]
    rev = slot["revision"]
    fixed = apply(mem, "Lille", "fix-0", operation="correct", expected_revision=rev)
    assert fixed["receipt"]["status"] == "corrected"
    slot = mem.slot_inspect("user", "home_city", default_scope=ALICE)
    assert sorted(h["value"] for h in slot["history"]) == ["Lyon", "Paris"]  # Lyon once
    # the history bound counts claims: Lyon (four items) and Paris leave six places
    for i in range(1, MAX_SLOT_HISTORY - 1):
        rev = mem.slot_inspect("user", "home_city", default_scope=ALICE)["revision"]
        r = apply(mem, f"city {i}", f"fix-{i}", operation="correct", expected_revision=rev)
        assert "receipt" in r, r
    rev = mem.slot_inspect("user", "home_city", default_scope=ALICE)["revision"]
    full = apply(mem, "one more", "fix-full", operation="correct", expected_revision=rev)
    assert full["error"]["code"] == "slot_full"
    assert full["error"]["details"]["bound"] == "history"
    slot = mem.slot_inspect("user", "home_city", default_scope=ALICE)
    assert len(slot["history"]) == MAX_SLOT_HISTORY
