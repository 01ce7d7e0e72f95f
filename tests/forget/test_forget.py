"""Forget for real (issue 3): cascade, tombstones, erasure report, raw bytes, archive/restore,
retention with a fixed clock, legal hold, memory deletion. Real SQLite files throughout."""

from __future__ import annotations

import json
import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest

import remem
from remem.domain.model import Authority
from remem.errors import LegalHoldActive, PermissionDenied, RevisionMismatch
from remem.service.apply import apply_document
from tests.conftest import T0

U = "user:maya"


def raw_bytes(path: Path) -> bytes:
    """Every byte of the database file and its WAL/SHM side files, as stored on disk,
    lower-cased: full-text segments hold case-folded terms, not the original spelling."""
    data = b""
    for suffix in ("", "-wal", "-shm", "-journal"):
        p = Path(str(path) + suffix)
        if p.exists():
            data += p.read_bytes()
    return data.lower()


def assert_sound(store: remem.RememStore, mid: str = "m1") -> None:
    """verify passes and rebuild gives identical read-model rows."""
    assert store.verify()["ok"]
    before = store.adapter.dump(mid)
    store.rebuild(mid)
    assert store.adapter.dump(mid) == before


@pytest.fixture
def mem(fixed_store):
    return fixed_store.create_memory("m1")


def test_forget_by_key_erases_the_whole_supersession_chain(fixed_store, mem, db_path):
    mem.remember(U, "home_city", "Quxbridge-Alpha", valid_at=T0,
                 source={"id": "t1", "text": "I live in Quxbridge-Alpha."})
    mem.remember(U, "home_city", "Quxbridge-Beta", valid_at=T0 + timedelta(days=1))
    mem.remember(U, "home_city", "Quxbridge-Gamma", valid_at=T0 + timedelta(days=2))
    i = mem.inspect(U, "home_city")
    assert [h.value for h in i.history] == ["Quxbridge-Beta", "Quxbridge-Alpha"]

    report = mem.forget(scope=U, key="home_city", expected_revision=i.revision)

    assert report.state == "completed"
    assert len(report.items) == 3
    assert report.surfaces["payloads"] == {"erased": 3, "state": "erased"}
    after = mem.inspect(U, "home_city")
    assert (after.state, after.value, after.history, after.conflicts) == ("forgotten", None, [], [])
    data = raw_bytes(db_path)  # the store is still open: its WAL counts too
    for word in (b"quxbridge", b"alpha", b"gamma"):
        assert word not in data
    assert_sound(remem.open(db_path))


def test_forget_cascades_through_a_merge(fixed_store, mem):
    from remem.domain.decision import Judgement
    from remem.domain.model import Verdict

    a = mem.remember(U, "employer", "Zorblex Ltd", valid_at=T0)
    b = mem.remember(U, "employer", "Zorblex Limited", valid_at=T0 + timedelta(days=1),
                     authority=Authority.AUTOMATIC, judgement=Judgement(Verdict.MERGE))
    assert b.outcome == "merged"
    assert mem.get(a.item_id).status == "superseded"

    report = mem.forget(b.item_id)

    assert set(report.items) == {a.item_id, b.item_id}
    assert mem.inspect(U, "employer").state == "forgotten"
    assert_sound(fixed_store)


def test_forgetting_one_value_of_a_multi_key_keeps_the_others(fixed_store, mem):
    mem.remember(U, "allergies", "peanuts")
    keep = mem.remember(U, "allergies", "shellfish")
    rev = mem.inspect(U, "allergies").revision

    report = mem.forget(scope=U, key="allergies", value="PEANUTS ", expected_revision=rev)

    assert report.state == "completed" and len(report.items) == 1
    i = mem.inspect(U, "allergies")
    assert i.state == "current" and i.value == ["shellfish"]
    assert mem.get(keep.item_id).value == "shellfish"
    assert_sound(fixed_store)


def test_forget_by_key_requires_the_current_revision(mem):
    mem.remember(U, "diet", "vegan")
    with pytest.raises(RevisionMismatch) as e:
        mem.forget(scope=U, key="diet", expected_revision=7)
    assert e.value.details["current_revision"] == 1
    assert mem.inspect(U, "diet").value == "vegan"


def test_a_tombstoned_claim_is_not_learned_again_by_replay_or_extraction(fixed_store, mem):
    proposal = {"entity": U, "attribute": "diet", "value": "pescatarian", "kind": "preference",
                "operation": "assert",
                "source": {"id": "turn-9", "text": "I'm pescatarian.", "role": "user",
                           "occurred_at_ms": 1704110400000}}
    first = apply_document(mem, json.dumps(proposal))
    assert first["results"][0]["receipt"]["status"] == "created"
    mem.forget(first["results"][0]["receipt"]["item_id"])
    head = fixed_store.adapter.head_seq("m1")

    replay = apply_document(mem, json.dumps(proposal))
    auto = mem.remember(U, "diet", "Pescatarian", authority=Authority.AUTOMATIC,
                        source={"id": "turn-10", "role": "user"})

    assert replay["results"][0]["receipt"]["status"] == "forgotten"
    assert auto.outcome == "forgotten" and auto.item_id is None
    assert fixed_store.adapter.head_seq("m1") == head  # nothing written
    assert mem.inspect(U, "diet").state == "forgotten"


def test_an_explicit_owner_restatement_with_a_new_source_is_learned(fixed_store, mem):
    r = mem.remember(U, "diet", "vegan", source={"id": "s1"})
    mem.forget(r.item_id)
    again = mem.remember(U, "diet", "vegan", source={"id": "s2", "text": "I'm vegan again."})
    assert again.outcome == "created"
    assert mem.inspect(U, "diet").value == "vegan"
    # the same source id as the forgotten statement is a replay, not a restatement
    replay = mem.remember(U, "diet", "vegan", source={"id": "s1"})
    assert replay.outcome in ("forgotten", "duplicate")
    assert_sound(fixed_store)


def test_forget_redacts_the_source_text_that_contained_it(fixed_store, mem, db_path):
    mem.observe(U, "my number is 555-0199-QWZ, call me anytime", source_id="turn-3",
                occurred_at=T0)
    r = mem.remember(U, "phone_number", "555-0199-QWZ", valid_at=T0,
                     source={"id": "turn-3", "text": "my number is 555-0199-QWZ"})
    report = mem.forget(r.item_id)
    assert report.surfaces["sources"]["state"] == "erased"
    assert report.surfaces["full_text"]["erased"] >= 1
    assert report.state == "completed"
    assert fixed_store.adapter.source("m1", "turn-3")["text"] is None
    assert fixed_store.verify()["ok"]  # the source chain still verifies without the payload
    assert b"qwz" not in raw_bytes(db_path)  # store still open: WAL and FTS segments count
    fixed_store.close()
    assert b"qwz" not in raw_bytes(db_path)


def test_recall_no_longer_finds_a_forgotten_value(fixed_store, mem):
    r = mem.remember(U, "pet_name", "Snorkelwhisk", valid_at=T0)
    assert any(i.value == "Snorkelwhisk" for i in mem.recall(U, "Snorkelwhisk",
                                                              budget_tokens=400).items)
    mem.forget(r.item_id)
    res = mem.recall(U, "Snorkelwhisk", budget_tokens=400)
    assert res.items == [] and res.sources == []


def test_pinned_profile_renders_that_included_it_are_dropped(fixed_store, mem):
    r = mem.remember(U, "response_style", "terse-flibber", kind="preference")
    p1 = mem.profile([U], max_bytes=4096, activation_id="act-1")
    assert "terse-flibber" in p1.to_json()
    report = mem.forget(r.item_id)
    assert report.surfaces["pinned_profiles"] == {"erased": 1, "state": "erased"}
    p2 = mem.profile([U], max_bytes=4096, activation_id="act-1")
    assert "terse-flibber" not in p2.to_json()


def test_forget_memory_authority_refuses_other_scopes_and_agent_rules(mem):
    rule = mem.remember("agent:bot", "units", "metric", kind="rule")
    other = mem.remember("user:other", "diet", "vegan")
    mine = mem.remember(U, "diet", "vegan")
    with pytest.raises(PermissionDenied):
        mem.forget(rule.item_id, caller_scope="agent:bot")
    with pytest.raises(PermissionDenied):
        mem.forget(other.item_id, caller_scope=U)
    assert mem.forget(mine.item_id, caller_scope=U).state == "completed"
    assert mem.get(rule.item_id).value == "metric"


def test_archive_hides_and_restore_brings_back(fixed_store, mem):
    r = mem.remember(U, "hobby_note", "kite surfing", valid_at=T0)
    mem.archive(r.item_id)
    assert mem.items(scope=U).items == []
    assert mem.recall(U, "kite surfing", budget_tokens=400).items == []
    assert mem.get(r.item_id).value == "kite surfing"  # text stays
    events = [e["type"] for e in fixed_store.adapter.events("m1")]
    assert "item.archived" in events

    out = mem.restore(r.item_id)

    assert out["status"] == "current"
    assert [v.item_id for v in mem.items(scope=U).items] == [r.item_id]
    assert any(i.id == r.item_id for i in mem.recall(U, "kite surfing", budget_tokens=400).items)
    assert_sound(fixed_store)


def test_retention_erases_on_schedule_with_a_fixed_clock(fixed_store, mem, clock):
    short = mem.remember(U, "temp_code", "X9-KLAXON")
    mem.set_retention(short.item_id, keep_days=3)
    long_ = mem.remember(U, "diet", "vegan")
    assert mem.run_retention()["erased"] == []

    clock.advance(days=4)
    out = mem.run_retention()

    assert out["erased"] == [short.item_id]
    assert mem.inspect(U, "temp_code").state == "forgotten"
    assert mem.get(long_.item_id).value == "vegan"
    actors = {e["actor"] for e in fixed_store.adapter.events("m1") if e["type"] == "item.forgotten"}
    assert actors == {"system:retention"}
    assert_sound(fixed_store)


def test_memory_default_keep_days_applies_to_every_item(db_path, clock):
    store = remem.open(db_path, clock=clock)
    m = store.create_memory("m1", {"retention": {"keep_days": 10}})
    a = m.remember(U, "diet", "vegan")
    clock.advance(days=11)
    assert m.run_retention()["erased"] == [a.item_id]


def test_legal_hold_blocks_forget_and_retention_until_released(fixed_store, mem, clock):
    r = mem.remember(U, "contract_id", "HOLD-7781")
    mem.set_retention(r.item_id, keep_days=1)
    mem.set_legal_hold(r.item_id)
    head = fixed_store.adapter.head_seq("m1")
    with pytest.raises(LegalHoldActive) as e:
        mem.forget(r.item_id)
    assert e.value.details["report"]["state"] == "blocked"
    assert fixed_store.adapter.head_seq("m1") == head
    clock.advance(days=2)
    assert mem.run_retention()["blocked"] == [r.item_id]
    assert mem.get(r.item_id).value == "HOLD-7781"

    mem.set_legal_hold(r.item_id, False)
    assert "hold.released" in [e["type"] for e in fixed_store.adapter.events("m1")]
    assert mem.forget(r.item_id).state == "completed"
    assert_sound(fixed_store)


def test_deleting_a_memory_leaves_no_row_and_no_text(db_path):
    store = remem.open(db_path)
    m = store.create_memory("gone")
    keep = store.create_memory("kept")
    m.remember(U, "secret_word", "Plumbobulator", source={"id": "x1", "text": "Plumbobulator!"})
    m.observe(U, "the word is Plumbobulator", source_id="x2")
    keep.remember(U, "diet", "vegan")
    store.delete_memory("gone")
    assert b"plumbobulator" not in raw_bytes(db_path)
    store.close()
    conn = sqlite3.connect(db_path)
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    for t in tables:
        cols = [r[1] for r in conn.execute(f"PRAGMA table_info({t})")]
        if "memory_id" in cols:
            assert conn.execute(f"SELECT count(*) FROM {t} WHERE memory_id='gone'").fetchone()[0] == 0, t
    conn.close()
    assert b"plumbobulator" not in raw_bytes(db_path)
    assert remem.open(db_path).memory("kept").inspect(U, "diet").value == "vegan"
