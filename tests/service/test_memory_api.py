"""The public Python API on a real SQLite file: writes, reads, idempotency, memories,
config, delete, rebuild and verify (issue 2 "Python API", "Storage")."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta

import pytest

from remem.service.writer import append_events

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


def head(mem) -> int:
    return mem.status()["head_seq"]


def ledger_types(mem) -> list[str]:
    return [e["type"] for e in mem.store.events(mem.id)]


# --- remember / inspect --------------------------------------------------------------------


def test_remember_creates_an_item_that_inspect_shows_as_current(memory):
    r = memory.remember("user:alice", "home_city", "Paris", kind="profile_slot", valid_at=at(0),
                        source={"id": "turn-1", "text": "I live in Paris", "role": "user"})
    assert (r.outcome, r.revision, r.status, r.replayed) == ("created", 1, "current", False)
    assert r.item_id and r.claim_id
    i = memory.inspect("user:alice", "home_city")
    assert (i.state, i.value, i.revision, i.cardinality, i.kind) == (
        "current", "Paris", 1, "single", "profile_slot")
    assert i.source == {"id": "turn-1", "text": "I live in Paris", "role": "user"}
    assert [v.item_id for v in i.current] == [r.item_id]
    assert i.history == [] and i.conflicts == []


def test_inspect_of_an_unknown_key_is_empty(memory):
    i = memory.inspect("user:alice", "home_city")
    assert (i.state, i.value, i.revision) == ("empty", None, 0)


def test_a_new_value_supersedes_and_the_old_one_becomes_history(memory):
    paris = memory.remember("user:alice", "home_city", "Paris", valid_at=at(0))
    rome = memory.remember("user:alice", "home_city", "Rome", valid_at=at(5))
    assert (rome.outcome, rome.revision) == ("superseded", 2)
    i = memory.inspect("user:alice", "home_city")
    assert i.value == "Rome"
    assert [(h.item_id, h.value, h.status) for h in i.history] == [
        (paris.item_id, "Paris", "superseded")]
    assert i.history[0].superseded_by == rome.item_id


def test_an_older_statement_is_stale_history_and_never_current(memory):
    memory.remember("user:alice", "home_city", "Rome", valid_at=at(5))
    old = memory.remember("user:alice", "home_city", "Paris", valid_at=at(0))
    assert old.outcome == "stale" and old.status == "superseded"
    i = memory.inspect("user:alice", "home_city")
    assert i.value == "Rome"
    assert "Paris" in [h.value for h in i.history]


def test_the_same_value_again_is_a_duplicate_that_adds_provenance(memory):
    first = memory.remember("user:alice", "home_city", "Paris", valid_at=at(0),
                            source={"id": "t1", "role": "user"})
    again = memory.remember("user:alice", "home_city", " PARIS ", valid_at=at(1),
                            source={"id": "t2", "role": "user"})
    assert again.outcome == "duplicate" and again.item_id == first.item_id
    assert again.revision == first.revision == 1
    assert [p["source_id"] for p in memory.store.provenance(memory.id, first.item_id)] == [
        "t1", "t2"]
    assert memory.get(first.item_id).seen_count == 2


def test_a_multi_key_keeps_every_value_current(memory):
    for lang in ("French", "German", "Basque"):
        assert memory.remember("user:alice", "languages", lang).outcome == "created"
    i = memory.inspect("user:alice", "languages")
    assert i.cardinality == "multi" and sorted(i.value) == ["Basque", "French", "German"]


# --- correct -----------------------------------------------------------------------------


def test_correct_with_the_current_revision_corrects(memory):
    old = memory.remember("user:alice", "home_city", "Pariss", valid_at=at(0))
    r = memory.correct("user:alice", "home_city", "Paris", expected_revision=1)
    assert (r.outcome, r.revision, r.status) == ("corrected", 2, "current")
    i = memory.inspect("user:alice", "home_city")
    assert i.value == "Paris" and i.revision == 2
    prev = memory.get(old.item_id)
    assert prev.status == "superseded" and prev.superseded_by == r.item_id


def test_correct_with_a_stale_revision_fails_naming_the_current_one_and_writes_nothing(memory):
    memory.remember("user:alice", "home_city", "Paris", valid_at=at(0))
    memory.remember("user:alice", "home_city", "Rome", valid_at=at(1))
    before = head(memory)
    with pytest.raises(RevisionMismatch) as info:
        memory.correct("user:alice", "home_city", "Oslo", expected_revision=1)
    assert info.value.details["current_revision"] == 2
    assert "current revision is 2" in str(info.value)
    assert head(memory) == before
    assert memory.inspect("user:alice", "home_city").value == "Rome"


# --- items and cursor pagination -------------------------------------------------------------


def test_items_pages_through_every_item_without_a_silent_cap(memory):
    made = {memory.remember("user:alice", "likes", f"thing {n:03d}").item_id for n in range(120)}
    assert len(made) == 120
    seen, cursor, pages = [], None, []
    while True:
        page = memory.items(scope="user:alice", key="likes", limit=50, cursor=cursor)
        pages.append(len(page.items))
        seen.extend(v.item_id for v in page.items)
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert pages == [50, 50, 20]
    assert len(seen) == len(set(seen)) == 120
    assert set(seen) == made
    assert sorted(v for v in (memory.get(i).value for i in seen)) == [
        f"thing {n:03d}" for n in range(120)]


def test_items_reports_a_next_cursor_when_a_page_is_exactly_full(memory):
    for n in range(4):
        memory.remember("user:alice", "likes", f"thing {n}")
    first = memory.items(limit=2)
    second = memory.items(limit=2, cursor=first.next_cursor)
    assert first.next_cursor is not None and len(second.items) == 2
    assert second.next_cursor is None


def test_items_filters_by_scope_key_kind_and_status(memory):
    memory.remember("user:alice", "home_city", "Paris", kind="profile_slot", valid_at=at(0))
    memory.remember("user:alice", "home_city", "Rome", kind="profile_slot", valid_at=at(1))
    memory.remember("user:alice", "diet", "vegetarian", kind="preference")
    memory.remember("user:bob", "home_city", "Oslo", kind="profile_slot")
    values = lambda page: sorted(v.value for v in page.items)  # noqa: E731
    assert values(memory.items()) == ["Oslo", "Rome", "vegetarian"]
    assert values(memory.items(scope="user:alice")) == ["Rome", "vegetarian"]
    assert values(memory.items(key="home_city")) == ["Oslo", "Rome"]
    assert values(memory.items(kind="preference")) == ["vegetarian"]
    assert values(memory.items(status="superseded")) == ["Paris"]
    assert values(memory.items(status="all")) == ["Oslo", "Paris", "Rome", "vegetarian"]
    assert values(memory.items(scope="user:alice", key="home_city", status="all")) == [
        "Paris", "Rome"]


@pytest.mark.parametrize("kwargs", [{"limit": 0}, {"limit": 100_000}, {"cursor": "garbage!"},
                                    {"status": "deleted"}, {"scope": "team:x"}])
def test_items_rejects_bad_arguments(memory, kwargs):
    with pytest.raises(InvalidInput):
        memory.items(**kwargs)


# --- history ----------------------------------------------------------------------------


def test_history_shows_versions_provenance_and_the_events_naming_the_item(memory):
    paris = memory.remember("user:alice", "home_city", "Paris", valid_at=at(0),
                            source={"id": "t1", "role": "user"})
    memory.remember("user:alice", "home_city", "paris", valid_at=at(1),
                    source={"id": "t2", "role": "user"})
    rome = memory.remember("user:alice", "home_city", "Rome", valid_at=at(2))
    h = memory.history(paris.item_id)
    assert h["item"]["value"] == "Paris" and h["item"]["status"] == "superseded"
    assert [v["value"] for v in h["versions"]] == ["Paris", "Rome"]
    assert [p["source_id"] for p in h["provenance"]] == ["t1", "t2"]
    types = [e["type"] for e in h["events"]]
    assert types == ["item.added", "provenance.added", "item.superseded"]
    assert h["events"][-1]["data"]["by"] == rome.item_id
    with pytest.raises(NotFound):
        memory.history("itm_does_not_exist")


# --- conflicts --------------------------------------------------------------------------


@pytest.fixture
def conflicted(store):
    mem = store.create_memory("mc", {"keys": {"home_city": {"on_change": "conflict"}}})
    a = mem.remember("user:alice", "home_city", "Paris", valid_at=at(0))
    b = mem.remember("user:alice", "home_city", "Rome", valid_at=at(1))
    return mem, a, b


def test_a_conflict_policy_key_records_a_conflict_group(conflicted):
    mem, a, b = conflicted
    assert b.outcome == "conflict" and b.conflict_group
    i = mem.inspect("user:alice", "home_city")
    assert i.state == "conflict" and i.value is None
    assert sorted(v.value for v in i.conflicts) == ["Paris", "Rome"]
    groups = mem.conflicts()
    assert [(g["group_id"], len(g["items"])) for g in groups] == [(b.conflict_group, 2)]


def test_a_third_asserted_value_joins_the_open_group(conflicted):
    mem, a, b = conflicted
    c = mem.remember("user:alice", "home_city", "Oslo", valid_at=at(2),
                     authority=Authority.ASSERT)
    assert c.outcome == "conflict" and c.conflict_group == b.conflict_group
    assert len(mem.inspect("user:alice", "home_city").conflicts) == 3


def test_resolve_conflict_keeps_one_and_supersedes_the_rest(conflicted):
    mem, a, b = conflicted
    out = mem.resolve_conflict(b.conflict_group, keep=a.item_id)
    assert out["kept"] == a.item_id
    i = mem.inspect("user:alice", "home_city")
    assert (i.state, i.value, i.conflicts) == ("current", "Paris", [])
    assert mem.get(b.item_id).status == "superseded"
    assert mem.get(b.item_id).superseded_by == a.item_id
    assert mem.conflicts() == []
    with pytest.raises(NotFound):  # the group is closed now
        mem.resolve_conflict(b.conflict_group, keep=a.item_id)


def test_resolve_conflict_refuses_an_item_outside_the_group(conflicted):
    mem, a, b = conflicted
    other = mem.remember("user:alice", "diet", "vegan")
    before = head(mem)
    with pytest.raises(InvalidInput) as info:  # the group exists: the kept id is wrong
        mem.resolve_conflict(b.conflict_group, keep=other.item_id)
    assert info.value.details["field"] == "keep"
    assert head(mem) == before


def test_correct_settles_a_conflict(conflicted):
    mem, a, b = conflicted
    rev = mem.inspect("user:alice", "home_city").revision
    r = mem.correct("user:alice", "home_city", "Oslo", expected_revision=rev)
    assert r.outcome == "corrected"
    i = mem.inspect("user:alice", "home_city")
    assert (i.state, i.value) == ("current", "Oslo")


# --- archive / restore ------------------------------------------------------------------


def test_archive_hides_an_item_and_restore_brings_it_back(memory):
    r = memory.remember("user:alice", "home_city", "Paris", valid_at=at(0))
    memory.archive(r.item_id)
    i = memory.inspect("user:alice", "home_city")
    assert (i.state, i.value) == ("archived", None)
    assert memory.items().items == []
    assert [v.item_id for v in memory.items(status="archived").items] == [r.item_id]
    out = memory.restore(r.item_id)
    assert out["status"] == "current"
    assert memory.inspect("user:alice", "home_city").value == "Paris"


def test_restoring_a_value_replaced_meanwhile_brings_it_back_as_history(memory):
    paris = memory.remember("user:alice", "home_city", "Paris", valid_at=at(0))
    memory.archive(paris.item_id)
    memory.remember("user:alice", "home_city", "Rome", valid_at=at(1))
    assert memory.restore(paris.item_id)["status"] == "superseded"
    i = memory.inspect("user:alice", "home_city")
    assert i.value == "Rome" and len(i.current) == 1


def test_restore_of_an_item_that_is_not_archived_is_refused(memory):
    r = memory.remember("user:alice", "home_city", "Paris")
    with pytest.raises(InvalidInput):
        memory.restore(r.item_id)
    with pytest.raises(NotFound):
        memory.archive("itm_nope")


# --- idempotency ------------------------------------------------------------------------


def test_same_idempotency_key_and_meaning_replays_without_writing(memory):
    first = memory.remember("user:alice", "home_city", "Paris", valid_at=at(0),
                            idempotency_key="req-1")
    before = head(memory)
    again = memory.remember("user:alice", "home_city", "Paris", valid_at=at(0),
                            idempotency_key="req-1")
    assert again.replayed and not first.replayed
    assert (again.outcome, again.item_id, again.revision) == (
        first.outcome, first.item_id, first.revision)
    assert head(memory) == before


def test_an_idempotent_retry_without_explicit_time_replays(memory):
    # The defaulted valid_at ("now") is not part of what the caller asked; a retry a moment
    # later means the same thing and must replay, not conflict.
    first = memory.remember("user:alice", "home_city", "Paris", idempotency_key="req-2")
    before = head(memory)
    again = memory.remember("user:alice", "home_city", "Paris", idempotency_key="req-2")
    assert again.replayed and again.item_id == first.item_id
    assert head(memory) == before


def test_same_idempotency_key_with_another_meaning_conflicts_and_writes_nothing(memory):
    memory.remember("user:alice", "home_city", "Paris", valid_at=at(0), idempotency_key="req-3")
    before = head(memory)
    with pytest.raises(IdempotencyConflict) as info:
        memory.remember("user:alice", "home_city", "Rome", valid_at=at(0),
                        idempotency_key="req-3")
    assert info.value.code == "idempotency_conflict"
    assert head(memory) == before
    assert memory.inspect("user:alice", "home_city").value == "Paris"


def test_the_source_id_derives_the_idempotency_key(memory):
    src = {"id": "turn-9", "text": "I live in Paris", "role": "user",
           "occurred_at": at(0).isoformat()}
    first = memory.remember("user:alice", "home_city", "Paris", source=src)
    before = head(memory)
    assert memory.remember("user:alice", "home_city", "Paris", source=src).replayed
    assert head(memory) == before
    with pytest.raises(IdempotencyConflict):  # same source, same slot, another payload
        memory.remember("user:alice", "home_city", "Rome", source=src)
    # one source may state facts in other slots, and several values of a multi key
    assert memory.remember("user:alice", "diet", "vegan", source=src).outcome == "created"
    assert memory.remember("user:alice", "languages", "French", source=src).outcome == "created"
    assert memory.remember("user:alice", "languages", "German", source=src).outcome == "created"
    assert first.item_id == memory.inspect("user:alice", "home_city").current[0].item_id


def test_idempotency_replays_the_original_result_after_later_writes(memory):
    first = memory.remember("user:alice", "home_city", "Paris", valid_at=at(0),
                            idempotency_key="req-4")
    memory.remember("user:alice", "home_city", "Rome", valid_at=at(1))
    again = memory.remember("user:alice", "home_city", "Paris", valid_at=at(0),
                            idempotency_key="req-4")
    assert again.replayed and again.item_id == first.item_id and again.revision == 1
    assert memory.inspect("user:alice", "home_city").value == "Rome"


# --- several memories per database --------------------------------------------------------


def test_memories_in_one_database_are_isolated(store):
    m1, m2 = store.create_memory("m1"), store.create_memory("m2")
    a = m1.remember("user:alice", "home_city", "Paris", idempotency_key="k")
    b = m2.remember("user:alice", "home_city", "Rome", idempotency_key="k")  # same key: no clash
    assert a.claim_id != m2.remember("user:alice", "home_city", "Paris").claim_id
    assert m1.inspect("user:alice", "home_city").value == "Paris"
    assert m2.inspect("user:alice", "home_city").value == "Paris"  # m2 superseded Rome itself
    assert m1.inspect("user:alice", "home_city").revision == 1
    assert [v.value for v in m1.items(status="all").items] == ["Paris"]
    with pytest.raises(NotFound):
        m1.get(b.item_id)
    assert [m["memory_id"] for m in store.list_memories()] == ["m1", "m2"]
    assert store.verify()["ok"]


def test_memory_ids_are_validated_and_unique(store):
    store.create_memory("m1")
    with pytest.raises(AlreadyExists):
        store.create_memory("m1")
    with pytest.raises(InvalidInput):
        store.create_memory("bad id with spaces")
    with pytest.raises(NotFound):
        store.memory("missing")


# --- config -------------------------------------------------------------------------------


@pytest.mark.parametrize("config", [
    {"unknown_field": 1},
    {"keys": {"home_city": {"cardinality": "many"}}},
    {"keys": {"Home City": {"cardinality": "single"}}},
    {"keys": {"home_city": {"on_change": "explode"}}},
    {"keys": {"home_city": {"kind": "gossip"}}},
    {"retention": {"keep_days": 0}},
    {"description": 42},
    [1, 2, 3],
])
def test_create_memory_validates_config_against_the_schema_and_creates_nothing(store, config):
    with pytest.raises(ConfigInvalid) as info:
        store.create_memory("bad", config)
    assert info.value.code == "config_invalid" and isinstance(info.value, InvalidInput)
    assert "path" in info.value.details
    assert store.list_memories() == []
    with pytest.raises(NotFound):
        store.memory("bad")


def test_config_names_key_cardinality_kind_and_policy(store):
    mem = store.create_memory("m1", {"keys": {"pets": {"cardinality": "single"},
                                              "nickname": {"cardinality": "multi",
                                                           "kind": "identity"}}})
    mem.remember("user:alice", "pets", "cat")
    mem.remember("user:alice", "pets", "dog")
    assert mem.inspect("user:alice", "pets").value == "dog"  # single by config
    mem.remember("user:alice", "nickname", "Ali")
    mem.remember("user:alice", "nickname", "Lissy")
    i = mem.inspect("user:alice", "nickname")
    assert sorted(i.value) == ["Ali", "Lissy"] and i.kind == "identity"


def test_update_config_is_validated_too(store):
    store.create_memory("m1", {"description": "before"})
    with pytest.raises(ConfigInvalid):
        store.update_config("m1", {"keys": {"x": {"cardinality": "lots"}}})
    assert store.memory("m1").config == {"description": "before"}


# --- delete_memory ---------------------------------------------------------------------------


def _rich_history(mem) -> None:
    """Supersede, stale, duplicate, conflict + third value, resolve, correction, archive,
    restore, multi values, provenance, idempotency rows."""
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
    mem.remember("user:alice", "diet", "vegan", valid_at=at(0), authority=Authority.ASSERT)
    mem.remember("user:alice", "diet", "vegetarian", valid_at=at(1), authority=Authority.ASSERT)
    rev = mem.inspect("user:alice", "diet").revision
    mem.correct("user:alice", "diet", "pescatarian", expected_revision=rev)
    for lang in ("French", "German"):
        mem.remember("user:alice", "languages", lang, idempotency_key=f"lang-{lang}")
    cur = mem.inspect("user:alice", "home_city").current[0]
    mem.archive(cur.item_id)
    mem.restore(cur.item_id)
    tmp = mem.remember("user:bob", "timezone", "CET")
    mem.archive(tmp.item_id)
    mem.remember("user:bob", "pronouns", "they/them", source={"id": "s9", "role": "user"})
    rev = mem.inspect("user:bob", "pronouns").revision
    mem.correct("user:bob", "pronouns", "she/her", expected_revision=rev,
                source={"id": "s10", "role": "user"})


def _tables(conn: sqlite3.Connection) -> list[str]:
    return [r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'")]


def _columns(conn: sqlite3.Connection, table: str) -> list[tuple[str, str]]:
    return [(r[1], (r[2] or "").upper()) for r in conn.execute(f'PRAGMA table_info("{table}")')]


def test_delete_memory_leaves_no_row_of_that_memory_in_any_table(store, db_path):
    doomed = store.create_memory("doomed-mem-7q")
    keep = store.create_memory("kept")
    _rich_history(doomed)
    _rich_history(keep)
    store.delete_memory("doomed-mem-7q")
    with pytest.raises(NotFound):
        store.memory("doomed-mem-7q")
    conn = sqlite3.connect(db_path)
    try:
        with_memory_id = []
        for table in _tables(conn):
            cols = _columns(conn, table)
            if any(name == "memory_id" for name, _ in cols):
                with_memory_id.append(table)
                n = conn.execute(f'SELECT count(*) FROM "{table}" WHERE memory_id=?',
                                 ("doomed-mem-7q",)).fetchone()[0]
                assert n == 0, f"{table} still holds {n} rows of the deleted memory"
            for name, decl in cols:  # the id appears in no text column at all
                if "BLOB" in decl:
                    continue
                n = conn.execute(f'SELECT count(*) FROM "{table}" WHERE '
                                 f'CAST("{name}" AS TEXT) LIKE ?', ("%doomed-mem-7q%",)
                                 ).fetchone()[0]
                assert n == 0, f"{table}.{name} still mentions the deleted memory"
        assert {"memories", "ledger", "payloads", "items", "provenance",
                "idempotency"} <= set(with_memory_id)
        kept_rows = conn.execute("SELECT count(*) FROM ledger WHERE memory_id='kept'").fetchone()
        assert kept_rows[0] > 0
    finally:
        conn.close()
    assert keep.inspect("user:alice", "home_city").value == "Rome"
    assert store.verify()["ok"]


def test_delete_of_a_missing_memory_is_not_found(store):
    with pytest.raises(NotFound):
        store.delete_memory("ghost")


# --- rebuild -----------------------------------------------------------------------------


def test_rebuild_refolds_the_read_model_into_identical_rows(store):
    mem = store.create_memory("m1")
    _rich_history(mem)
    statuses = {v.status for v in mem.items(status="all", limit=1000).items}
    assert statuses == {"current", "superseded", "archived"}
    assert store.adapter.dump("m1")["provenance"]
    before = store.adapter.dump("m1")
    folded = store.rebuild("m1")
    assert folded == {"m1": head(mem)}
    assert store.adapter.dump("m1") == before


def test_rebuild_repairs_a_damaged_read_model(store, db_path):
    mem = store.create_memory("m1")
    _rich_history(mem)
    before = store.adapter.dump("m1")
    conn = sqlite3.connect(db_path)
    conn.execute("DELETE FROM items WHERE memory_id='m1' AND status='current'")
    conn.execute("UPDATE key_revisions SET revision=99 WHERE memory_id='m1'")
    conn.commit()
    conn.close()
    assert store.adapter.dump("m1") != before
    store.rebuild()
    assert store.adapter.dump("m1") == before


def test_rebuild_keeps_conflict_groups_open(store):
    mem = store.create_memory("m1", {"default_on_change": "conflict"})
    mem.remember("user:alice", "home_city", "Paris", valid_at=at(0))
    mem.remember("user:alice", "home_city", "Rome", valid_at=at(1))
    before = store.adapter.dump("m1")
    store.rebuild("m1")
    assert store.adapter.dump("m1") == before
    assert mem.inspect("user:alice", "home_city").state == "conflict"


# --- verify ------------------------------------------------------------------------------


def _flip_byte_in_ledger(db_path, memory_id: str, seq: int) -> None:
    conn = sqlite3.connect(db_path)
    (data,) = conn.execute("SELECT data FROM ledger WHERE memory_id=? AND seq=?",
                           (memory_id, seq)).fetchone()
    raw = bytearray(data.encode())
    pos = raw.index(b'"itm_') + 5  # a hex digit of an item id: still valid JSON
    raw[pos] = ord("0") if raw[pos] != ord("0") else ord("1")
    assert json.loads(bytes(raw)) != json.loads(data)
    conn.execute("UPDATE ledger SET data=? WHERE memory_id=? AND seq=?",
                 (raw.decode(), memory_id, seq))
    conn.commit()
    conn.close()


def test_verify_passes_on_an_intact_database(store):
    _rich_history(store.create_memory("m1"))
    rep = store.verify()
    assert rep["ok"] and rep["memories"]["m1"]["ok"]
    assert rep["memories"]["m1"]["broken"] is None
    assert rep["memories"]["m1"]["events"] > 20


def test_verify_reports_the_first_broken_seq_after_a_flipped_byte(store, db_path):
    mem = store.create_memory("m1")
    other = store.create_memory("m2")
    _rich_history(mem)
    other.remember("user:alice", "home_city", "Paris")
    events = list(store.adapter.events("m1"))
    target = next(e["seq"] for e in events[len(events) // 2:] if "item_id" in e["data"])
    _flip_byte_in_ledger(db_path, "m1", target)
    fresh = remem.open(db_path)
    try:
        rep = fresh.verify()
    finally:
        fresh.close()
    assert rep["ok"] is False
    assert rep["memories"]["m1"]["ok"] is False
    assert rep["memories"]["m1"]["broken"]["seq"] == target
    assert rep["memories"]["m2"]["ok"] is True


def test_a_write_after_reopening_continues_the_chain(db_path):
    s = remem.open(db_path)
    s.create_memory("m1").remember("user:alice", "home_city", "Paris", valid_at=at(0))
    s.close()
    s = remem.open(db_path)
    try:
        mem = s.memory("m1")
        assert mem.inspect("user:alice", "home_city").value == "Paris"
        mem.remember("user:alice", "home_city", "Rome", valid_at=at(1))
        assert s.verify()["ok"]
        assert ledger_types(mem) == ["key.declared", "item.added", "item.added",
                                     "item.superseded"]
    finally:
        s.close()


def test_same_idempotency_key_with_another_valid_until_conflicts(memory):
    memory.remember("user:alice", "home_city", "Paris", valid_at=at(0), valid_until=at(30),
                    idempotency_key="req-5")
    with pytest.raises(IdempotencyConflict):
        memory.remember("user:alice", "home_city", "Paris", valid_at=at(0), valid_until=at(60),
                        idempotency_key="req-5")


# --- storage guarantees ---------------------------------------------------------------------


def test_the_database_is_one_wal_file_with_secure_delete_and_numbered_migrations(store,
                                                                                 db_path):
    store.create_memory("m1")
    conn = store.adapter.conn
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA secure_delete").fetchone()[0] == 1
    versions = [r[0] for r in conn.execute("SELECT version FROM schema_migrations ORDER BY 1")]
    assert versions == list(range(1, len(versions) + 1))
    names = [r[0] for r in conn.execute("SELECT name FROM schema_migrations ORDER BY version")]
    assert all(n[:3].isdigit() and n.endswith(".sql") for n in names)
    again = remem.open(db_path)  # reopening applies nothing twice
    try:
        again.list_memories()
        n = again.adapter.conn.execute("SELECT count(*) FROM schema_migrations").fetchone()[0]
        assert n == len(versions)
    finally:
        again.close()


def test_an_append_at_a_moved_head_raises_head_moved_and_leaves_nothing_staged(store, db_path):
    from remem.domain.events import Event, EventType
    from remem.errors import HeadMoved

    mem = store.create_memory("m1")
    mem.remember("user:alice", "home_city", "Paris", valid_at=at(0))
    before = (head(mem), store.adapter.dump("m1", ("ledger", "payloads", "items")))
    with pytest.raises(HeadMoved) as info:
        with store.adapter.unit_of_work("m1") as uow:
            seq, _ = uow.head()
            uow.put_payload("pl_staged", "itm_staged", "Rome", "staged quote", b"salt")
            append_events(uow, [Event(EventType.KEY_DECLARED, {"key": "diet", "cardinality": "single",
                                                       "on_change": "supersede"})],
                       actor="owner", at="2024-01-01T00:00:00.000000Z", expected_seq=seq - 1)
    assert info.value.retryable and info.value.code == "head_moved"
    assert (head(mem), store.adapter.dump("m1", ("ledger", "payloads", "items"))) == before
    conn = sqlite3.connect(db_path)
    try:
        assert conn.execute("SELECT count(*) FROM payloads WHERE payload_id='pl_staged'"
                            ).fetchone()[0] == 0
    finally:
        conn.close()


def test_a_declared_cardinality_never_changes(store):
    mem = store.create_memory("m1")
    mem.remember("user:alice", "languages", "French")
    with pytest.raises(ConfigInvalid):
        store.update_config("m1", {"keys": {"languages": {"cardinality": "single"}}})
    store.update_config("m1", {"keys": {"languages": {"cardinality": "multi"}}})
    fresh = store.memory("m1")
    fresh.remember("user:bob", "languages", "German")
    fresh.remember("user:bob", "languages", "Dutch")
    assert sorted(fresh.inspect("user:bob", "languages").value) == ["Dutch", "German"]


def test_remember_many_commits_all_in_one_transaction_or_nothing(memory):
    head = memory.status()["head_seq"]
    with pytest.raises(remem.InvalidInput) as e:
        memory.remember_many([{"scope": "user:a", "key": "diet", "value": "vegan"},
                              {"scope": "user:a", "key": "home_city", "value": ""}])
    assert e.value.details["index"] == 1
    assert memory.status()["head_seq"] == head  # nothing written
    out = memory.remember_many([{"scope": "user:a", "key": "diet", "value": "vegan"},
                                {"scope": "user:a", "key": "diet", "value": "vegan"},
                                {"scope": "user:a", "key": "languages", "value": "Basque"}])
    assert [r.outcome for r in out] == ["created", "duplicate", "created"]
    assert memory.inspect("user:a", "diet").value == "vegan"
