"""Forget, holds and retention on every backend, including the physical promise: once the
erasure report says completed, the erased text is in no database file (dead rows included)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from remem.errors import LegalHoldActive, NotFound

T = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)
SECRET = "Zanzibar-Quokka-7731"
QUOTE = "my secret hideout is Zanzibar-Quokka-7731, tell no one"


def at(days: float) -> datetime:
    return T + timedelta(days=days)


def test_forget_erases_every_version_and_reports_completed(mem):
    old = mem.remember("user:alice", "hideout", SECRET, valid_at=at(0),
                       source={"id": "t1", "text": QUOTE, "role": "user"})
    new = mem.remember("user:alice", "hideout", "Atlantis", valid_at=at(1))
    kept = mem.remember("user:alice", "home_city", "Paris")
    rev = mem.inspect("user:alice", "hideout").revision
    rep = mem.forget(scope="user:alice", key="hideout", expected_revision=rev)
    assert rep.state == "completed"
    assert sorted(rep.items) == sorted([old.item_id, new.item_id])
    assert rep.surfaces["payloads"] == {"erased": 2, "state": "erased"}
    assert all(s["state"] in ("erased", "none") for s in rep.surfaces.values())
    for item_id in (old.item_id, new.item_id):
        with pytest.raises(NotFound):
            mem.get(item_id)
    assert mem.inspect("user:alice", "hideout").state == "forgotten"
    assert mem.get(kept.item_id).value == "Paris"
    assert all(SECRET not in str(e) for e in mem.store.events(mem.id))


def test_a_forgotten_claim_keeps_a_tombstone_and_the_chain_verifies(remem_store):
    mem = remem_store.create_memory("m1")
    r = mem.remember("user:alice", "hideout", SECRET, idempotency_key="req-secret")
    mem.forget(r.item_id)
    replay = mem.remember("user:alice", "hideout", SECRET, idempotency_key="req-secret")
    assert replay.outcome == "forgotten" and replay.item_id is None
    assert mem.inspect("user:alice", "hideout").state == "forgotten"
    assert remem_store.verify()["ok"]
    before = mem.items(status="all").items
    remem_store.rebuild("m1")
    assert mem.items(status="all").items == before


def test_forget_of_one_multi_value_keeps_the_others(mem):
    for v in ("French", "German", "Basque"):
        mem.remember("user:alice", "languages", v)
    rev = mem.inspect("user:alice", "languages").revision
    rep = mem.forget(scope="user:alice", key="languages", value="german", expected_revision=rev)
    assert rep.state == "completed" and len(rep.items) == 1
    assert sorted(mem.inspect("user:alice", "languages").value) == ["Basque", "French"]


def test_a_legal_hold_blocks_forget_until_released(mem):
    r = mem.remember("user:alice", "hideout", SECRET)
    mem.set_legal_hold(r.item_id)
    with pytest.raises(LegalHoldActive) as info:
        mem.forget(r.item_id)
    assert info.value.details["report"]["state"] == "blocked"
    assert mem.get(r.item_id).value == SECRET
    mem.set_legal_hold(r.item_id, False)
    assert mem.forget(r.item_id).state == "completed"


def test_retention_erases_what_is_due_and_skips_held_items(clocked_store, clock):
    mem = clocked_store.create_memory("m1")
    due = mem.remember("user:alice", "hideout", SECRET)
    held = mem.remember("user:alice", "diet", "vegan")
    fresh = mem.remember("user:alice", "home_city", "Paris")
    mem.set_retention(due.item_id, keep_days=1)
    mem.set_retention(held.item_id, keep_days=1)
    mem.set_legal_hold(held.item_id)
    mem.set_retention(fresh.item_id, keep_days=30)
    clock.advance(days=2)
    out = mem.run_retention()
    assert out["erased"] == [due.item_id] and out["blocked"] == [held.item_id]
    assert out["reports"][0]["state"] == "completed"
    with pytest.raises(NotFound):
        mem.get(due.item_id)
    assert mem.get(fresh.item_id).value == "Paris"


def test_erased_text_is_not_in_the_database_files(remem_store, database_bytes):
    mem = remem_store.create_memory("m1")
    for n in range(30):  # neighbours on the same pages, written before and after
        mem.remember(f"user:u{n}", "home_city", f"City number {n}",
                     source={"id": f"a{n}", "text": f"I live in city number {n}"})
    r = mem.remember("user:alice", "hideout", SECRET,
                     source={"id": "t1", "text": QUOTE, "role": "user"})
    mem.remember("user:alice", "hideout", SECRET + " annex", idempotency_key="req-9")
    for n in range(30, 40):
        mem.remember(f"user:u{n}", "home_city", f"City number {n}")
    assert SECRET.encode() in database_bytes()  # the check can see the text at all
    rev = mem.inspect("user:alice", "hideout").revision
    rep = mem.forget(scope="user:alice", key="hideout", expected_revision=rev)
    assert rep.state == "completed" and r.item_id in rep.items
    raw = database_bytes()
    assert SECRET.encode() not in raw
    assert b"secret hideout" not in raw
    assert b"City number 39" in raw  # the rest is still there
    assert mem.inspect("user:u3", "home_city").value == "City number 3"


def test_deleted_memories_leave_no_text_in_the_database_files(remem_store, database_bytes):
    doomed = remem_store.create_memory("doomed")
    kept = remem_store.create_memory("kept")
    doomed.remember("user:alice", "hideout", SECRET, source={"id": "t1", "text": QUOTE})
    kept.remember("user:alice", "home_city", "Paris")
    assert SECRET.encode() in database_bytes()
    remem_store.delete_memory("doomed")
    raw = database_bytes()
    assert SECRET.encode() not in raw and b"secret hideout" not in raw
    assert kept.inspect("user:alice", "home_city").value == "Paris"


def test_forgetting_a_source_removes_its_text_from_the_files(remem_store, database_bytes):
    mem = remem_store.create_memory("m1")
    for n in range(20):
        mem.observe("user:alice", f"small talk number {n}", source_id=f"s{n}", derive=False)
    mem.observe("user:alice", QUOTE, source_id="secret", derive=False)
    assert SECRET.encode() in database_bytes()
    out = mem.forget_source("secret")
    assert out["state"] == "completed"
    found = mem.recall("user:alice", "secret hideout", budget_tokens=1500).sources
    assert all(s.id != "secret" for s in found)
    assert SECRET.encode() not in database_bytes()
    assert remem_store.verify()["ok"]  # the chain entry stays, without its text
