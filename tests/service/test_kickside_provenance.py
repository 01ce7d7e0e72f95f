"""KickSide events and capture runs: ``item.added`` carries the derive run and provenance,
``provenance.added`` carries host_kind / host_id / event_id, and a capture's derive runs hold
the captured span and the capturing user's identity. Both backends; the ledger verifies and
rebuilds to the same rows."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from service.kickside_kit import T0, store  # noqa: F401

from remem.service.tokens import Tokens

ALICE = "user:alice"


@pytest.fixture
def mem(store):
    return store.create_memory("m1")


def turn(i: str, text: str, hours: int) -> dict:
    return {"id": i, "role": "user", "text": text,
            "occurred_at": (T0 + timedelta(hours=hours)).isoformat()}


def events_of(mem, item_id: str, type_: str) -> list[dict]:
    return [e["data"] for e in mem.history(item_id)["events"] if e["type"] == type_]


def derive_runs(mem) -> list[dict]:
    return sorted((r for r in mem.store.list_runs(mem.id, 50) if r["kind"] == "derive"),
                  key=lambda r: r["started_at"])


def test_a_derived_item_names_its_run_and_where_it_was_said(mem):
    mem.capture(ALICE, "chat", "conv1", [turn("t1", "I live in Lyon.", 1)])
    item = mem.items(scope=ALICE, key="home_city").items[0]
    added = events_of(mem, item.item_id, "item.added")[0]
    run = derive_runs(mem)[0]
    assert added["run_id"] == run["run_id"]
    assert added["provenance"] == [{"host_kind": "chat", "host_id": "conv1",
                                    "event_id": "t1"}]


def test_seen_again_in_another_conversation_records_that_host_and_event(store):
    """With occurrences switched off, a later restatement is provenance of the first item."""
    mem = store.create_memory("m1", config={"occurrences": False})
    mem.capture(ALICE, "chat", "conv1", [turn("t1", "I live in Lyon.", 1)])
    mem.capture(ALICE, "chat", "conv2", [turn("t9", "I live in Lyon.", 3)])
    item = mem.items(scope=ALICE, key="home_city").items[0]
    seen = events_of(mem, item.item_id, "provenance.added")
    assert [(d["host_kind"], d["host_id"], d["event_id"]) for d in seen] == [
        ("chat", "conv2", "t9")]
    assert mem.get(item.item_id).seen_count == 2


def test_an_occurrence_in_another_conversation_names_that_host_and_event(mem):
    """Occurrences are on by default: the later restatement is its own item, and its
    ``item.added`` names the conversation and turn it came from."""
    mem.capture(ALICE, "chat", "conv1", [turn("t1", "I live in Lyon.", 1)])
    mem.capture(ALICE, "chat", "conv2", [turn("t9", "I live in Lyon.", 3)])
    first, later = sorted(mem.items(scope=ALICE, key="home_city").items,
                          key=lambda i: i.valid_at)
    added = events_of(mem, later.item_id, "item.added")
    assert added[-1]["occurrence_of"] == first.item_id
    assert added[-1]["provenance"] == [{"host_kind": "chat", "host_id": "conv2",
                                        "event_id": "t9"}]


def test_an_observed_source_names_its_run_as_the_host(mem):
    mem.observe(ALICE, "I like tea.", source_id="s1", run_id="import-7")
    item = mem.items(scope=ALICE, key="likes").items[0]
    assert events_of(mem, item.item_id, "item.added")[0]["provenance"] == [
        {"host_kind": "observe", "host_id": "import-7", "event_id": "s1"}]


def test_capture_runs_hold_the_captured_span_and_the_frozen_identity(store, mem):
    token, info = mem.create_token("writer", ALICE)
    alice = store.memory("m1", principal=Tokens(store).authenticate(token))
    alice.capture(ALICE, "chat", "conv1", [turn("t1", "I live in Lyon.", 1),
                                           turn("t2", "I like tea.", 2)])
    runs = derive_runs(mem)
    assert len(runs) == 2
    for r in runs:
        cap = r["stats"]["capture"]
        assert cap["span"]["host_kind"] == "chat"
        assert cap["span"]["from_position"] == 0 and cap["span"]["to_position"] == 2
        assert cap["span"]["first_event_id"].endswith("t1")
        assert cap["span"]["last_event_id"].endswith("t2")
        assert cap["identity"] == {"scope": ALICE, "subject": ALICE, "role": "writer",
                                   "token_id": info.token_id}
    assert "Lyon" not in json.dumps([r["stats"] for r in runs])  # ids, never text


def test_the_ledger_with_the_new_fields_verifies_and_rebuilds_to_the_same_rows(store, mem):
    mem.capture(ALICE, "chat", "conv1", [turn("t1", "I live in Lyon.", 1)])
    mem.capture(ALICE, "chat", "conv2", [turn("t9", "I live in Lyon.", 3)])
    before = [i.to_dict() for i in mem.items(scope=ALICE, status="all").items]
    assert store.verify()["ok"]
    store.rebuild("m1")
    assert [i.to_dict() for i in mem.items(scope=ALICE, status="all").items] == before


def test_an_owner_restating_a_claim_with_new_text_revises_the_item(store, mem):
    first = mem.remember(ALICE, "home_city", "Paris", valid_at=T0,
                         source={"id": "a", "text": "I live in Paris."})
    again = mem.remember(ALICE, "home_city", "paris", valid_at=T0 + timedelta(days=1),
                         source={"id": "b", "text": "Paris is where I live now."})
    assert again.item_id == first.item_id and again.outcome == "duplicate"
    assert again.revision == first.revision + 1
    revised = events_of(mem, first.item_id, "item.revised")
    assert len(revised) == 1
    assert mem.store.item(mem.id, first.item_id).payload_id == revised[0]["payload_id"]
    assert mem.get(first.item_id).quote == "Paris is where I live now."
    hit = mem.recall(ALICE, "where I live now", budget_tokens=400)
    assert [i.id for i in hit.items] == [first.item_id]  # the claim once, with its new text
    same = mem.remember(ALICE, "home_city", "Paris", source={"id": "c"})  # no text: seen
    assert same.revision == again.revision
    assert store.verify()["ok"]
    store.rebuild("m1")
    assert mem.get(first.item_id).quote == "Paris is where I live now."
