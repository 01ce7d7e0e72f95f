"""Facts as the schema states them: every record ``Memory.fact`` returns is valid against
the shared ``memory.schema.json`` ``$defs/Fact``, and its fields follow the item (type,
version, times, hash, retention, provenance, supersession). Both backends."""

from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest
from logfacts.fact_kit import (  # noqa: F401
    ALICE,
    T0,
    assert_valid_fact,
    blob_dir,
    clock,
    mem,
    store,
)

from remem.domain.canonical import canonical_json
from remem.domain.fact import fact_from_record, kind_of_type, scope_record, type_of_kind
from remem.domain.timefmt import to_iso
from remem.errors import InvalidInput, NotFound


def test_a_remembered_fact_is_a_valid_schema_fact_with_its_type_and_hash(mem):
    r = mem.remember_fact(ALICE, "home_city", "Berlin", kind="profile_slot",
                          source={"id": "log-1", "text": "I live in Berlin"})
    rec = mem.fact(r.item_id)
    assert_valid_fact(rec)
    content = {"key": "home_city", "value": "Berlin"}
    data = canonical_json(content)
    assert rec["id"] == r.item_id and rec["type"] == "user-profile"
    assert rec["scope"] == {"tenantId": "default", "userId": "alice"}
    assert rec["content"] == content and rec["size"] == len(data)
    assert rec["contentHash"] == "sha256:" + hashlib.sha256(data).hexdigest()
    assert rec["createdAt"] == rec["updatedAt"] == to_iso(T0)
    assert rec["causedByLogId"] == ["log-1"] and "supersedes" not in rec
    assert rec["retention"] == {"legalHold": False}


def test_a_caller_given_type_is_kept_and_picks_the_kind_it_maps_to(mem):
    r = mem.remember_fact(ALICE, "weekly_notes", {"done": ["slides"]}, type="working-memory")
    rec = mem.fact(r.item_id)
    assert_valid_fact(rec)
    assert rec["type"] == "working-memory"
    assert mem.inspect(ALICE, "weekly_notes").current[0].kind == "fact"
    r2 = mem.remember_fact(ALICE, "diet", "vegan", type="preference")
    assert mem.fact(r2.item_id)["type"] == "preference"
    assert mem.inspect(ALICE, "diet").current[0].kind == "preference"
    with pytest.raises(InvalidInput):
        mem.remember_fact(ALICE, "x_key", "v", type="")
    assert mem.items(scope=ALICE, key="x_key").items == []


def test_a_superseding_fact_has_a_higher_version_and_names_what_it_supersedes(mem, clock):
    first = mem.remember_fact(ALICE, "home_city", "Berlin", source={"id": "log-1"})
    clock.advance(hours=1)
    second = mem.remember_fact(ALICE, "home_city", "Paris", source={"id": "log-2"})
    old, new = mem.fact(first.item_id), mem.fact(second.item_id)
    for rec in (old, new):
        assert_valid_fact(rec)
    assert new["version"] > old["version"] >= 1
    assert new["supersedes"] == first.item_id
    assert new["causedByLogId"] == ["log-2"]
    assert old["updatedAt"] == to_iso(T0 + timedelta(hours=1))  # superseded then
    assert new["createdAt"] == to_iso(T0 + timedelta(hours=1))


def test_updated_at_and_retention_follow_a_later_retention_change(mem, clock):
    r = mem.remember_fact(ALICE, "pets", "a cat", retention={"keep_days": 30})
    rec = mem.fact(r.item_id)
    assert rec["retention"] == {"keepUntil": to_iso(T0 + timedelta(days=30)),
                                "legalHold": False}
    clock.advance(days=2)
    mem.set_legal_hold(r.item_id)
    rec = mem.fact(r.item_id)
    assert_valid_fact(rec)
    assert rec["retention"]["legalHold"] is True
    assert rec["updatedAt"] == to_iso(T0 + timedelta(days=2))
    assert rec["createdAt"] == to_iso(T0)


def test_restatements_list_every_causal_log_entry_in_order(mem, clock):
    r = mem.remember_fact(ALICE, "diet", "vegan", source={"id": "log-1"})
    clock.advance(minutes=5)
    mem.remember_fact(ALICE, "diet", "vegan", source={"id": "log-7"})  # seen again
    rec = mem.fact(r.item_id)
    assert rec["causedByLogId"] == ["log-1", "log-7"]
    assert_valid_fact(rec)


def test_a_forgotten_fact_reads_like_one_that_never_existed(mem):
    r = mem.remember_fact(ALICE, "diet", "vegan", source={"id": "log-1"})
    mem.forget(r.item_id)
    with pytest.raises(NotFound) as gone:
        mem.fact(r.item_id)
    with pytest.raises(NotFound) as never:
        mem.fact("itm_000000000000000000000000")
    assert gone.value.code == never.value.code == "not_found_or_not_visible"


def test_fact_from_record_reads_back_what_fact_record_wrote(mem):
    r = mem.remember_fact("agent:bot", "style", "brief", type="rule",
                          retention={"keep_days": 3}, source={"id": "log-1"})
    rec = mem.fact(r.item_id)
    assert rec["scope"] == {"tenantId": "default", "userId": "agent:bot"}
    back = fact_from_record(rec)
    assert (back.scope, back.key, back.value, back.kind.value, back.fact_type) == (
        "agent:bot", "style", "brief", "rule", "rule")
    assert back.keep_until == rec["retention"]["keepUntil"]
    assert back.caused_by == ("log-1",) and back.version == rec["version"]


def test_the_kind_type_mapping_and_scope_mapping_are_inverse():
    for kind in ("identity", "rule", "profile_slot", "fact", "preference", "skill", "lesson"):
        assert kind_of_type(type_of_kind(kind)).value == kind
    assert type_of_kind("profile_slot") == "user-profile"
    assert kind_of_type("summary").value == "fact"
    from remem.domain.fact import scope_from_record

    for scope in ("user:a", "org:o", "project:p", "thread:t", "session:s", "agent:b"):
        assert scope_from_record(scope_record(scope, "t1")) == (scope, "t1")


def test_fact_from_record_refuses_what_it_cannot_map():
    base = {"id": "f1", "type": "summary", "scope": {"tenantId": "t"}, "version": 1,
            "createdAt": to_iso(T0), "content": {"key": "k", "value": "v"}}
    with pytest.raises(InvalidInput) as info:
        fact_from_record(base)  # no user/org/... id in the scope
    assert info.value.details["field"] == "scope"
    good = {**base, "scope": {"tenantId": "t", "userId": "a"}}
    with pytest.raises(InvalidInput) as info:
        fact_from_record({**good, "contentHash": "sha256:" + "0" * 64})
    assert info.value.details["field"] == "contentHash"
    with pytest.raises(InvalidInput):
        fact_from_record({**good, "content": "just text"})
    days = fact_from_record({**good, "retention": {"keepDays": 2, "legalHold": True}})
    assert days.keep_until == to_iso(T0 + timedelta(days=2)) and days.legal_hold


def test_rebuild_and_verify_keep_every_fact_record_as_it_was(mem, store, clock):
    a = mem.remember_fact(ALICE, "home_city", "Berlin", type="user-profile",
                          source={"id": "log-1"}, retention={"keep_days": 9})
    clock.advance(hours=1)
    b = mem.remember_fact(ALICE, "home_city", "Paris", source={"id": "log-2"})
    c = mem.remember_fact(ALICE, "report", "x " * 50_000, type="summary")  # 100 KB: a blob
    before = [mem.fact(i.item_id) for i in (a, b, c)]
    store.rebuild("m1")
    assert [mem.fact(i.item_id) for i in (a, b, c)] == before
    assert store.verify()["ok"]
