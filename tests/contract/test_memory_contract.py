"""Writes, reads, idempotency, memories, rebuild and verify: the same behaviour on every
backend (the store contract; see conftest.py for the sqlite/postgres parametrization)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

import remem
from remem import Authority
from remem.errors import (
    AlreadyExists,
    ConfigInvalid,
    IdempotencyConflict,
    InvalidInput,
    NotFound,
    RevisionMismatch,
)

T = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)


def at(days: float) -> datetime:
    return T + timedelta(days=days)


def head(mem: remem.Memory) -> int:
    return mem.status()["head_seq"]


def snapshot(mem: remem.Memory) -> dict:
    """Everything the public API shows about a memory's read model."""
    views = []
    cursor = None
    while True:
        page = mem.items(status="all", cursor=cursor, limit=1000)
        views.extend(v.to_dict() for v in page.items)
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    keys = sorted({(v["scope"], v["key"]) for v in views})
    return {"items": views,
            "keys": {f"{s} {k}": mem.inspect(s, k).revision for s, k in keys},
            "provenance": {v["item_id"]: mem.history(v["item_id"])["provenance"]
                           for v in views},
            "status": mem.status()}


def rich_history(mem: remem.Memory) -> None:
    """Supersede, stale, duplicate, conflict + third value, resolve, correction, archive,
    restore, multi values, provenance and idempotency rows."""
    mem.remember("user:alice", "home_city", "Paris", valid_at=at(0),
                 source={"id": "s1", "text": "I live in Paris", "role": "user"})
    mem.remember("user:alice", "home_city", "paris", valid_at=at(1),
                 source={"id": "s2", "role": "user"})
    mem.remember("user:alice", "home_city", "Rome", valid_at=at(3))
    mem.remember("user:alice", "home_city", "Lyon", valid_at=at(2))  # stale
    mem.remember("user:alice", "employer", "Acme", valid_at=at(0), authority=Authority.ASSERT)
    b = mem.remember("user:alice", "employer", "Initech", valid_at=at(1),
                     authority=Authority.ASSERT)
    c = mem.remember("user:alice", "employer", "Globex", valid_at=at(2),
                     authority=Authority.ASSERT)
    mem.resolve_conflict(b.conflict_group, keep=c.item_id)
    mem.remember("user:alice", "diet", "vegan", valid_at=at(0))
    rev = mem.inspect("user:alice", "diet").revision
    mem.correct("user:alice", "diet", "pescatarian", expected_revision=rev)
    for lang in ("French", "German", "日本語"):
        mem.remember("user:alice", "languages", lang, idempotency_key=f"lang-{lang}")
    cur = mem.inspect("user:alice", "home_city").current[0]
    mem.archive(cur.item_id)
    mem.restore(cur.item_id)
    tmp = mem.remember("user:bob", "timezone", "CET")
    mem.archive(tmp.item_id)
    mem.remember("user:bob", "profile", {"b": [1, 2.5, True], "a": None, "ü": "x"})


# --- writes ------------------------------------------------------------------------------


def test_remember_then_inspect_shows_the_current_value_and_its_source(mem):
    r = mem.remember("user:alice", "home_city", "Paris", kind="profile_slot", valid_at=at(0),
                     source={"id": "turn-1", "text": "I live in Paris", "role": "user"})
    assert (r.outcome, r.revision, r.status, r.replayed) == ("created", 1, "current", False)
    i = mem.inspect("user:alice", "home_city")
    assert (i.state, i.value, i.revision, i.cardinality, i.kind) == (
        "current", "Paris", 1, "single", "profile_slot")
    assert i.source == {"id": "turn-1", "text": "I live in Paris", "role": "user"}
    assert mem.inspect("user:alice", "unknown_key").state == "empty"


def test_a_later_value_supersedes_and_an_older_one_is_stale_history(mem):
    paris = mem.remember("user:alice", "home_city", "Paris", valid_at=at(0))
    rome = mem.remember("user:alice", "home_city", "Rome", valid_at=at(5))
    lyon = mem.remember("user:alice", "home_city", "Lyon", valid_at=at(2))
    assert (rome.outcome, rome.revision, lyon.outcome) == ("superseded", 2, "stale")
    i = mem.inspect("user:alice", "home_city")
    assert i.value == "Rome" and len(i.current) == 1
    assert mem.get(paris.item_id).superseded_by == rome.item_id
    assert {h.value for h in i.history} == {"Paris", "Lyon"}


def test_the_same_claim_again_is_seen_again_with_provenance(mem):
    first = mem.remember("user:alice", "home_city", "Paris", valid_at=at(0),
                         source={"id": "t1", "role": "user"})
    again = mem.remember("user:alice", "home_city", "  PARIS ", valid_at=at(1),
                         source={"id": "t2", "role": "user"})
    assert again.outcome == "duplicate" and again.item_id == first.item_id
    assert mem.get(first.item_id).seen_count == 2
    assert [p["source_id"] for p in mem.history(first.item_id)["provenance"]] == ["t1", "t2"]


def test_multi_keys_keep_every_value_and_values_keep_their_json_type(mem):
    for v in ("French", "German", "日本語"):
        assert mem.remember("user:alice", "languages", v).outcome == "created"
    assert sorted(mem.inspect("user:alice", "languages").value) == ["French", "German", "日本語"]
    obj = {"b": [1, 2.5, True, None], "a": "ü\u00e9\u4e2d", "n": 10**15}
    r = mem.remember("user:alice", "settings", obj)
    assert mem.get(r.item_id).value == obj
    assert mem.remember("user:alice", "lucky_number", 3).outcome == "created"
    assert mem.remember("user:alice", "lucky_number", "3").outcome == "superseded"


def test_correct_needs_the_current_revision_and_a_stale_one_writes_nothing(mem):
    mem.remember("user:alice", "home_city", "Pariss", valid_at=at(0))
    r = mem.correct("user:alice", "home_city", "Paris", expected_revision=1)
    assert (r.outcome, r.revision) == ("corrected", 2)
    before = head(mem)
    with pytest.raises(RevisionMismatch) as info:
        mem.correct("user:alice", "home_city", "Oslo", expected_revision=1)
    assert info.value.details["current_revision"] == 2
    assert head(mem) == before and mem.inspect("user:alice", "home_city").value == "Paris"


def test_conflicts_group_resolve_and_close(remem_store):
    mem = remem_store.create_memory("mc", {"keys": {"home_city": {"on_change": "conflict"}}})
    a = mem.remember("user:alice", "home_city", "Paris", valid_at=at(0))
    b = mem.remember("user:alice", "home_city", "Rome", valid_at=at(1))
    c = mem.remember("user:alice", "home_city", "Oslo", valid_at=at(2),
                     authority=Authority.ASSERT)
    assert b.outcome == c.outcome == "conflict" and b.conflict_group == c.conflict_group
    assert [(g["group_id"], len(g["items"])) for g in mem.conflicts()] == [
        (b.conflict_group, 3)]
    mem.resolve_conflict(b.conflict_group, keep=a.item_id)
    i = mem.inspect("user:alice", "home_city")
    assert (i.state, i.value, mem.conflicts()) == ("current", "Paris", [])
    with pytest.raises(NotFound):
        mem.resolve_conflict(b.conflict_group, keep=a.item_id)


def test_archive_hides_and_restore_brings_back(mem):
    r = mem.remember("user:alice", "home_city", "Paris")
    mem.archive(r.item_id)
    assert mem.inspect("user:alice", "home_city").state == "archived"
    assert mem.items().items == []
    assert mem.restore(r.item_id)["status"] == "current"
    with pytest.raises(InvalidInput):
        mem.restore(r.item_id)
    with pytest.raises(NotFound):
        mem.archive("itm_nope")


# --- idempotency -------------------------------------------------------------------------


def test_idempotency_replays_the_same_request_and_refuses_another_meaning(mem):
    first = mem.remember("user:alice", "home_city", "Paris", valid_at=at(0),
                         idempotency_key="req-1")
    before = head(mem)
    again = mem.remember("user:alice", "home_city", "Paris", valid_at=at(0),
                         idempotency_key="req-1")
    assert again.replayed and again.item_id == first.item_id and head(mem) == before
    with pytest.raises(IdempotencyConflict):
        mem.remember("user:alice", "home_city", "Rome", valid_at=at(0), idempotency_key="req-1")
    assert head(mem) == before


def test_a_source_id_derives_the_idempotency_key(mem):
    src = {"id": "turn-9", "text": "I live in Paris", "role": "user",
           "occurred_at": at(0).isoformat()}
    mem.remember("user:alice", "home_city", "Paris", source=src)
    before = head(mem)
    assert mem.remember("user:alice", "home_city", "Paris", source=src).replayed
    assert head(mem) == before
    with pytest.raises(IdempotencyConflict):
        mem.remember("user:alice", "home_city", "Rome", source=src)


# --- reads -------------------------------------------------------------------------------


def test_items_pages_in_id_order_without_gaps_or_a_silent_cap(mem):
    made = {mem.remember("user:alice", "likes", f"thing {n:03d}").item_id for n in range(75)}
    seen, cursor, sizes = [], None, []
    while True:
        page = mem.items(key="likes", limit=30, cursor=cursor)
        sizes.append(len(page.items))
        seen.extend(v.item_id for v in page.items)
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert sizes == [30, 30, 15]
    assert seen == sorted(made)  # bytewise id order on every backend


def test_items_filter_by_scope_key_kind_and_status(mem):
    mem.remember("user:alice", "home_city", "Paris", kind="profile_slot", valid_at=at(0))
    mem.remember("user:alice", "home_city", "Rome", kind="profile_slot", valid_at=at(1))
    mem.remember("user:alice", "diet", "vegetarian", kind="preference")
    mem.remember("user:bob", "home_city", "Oslo", kind="profile_slot")
    values = lambda page: sorted(v.value for v in page.items)  # noqa: E731
    assert values(mem.items()) == ["Oslo", "Rome", "vegetarian"]
    assert values(mem.items(scope="user:alice")) == ["Rome", "vegetarian"]
    assert values(mem.items(key="home_city")) == ["Oslo", "Rome"]
    assert values(mem.items(kind="preference")) == ["vegetarian"]
    assert values(mem.items(status="superseded")) == ["Paris"]
    assert values(mem.items(status=["superseded", "current"], scope="user:bob")) == ["Oslo"]
    assert values(mem.items(status="all")) == ["Oslo", "Paris", "Rome", "vegetarian"]


def test_history_lists_versions_provenance_and_events(mem):
    paris = mem.remember("user:alice", "home_city", "Paris", valid_at=at(0),
                         source={"id": "t1", "role": "user"})
    mem.remember("user:alice", "home_city", "paris", valid_at=at(1),
                 source={"id": "t2", "role": "user"})
    rome = mem.remember("user:alice", "home_city", "Rome", valid_at=at(2))
    h = mem.history(paris.item_id)
    assert [v["value"] for v in h["versions"]] == ["Paris", "Rome"]
    assert [p["source_id"] for p in h["provenance"]] == ["t1", "t2"]
    assert [e["type"] for e in h["events"]] == [
        "item.added", "provenance.added", "item.superseded"]
    assert h["events"][-1]["data"]["by"] == rome.item_id


# --- memories ----------------------------------------------------------------------------


def test_memories_are_isolated_and_ids_unique(remem_store):
    m1, m2 = remem_store.create_memory("m1"), remem_store.create_memory("m2")
    a = m1.remember("user:alice", "home_city", "Paris", idempotency_key="k")
    b = m2.remember("user:alice", "home_city", "Rome", idempotency_key="k")
    assert not b.replayed and a.claim_id != b.claim_id
    assert m1.inspect("user:alice", "home_city").value == "Paris"
    assert m2.inspect("user:alice", "home_city").value == "Rome"
    with pytest.raises(NotFound):
        m1.get(b.item_id)
    with pytest.raises(AlreadyExists):
        remem_store.create_memory("m1")
    with pytest.raises(InvalidInput):
        remem_store.create_memory("bad id")
    with pytest.raises(NotFound):
        remem_store.memory("missing")
    assert [m["memory_id"] for m in remem_store.list_memories()] == ["m1", "m2"]


def test_config_is_validated_stored_and_updated(remem_store):
    with pytest.raises(ConfigInvalid):
        remem_store.create_memory("bad", {"keys": {"home_city": {"cardinality": "many"}}})
    assert remem_store.list_memories() == []
    cfg = {"description": "ünïcode", "keys": {"pets": {"cardinality": "single"},
                                               "nickname": {"cardinality": "multi",
                                                            "kind": "identity"}}}
    mem = remem_store.create_memory("m1", cfg)
    assert remem_store.memory("m1").config == cfg
    mem.remember("user:alice", "pets", "cat")
    mem.remember("user:alice", "pets", "dog")
    assert mem.inspect("user:alice", "pets").value == "dog"
    with pytest.raises(ConfigInvalid):
        remem_store.update_config("m1", {"keys": {"pets": {"cardinality": "multi"}}})
    remem_store.update_config("m1", {"description": "after"})
    assert remem_store.memory("m1").config == {"description": "after"}


def test_delete_memory_purges_it_and_keeps_the_others(remem_store):
    doomed, kept = remem_store.create_memory("doomed"), remem_store.create_memory("kept")
    rich_history(doomed)
    rich_history(kept)
    before = snapshot(kept)
    counts = remem_store.delete_memory("doomed")
    assert counts["ledger"] == head(kept) and counts["items"] > 0 and counts["payloads"] > 0
    with pytest.raises(NotFound):
        remem_store.memory("doomed")
    with pytest.raises(NotFound):
        remem_store.delete_memory("doomed")
    assert snapshot(kept) == before
    assert remem_store.verify()["ok"]
    again = remem_store.create_memory("doomed")  # the id is free again, and empty
    assert again.items(status="all").items == [] and head(again) == 0


# --- rebuild and verify -------------------------------------------------------------------


def test_rebuild_refolds_the_same_read_model(remem_store):
    mem = remem_store.create_memory("m1")
    rich_history(mem)
    before = snapshot(mem)
    assert {v["status"] for v in before["items"]} == {"current", "superseded", "archived"}
    assert remem_store.rebuild("m1") == {"m1": head(mem)}
    assert snapshot(mem) == before


def test_verify_walks_every_chain(remem_store):
    rich_history(remem_store.create_memory("m1"))
    remem_store.create_memory("m2").remember("user:alice", "home_city", "Paris")
    rep = remem_store.verify()
    assert rep["ok"] and rep["memories"]["m1"]["broken"] is None
    assert rep["memories"]["m1"]["events"] > 20 and rep["memories"]["m2"]["events"] == 2


def test_reopening_continues_the_chain(store_url):
    s = remem.open(store_url)
    s.create_memory("m1").remember("user:alice", "home_city", "Paris", valid_at=at(0))
    s.close()
    s = remem.open(store_url)
    try:
        mem = s.memory("m1")
        assert mem.inspect("user:alice", "home_city").value == "Paris"
        mem.remember("user:alice", "home_city", "Rome", valid_at=at(1))
        assert s.verify()["ok"] and head(mem) == 4
    finally:
        s.close()


def test_opening_does_not_touch_the_database_until_first_use(store_url):
    s = remem.open(store_url)  # nothing created or connected yet
    s.close()
    s = remem.open(store_url)
    try:
        assert s.list_memories() == []
    finally:
        s.close()


def test_rebuild_repairs_a_damaged_read_model(remem_store, raw_sql):
    mem = remem_store.create_memory("m1")
    rich_history(mem)
    before = snapshot(mem)
    assert raw_sql("DELETE FROM items WHERE memory_id='m1' AND status='current'") > 0
    raw_sql("UPDATE key_revisions SET revision=99 WHERE memory_id='m1'")
    assert snapshot(mem) != before
    remem_store.rebuild()
    assert snapshot(mem) == before


def test_verify_names_the_first_event_whose_bytes_changed(remem_store, raw_sql, store_url):
    mem = remem_store.create_memory("m1")
    other = remem_store.create_memory("m2")
    rich_history(mem)
    other.remember("user:alice", "home_city", "Paris")
    rome = mem.inspect("user:alice", "home_city").current[0]
    target = mem.history(rome.item_id)["events"][0]["seq"]
    assert raw_sql("UPDATE ledger SET data = replace(data, '\"itm_', '\"itm_0') "
                   f"WHERE memory_id='m1' AND seq={target}") == 1
    fresh = remem.open(store_url)  # another process would see the same
    try:
        rep = fresh.verify()
    finally:
        fresh.close()
    assert rep["ok"] is False and rep["memories"]["m2"]["ok"] is True
    assert rep["memories"]["m1"]["broken"]["seq"] == target
