"""Recall controls, item metadata, list totals and strict scope handles over HTTP."""

from __future__ import annotations

import json

import pytest
from apikit import assert_error

ALICE = "user:alice"


def recall(api, as_="alice", **body):
    return api.post("/memory/m1/recall", as_, json={
        "scopes": [ALICE], "query": "diet employer city", "budget_tokens": 4000, **body})


def test_metadata_is_stored_listed_filtered_and_recalled(api):
    w = api.remember("alice", ALICE, "employer", "Acme", metadata={"app": "crm", "n": 3})
    api.remember("alice", ALICE, "diet", "vegan", metadata={"app": "chat", "n": 1})
    item = api.get(f"/memory/m1/items/{w['item_id']}", "alice").json()
    assert item["metadata"] == {"app": "crm", "n": 3}
    page = api.get("/memory/m1/items", "alice", params={
        "filters": json.dumps({"metadata": {"n": {"gte": 2}}})}).json()
    assert [i["key"] for i in page["items"]] == ["employer"] and page["total"] == 1
    r = recall(api, filters={"metadata": {"app": {"in": ["chat"]}}}, mode="lexical")
    assert r.status_code == 200, r.text
    assert [(i["key"], i["metadata"]) for i in r.json()["items"]] == [
        ("diet", {"app": "chat", "n": 1})]


def test_observe_metadata_reaches_the_derived_fact(api):
    r = api.post("/memory/m1/observe", "alice", json={
        "scope": ALICE, "text": "I live in Lyon.", "metadata": {"channel": "web"}})
    assert r.status_code == 202, r.text
    page = api.get("/memory/m1/items", "alice", params={"key": "home_city"}).json()
    assert page["items"][0]["metadata"] == {"channel": "web"}


def test_every_page_carries_the_exact_total(api):
    for i in range(5):
        api.remember("alice", ALICE, f"fact_{i}", i, metadata={"odd": i % 2 == 1})
    api.remember("bob", "user:bob", "fact_x", 1, metadata={"odd": True})
    f = json.dumps({"metadata": {"odd": True}})
    first = api.get("/memory/m1/items", "alice", params={"limit": 1, "filters": f}).json()
    second = api.get("/memory/m1/items", "alice", params={
        "limit": 1, "filters": f, "cursor": first["next_cursor"]}).json()
    assert (first["total"], second["total"]) == (2, 2)  # bob's item is not alice's to count
    assert second["next_cursor"] is None
    assert api.get("/memory/m1/items", "alice").json()["total"] == 5


@pytest.mark.parametrize("body, named", [
    ({"filters": {"metadata": {"app": {"like": "c%"}}}}, "like"),
    ({"filters": {"colour": "red"}}, "colour"),
    ({"mode": "semantic"}, "semantic"),
    ({"filters": {"valid_at": "since tuesday"}}, "since tuesday"),
])
def test_controls_that_cannot_be_honoured_are_400_invalid_input(api, body, named):
    err = assert_error(recall(api, **body), 400, "invalid_input")
    assert named in err["message"]


def test_a_bad_items_filter_is_400(api):
    for bad in ("{not json", json.dumps({"metadata": {"x": {"between": [1, 2]}}})):
        r = api.get("/memory/m1/items", "alice", params={"filters": bad})
        assert_error(r, 400, "invalid_input")


def test_a_malformed_key_or_an_overlong_window_on_items_is_400_not_empty_or_500(api):
    for params in ({"key": "NOT A KEY"}, {"key": "\u00ff\u00fe"},
                   {"filters": json.dumps({"recorded_at": "last 999999 days"})},
                   {"filters": json.dumps({"valid_at": {"gte": "999999 weeks ago"}})}):
        assert_error(api.get("/memory/m1/items", "alice", params=params), 400, "invalid_input")
    err = assert_error(recall(api, filters={"recorded_at": "last 999999 weeks"}), 400,
                       "invalid_input")
    assert "before the year 1" in err["message"]


def test_relative_windows_use_the_explicit_now(api):
    api.remember("alice", ALICE, "trip", "Rome", valid_at="2026-05-30T00:00:00Z")
    f = {"valid_at": "last 7 days"}
    assert [i["key"] for i in recall(api, query="trip", filters=f,
                                     now="2026-06-01T00:00:00Z").json()["items"]] == ["trip"]
    assert recall(api, query="trip", filters=f, now="2026-09-01T00:00:00Z").json()[
        "items"] == []


@pytest.mark.parametrize("scope", ["user:alice/x", "user:*", "user:al ice", "user/alice",
                                   "all:*", "user:", "USER:alice", "user:alice\t"])
def test_scope_handles_outside_the_grammar_are_400_and_write_nothing(api, scope):
    before = api.get("/memory/m1/items", "admin", params={"status": "all"}).json()["total"]
    r = api.post("/memory/m1/items", "admin", json={"scope": scope, "key": "diet",
                                                    "value": "vegan"})
    assert_error(r, 400, "invalid_input")
    r = api.post("/memory/m1/observe", "admin", json={"scope": scope, "text": "I am vegan."})
    assert_error(r, 400, "invalid_input")
    assert_error(recall(api, as_="admin", scopes=[scope]), 400, "invalid_input")
    r = api.get("/memory/m1/items", "admin", params={"scope": scope})
    assert_error(r, 400, "invalid_input")
    after = api.get("/memory/m1/items", "admin", params={"status": "all"}).json()["total"]
    assert after == before == 0
