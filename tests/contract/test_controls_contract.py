"""Recall controls and item metadata (issue 13 point 3, list totals of point 5), on both
backends: metadata round trip, every filter operator, time windows, recall modes, totals."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

import remem
from remem.errors import InvalidInput
from remem.service.apply import apply_document

U = "user:u1"
T = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def keys_of(result) -> set[str]:
    return {i["key"] for i in result.document["items"]}


def listed(mem, **kw) -> set[str]:
    return {v.key for v in mem.items(limit=1000, **kw).items}


# --- metadata -------------------------------------------------------------------------------
def test_metadata_round_trips_through_items_get_inspect_and_recall(mem):
    md = {"app": "crm", "priority": 2, "tags": ["work", "vip"], "ok": True, "none": None}
    w = mem.remember(U, "employer", "Acme Robotics", metadata=md)
    assert mem.get(w.item_id).metadata == md
    assert [v.metadata for v in mem.items().items] == [md]
    assert mem.inspect(U, "employer").current[0].metadata == md
    items = mem.recall(U, "employer", budget_tokens=4000).document["items"]
    assert items[0]["metadata"] == md
    plain = mem.remember(U, "diet", "pescatarian")
    assert mem.get(plain.item_id).metadata is None


def test_superseding_and_correcting_keep_metadata_unless_new_metadata_is_given(mem):
    first = mem.remember(U, "home_city", "Paris", metadata={"app": "crm"})
    moved = mem.remember(U, "home_city", "Lyon")
    assert moved.outcome == "superseded"
    assert mem.get(moved.item_id).metadata == {"app": "crm"}
    fixed = mem.correct(U, "home_city", "Lyons", expected_revision=moved.revision)
    assert mem.get(fixed.item_id).metadata == {"app": "crm"}
    again = mem.correct(U, "home_city", "Lyon", expected_revision=fixed.revision,
                        metadata={"app": "chat"})
    assert mem.get(again.item_id).metadata == {"app": "chat"}
    assert mem.get(first.item_id).metadata == {"app": "crm"}  # history keeps its own


def test_facts_derived_from_an_observation_inherit_its_metadata(mem):
    rc = mem.observe(U, "I live in Lyon.", metadata={"channel": "support"})
    assert rc.phase == "available"
    (city,) = mem.items(key="home_city").items
    assert city.metadata == {"channel": "support"}


def test_remember_many_and_apply_store_metadata(mem):
    mem.remember_many([{"scope": U, "key": "diet", "value": "vegan", "metadata": {"n": 1}}])
    apply_document(mem, '{"entity": "user:u1", "attribute": "employer", "value": "Acme", '
                        '"kind": "fact", "operation": "assert", "metadata": {"n": 2}}')
    assert {v.key: v.metadata for v in mem.items().items} == {"diet": {"n": 1},
                                                             "employer": {"n": 2}}


@pytest.mark.parametrize("bad", [
    "crm", ["a"], {"nested": {"x": 1}}, {"bad key": 1}, {f"k{i}": i for i in range(33)},
    {"big": "x" * 2100}, {"nan": float("nan")}, {"s": "\ud800"}])
def test_bad_metadata_is_invalid_input_and_writes_nothing(mem, bad):
    with pytest.raises(InvalidInput):
        mem.remember(U, "diet", "vegan", metadata=bad)
    assert mem.items(filters={"status": {"in": ["current", "superseded"]}}).total == 0


# --- filter operators -----------------------------------------------------------------------
@pytest.fixture
def tagged(mem):
    mem.remember(U, "a_key", "alpha", metadata={"n": 1, "app": "crm", "tags": ["x", "y"]})
    mem.remember(U, "b_key", "beta", metadata={"n": 5, "app": "chat"})
    mem.remember(U, "c_key", "gamma", metadata={"n": "5", "flag": True})
    mem.remember(U, "d_key", "delta")
    return mem


@pytest.mark.parametrize("cond, expected", [
    ({"app": "crm"}, {"a_key"}),
    ({"app": {"eq": "chat"}}, {"b_key"}),
    ({"app": {"ne": "crm"}}, {"b_key", "c_key", "d_key"}),
    ({"app": {"in": ["crm", "chat"]}}, {"a_key", "b_key"}),
    ({"app": {"nin": ["crm"]}}, {"b_key", "c_key", "d_key"}),
    ({"n": {"gt": 1}}, {"b_key"}),
    ({"n": {"gte": 1}}, {"a_key", "b_key"}),
    ({"n": {"lt": 5}}, {"a_key"}),
    ({"n": {"lte": 5}}, {"a_key", "b_key"}),
    ({"n": "5"}, {"c_key"}),  # JSON types never mix: "5" is not 5
    ({"flag": {"exists": True}}, {"c_key"}),
    ({"app": {"exists": False}}, {"c_key", "d_key"}),
    ({"tags": "y"}, {"a_key"}),  # a list matches when any element does
    ({"n": {"gte": 1, "lt": 5}}, {"a_key"}),
])
def test_each_metadata_operator_selects_exactly_its_items(tagged, cond, expected):
    f = {"metadata": cond}
    assert listed(tagged, filters=f) == expected
    assert tagged.items(filters=f).total == len(expected)
    got = keys_of(tagged.recall(U, "alpha beta gamma delta key", budget_tokens=4000,
                                filters=f))
    assert got == expected


@pytest.mark.parametrize("f, named", [
    ({"metadata": {"app": {"like": "c%"}}}, "like"),
    ({"metadata": {"app": {"regex": "."}}}, "regex"),
    ({"kind": {"gt": "fact"}}, "gt"),
    ({"valid_at": {"after": "now"}}, "after"),
])
def test_an_unknown_operator_is_invalid_input_naming_it(tagged, f, named):
    for call in (lambda: tagged.items(filters=f),
                 lambda: tagged.recall(U, "alpha", budget_tokens=4000, filters=f)):
        with pytest.raises(InvalidInput) as e:
            call()
        assert repr(named) in e.value.message and e.value.details["field"].startswith("filter")


@pytest.mark.parametrize("f", [
    {"metadata": {"n": {"in": "crm"}}}, {"metadata": {"n": {"exists": "yes"}}},
    {"kind": "thing"}, {"status": "gone"}, {"key": "Not A Key"}, {"unknown": 1},
    {"valid_at": "yesterday"}, {"recorded_at": {"gte": "2026-01-01"}}, "crm",
    {"metadata": {"n": {}}}, {"metadata": {"n": {"gt": [1]}}}])
def test_filters_that_cannot_be_honoured_are_errors_not_ignored(tagged, f):
    with pytest.raises(InvalidInput):
        tagged.items(filters=f)
    with pytest.raises(InvalidInput):
        tagged.recall(U, "alpha", budget_tokens=4000, filters=f)


def test_kind_key_and_status_filters(tagged):
    tagged.remember(U, "diet", "vegan", kind="preference")
    old = tagged.remember(U, "a_key", "alpha two")
    assert listed(tagged, filters={"kind": "preference"}) == {"diet"}
    assert listed(tagged, filters={"key": {"in": ["a_key", "diet"]}}) == {"a_key", "diet"}
    assert listed(tagged, filters={"kind": {"ne": "fact"}}) == {"diet"}
    hist = tagged.items(filters={"status": "superseded"})
    assert [v.key for v in hist.items] == ["a_key"] and hist.total == 1
    got = tagged.recall(U, "alpha", budget_tokens=4000, filters={"status": "superseded"})
    assert [(i["key"], i["status"]) for i in got.document["items"]] == [("a_key",
                                                                         "superseded")]
    assert keys_of(tagged.recall(U, "alpha diet", budget_tokens=4000,
                                 filters={"kind": "preference"})) == {"diet"}
    with pytest.raises(InvalidInput, match="archived"):
        tagged.recall(U, "alpha", budget_tokens=4000, filters={"status": "archived"})
    assert old.item_id in {v.item_id for v in tagged.items().items}


# --- time windows ---------------------------------------------------------------------------
def test_a_relative_valid_at_window_resolves_against_an_explicit_now(mem):
    for days, key in ((1, "recent_trip"), (10, "older_trip"), (40, "oldest_trip")):
        mem.remember(U, key, "a trip to Rome", valid_at=T - timedelta(days=days))
    week = {"valid_at": "last 7 days"}
    assert listed(mem, filters=week, now=T) == {"recent_trip"}
    assert listed(mem, filters=week, now=T + timedelta(days=30)) == set()
    assert listed(mem, filters={"valid_at": {"gte": "30 days ago", "lt": "5 days ago"}},
                  now=T) == {"older_trip"}
    assert listed(mem, filters={"valid_at": {"lt": "2026-05-01T00:00:00Z"}}) == {"oldest_trip"}
    got = mem.recall(U, "trip to Rome", budget_tokens=4000, filters=week, now=T)
    assert keys_of(got) == {"recent_trip"}
    with pytest.raises(InvalidInput):
        mem.items(filters=week, now=datetime(2026, 6, 1))  # naive: no zone


def test_a_recorded_time_window_uses_when_remem_recorded_the_item(clocked_store, clock):
    mem = clocked_store.create_memory("m1")
    old = datetime(2020, 1, 1, tzinfo=UTC)  # world time far in the past for both
    mem.remember(U, "first_note", "written early", valid_at=old)
    clock.advance(days=10)
    mem.remember(U, "second_note", "written later", valid_at=old)
    assert listed(mem, filters={"recorded_at": "last 3 days"}) == {"second_note"}
    assert listed(mem, filters={"recorded_at": {"lt": "5 days ago"}}) == {"first_note"}
    got = mem.recall(U, "note written", budget_tokens=4000,
                     filters={"recorded_at": "last 3 days"})
    assert keys_of(got) == {"second_note"}


# --- modes ----------------------------------------------------------------------------------
def test_lexical_and_vector_modes_search_different_channels(mem):
    mem.remember_many([{"scope": U, "key": f"note_{i}", "value": f"qz{i}vx wq{i}rt"}
                       for i in range(60)])  # a scope too big to rank every item
    mem.remember(U, "allergies", "peanuts")
    mem.remember(U, "license_plate", "XK-42 ZB")
    q = "which nuts make them sick"
    assert "allergies" not in keys_of(mem.recall(U, q, budget_tokens=4000, mode="lexical"))
    assert "allergies" in keys_of(mem.recall(U, q, budget_tokens=4000, mode="vector"))
    assert "allergies" in keys_of(mem.recall(U, q, budget_tokens=4000))
    exact = mem.recall(U, "license_plate", budget_tokens=4000, mode="lexical")
    assert "license_plate" in keys_of(exact)
    for bad in ("fuzzy", "", None, "HYBRID"):
        with pytest.raises(InvalidInput, match="mode"):
            mem.recall(U, q, budget_tokens=4000, mode=bad)


# --- totals ---------------------------------------------------------------------------------
@pytest.mark.parametrize("filters, expected", [
    (None, 23), ({"metadata": {"even": True}}, 12), ({"kind": "preference"}, 8),
    ({"kind": "preference", "metadata": {"even": False}}, 4)])
def test_items_total_is_exact_on_every_page(mem, filters, expected):
    mem.remember_many([{"scope": U, "key": f"k_{i:02d}", "value": i,
                        "kind": "preference" if i % 3 == 0 else "fact",
                        "metadata": {"even": i % 2 == 0}} for i in range(23)])
    seen, cursor, totals = [], None, set()
    while True:
        page = mem.items(limit=4, cursor=cursor, filters=filters)
        totals.add(page.total)
        seen += [v.key for v in page.items]
        cursor = page.next_cursor
        if cursor is None:
            break
    assert totals == {expected} and len(seen) == len(set(seen)) == expected


@pytest.mark.unmigrated
def test_open_of_a_new_store_migrates_to_metadata_columns(store_url):
    s = remem.open(store_url)
    s.create_memory("m1").remember(U, "diet", "vegan", metadata={"a": 1})
    s.close()
    s = remem.open(store_url)
    try:
        assert s.memory("m1").items().items[0].metadata == {"a": 1}
    finally:
        s.close()


def test_erasure_removes_metadata_with_the_text(mem):
    mem.observe(U, "I live in Lyon.", source_id="turn-1", metadata={"ref": "x1"})
    (city,) = mem.items(key="home_city").items
    payload_id = mem.store.item(mem.id, city.item_id).payload_id
    assert mem.store.payloads(mem.id, [payload_id])[payload_id]["metadata"] == {"ref": "x1"}
    mem.forget(city.item_id)
    assert mem.store.payloads(mem.id, [payload_id]) == {}
    assert mem.items(filters={"metadata": {"ref": {"exists": True}}}).total == 0
    other = mem.observe(U, "What a lovely morning.", source_id="turn-2",
                        metadata={"ref": "x2"})
    assert mem.store.source(mem.id, other.source_id)["metadata"] is not None
    mem.forget_source(other.source_id)
    assert mem.store.source(mem.id, other.source_id)["metadata"] is None
