"""Observe, recall, context and profile over HTTP, within visible scopes and budgets."""

from __future__ import annotations

import pytest
from apikit import assert_error

from remem.providers.registry import build_tokenizer


@pytest.fixture
def seeded(api):
    api.remember("alice", "user:alice", "home_city", "Paris", kind="profile_slot")
    api.remember("bob", "user:bob", "home_city", "Oslo", kind="profile_slot")
    api.remember("bot", "agent:bot", "tone", "Answer in one sentence.", kind="rule")
    return api


def test_observe_records_a_source_and_returns_its_receipt(api):
    r = api.post("/memory/m1/observe", "alice", json={
        "scope": "user:alice", "text": "I moved to Berlin last week", "source_id": "turn-1"})
    assert r.status_code == 202
    # a scoped token's source ids live under its scope; derived inline
    assert (r.json()["source_id"], r.json()["phase"]) == ("user:alice/turn-1", "available")
    again = api.post("/memory/m1/observe", "alice", json={
        "scope": "user:alice", "text": "I moved to Berlin last week", "source_id": "turn-1"})
    assert again.json()["replayed"] is True
    assert again.json()["receipt_id"] == r.json()["receipt_id"]


def test_observe_needs_write_access_to_the_scope(api):
    body = {"scope": "user:bob", "text": "Bob said hi"}
    assert_error(api.post("/memory/m1/observe", "alice", json=body), 403, "permission_denied")
    body["scope"] = "user:alice"
    assert_error(api.post("/memory/m1/observe", "alice_reader", json=body), 403,
                 "permission_denied")


def test_recall_reads_the_users_scope_and_the_agent_scope_within_budget(seeded):
    r = seeded.post("/memory/m1/recall", "alice_reader", json={
        "scopes": ["user:alice", "agent:bot"], "query": "where does alice live",
        "budget_tokens": 300})
    assert r.status_code == 200, r.text
    body = r.json()
    values = {i["value"] for i in body["items"]}
    assert "Paris" in values and "Oslo" not in values
    assert build_tokenizer(body["tokenizer"]).count(body["text"]) <= 300
    r = seeded.post("/memory/m1/recall", "alice_reader", json={
        "scopes": ["agent:bot"], "query": "tone: answer in one sentence", "budget_tokens": 300})
    assert [i["value"] for i in r.json()["items"]] == ["Answer in one sentence."]


def test_recall_of_a_scope_the_token_cannot_see_is_denied(seeded):
    r = seeded.post("/memory/m1/recall", "alice", json={
        "scopes": ["user:alice", "user:bob"], "query": "home city", "budget_tokens": 300})
    assert_error(r, 403, "permission_denied")
    assert "Oslo" not in r.text


def test_context_stays_within_max_bytes(seeded):
    r = seeded.post("/memory/m1/context", "alice", json={
        "scopes": ["user:alice"], "query": "city", "max_bytes": 400})
    assert r.status_code == 200 and len(r.content) <= 400
    assert [i["value"] for i in r.json()["items"]] == ["Paris"]


def test_a_pinned_profile_is_byte_identical_per_activation(seeded):
    params = [("scopes", "user:alice"), ("scopes", "agent:bot"), ("activation_id", "a1"),
              ("budget_tokens", "400")]
    first = seeded.get("/memory/m1/profile", "alice_reader", params=params)
    second = seeded.get("/memory/m1/profile", "alice_reader", params=params)
    assert first.status_code == 200 and first.content == second.content
    assert {i["value"] for i in first.json()["items"]} == {"Paris", "Answer in one sentence."}
    r = seeded.get("/memory/m1/profile", "alice", params=[("scopes", "user:bob")])
    assert_error(r, 403, "permission_denied")
    assert_error(seeded.get("/memory/m1/profile", "alice"), 422, "validation_failed")
