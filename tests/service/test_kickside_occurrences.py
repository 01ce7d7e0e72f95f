"""KickSide occurrences (memory config ``occurrences: true``): the same claim stated again
later by a conversation is a new item with its own valid_at, linked to the claim; recall and
profile show the claim once; forget erases every occurrence. Both backends."""

from __future__ import annotations

from datetime import timedelta

import pytest
from service.kickside_kit import T0, store  # noqa: F401

ALICE = "user:alice"


@pytest.fixture
def mem(store):
    return store.create_memory("m1", config={"occurrences": True})


def say(mem, conv: str, turn_id: str, text: str, hours: int) -> None:
    mem.capture(ALICE, "chat", conv, [{"id": turn_id, "role": "user", "text": text,
                                       "occurred_at": (T0 + timedelta(hours=hours)).isoformat()}])


def lyon_items(mem):
    return sorted(mem.items(scope=ALICE, key="home_city").items, key=lambda i: i.valid_at)


def test_a_later_statement_is_a_new_occurrence_of_the_same_claim(mem):
    say(mem, "conv1", "t1", "I live in Lyon.", 1)
    say(mem, "conv2", "t9", "I live in Lyon.", 3)
    first, second = lyon_items(mem)
    assert first.claim_id == second.claim_id and first.item_id != second.item_id
    assert first.status == second.status == "current"
    assert second.valid_at.startswith((T0 + timedelta(hours=3)).strftime("%Y-%m-%dT%H"))
    added = [e["data"] for e in mem.history(second.item_id)["events"]
             if e["type"] == "item.added" and e["data"]["item_id"] == second.item_id]
    assert added[0]["occurrence_of"] == first.item_id
    hit = mem.recall(ALICE, "where does alice live, Lyon", budget_tokens=400)
    assert [i.value for i in hit.items].count("Lyon") == 1
    prof = mem.profile(ALICE)
    assert [i["value"] for i in prof.items].count("Lyon") == 1
    assert mem.owner.verify()["ok"]


def test_an_earlier_or_explicit_restatement_is_only_seen_again(mem):
    say(mem, "conv1", "t1", "I live in Lyon.", 3)
    say(mem, "conv2", "t2", "I live in Lyon.", 2)  # not later than the newest statement
    mem.remember(ALICE, "home_city", "Lyon")  # the owner: seen again
    (only,) = lyon_items(mem)
    assert only.seen_count == 3


def test_consolidation_keeps_occurrences_and_forget_erases_them_all(mem):
    say(mem, "conv1", "t1", "I live in Lyon.", 1)
    say(mem, "conv2", "t9", "I live in Lyon.", 3)
    mem.resummarize()
    assert "consolidate" in [r["kind"] for r in mem.run_jobs()]
    first, second = lyon_items(mem)
    assert first.status == second.status == "current"
    report = mem.forget(first.item_id)
    assert set(report.items) >= {first.item_id, second.item_id}
    assert lyon_items(mem) == []
    say(mem, "conv3", "t20", "I live in Lyon.", 5)  # the claim is not learned again
    assert lyon_items(mem) == []
