"""A Log+Facts kind says who spoke (seed 001: an agent-message is the agent's words); a role
that contradicts it is refused with invalid_input naming ``role``, on observe, bulk observe
and import, so an agent-message can never become facts about the user. Real SQLite files."""

from __future__ import annotations

import json

import pytest

from remem.errors import InvalidInput

U = "user:alice"


@pytest.mark.parametrize("kind, role", [("agent-message", "user"), ("tool-result", "user"),
                                        ("system-message", "user"), ("internal-thought", "user"),
                                        ("user-message", "assistant"),
                                        ("agent-message", "owner"), ("user-message", "tool")])
def test_observe_refuses_a_role_that_contradicts_the_kind(store, kind, role):
    mem = store.create_memory("m1")
    with pytest.raises(InvalidInput) as info:
        mem.observe(U, "I live in Lyon.", kind=kind, role=role, source_id="s1")
    assert info.value.details["field"] == "role"
    assert kind in info.value.message and role in info.value.message
    with pytest.raises(InvalidInput):
        mem.observe_many(U, [{"text": "I live in Lyon.", "kind": kind, "role": role}])
    assert store.adapter.source("m1", "s1") is None
    assert mem.items(status="all").items == []


def test_an_agent_message_never_becomes_a_fact_about_the_user(store):
    mem = store.create_memory("m1")
    mem.observe(U, "I live in Lyon.", kind="agent-message", source_id="a1")
    assert mem.inspect(U, "home_city").value is None
    mem.observe(U, "I live in Lyon.", kind="user-message", source_id="u1")
    assert mem.inspect(U, "home_city").value == "Lyon"


@pytest.mark.parametrize("kind, role", [("user-message", "user"), ("user-message", "owner"),
                                        ("agent-message", "assistant"),
                                        ("agent-message", "agent"), ("tool-call", "assistant"),
                                        ("tool-result", "tool"), ("system-message", "system")])
def test_roles_the_kind_allows_are_recorded(store, kind, role):
    mem = store.create_memory("m1")
    r = mem.observe(U, "hello there", kind=kind, role=role, source_id="s1")
    assert r.receipt_id


def test_import_refuses_an_agent_message_whose_payload_says_user(store, tmp_path):
    src = store.create_memory("src")
    src.observe(U, "I live in Lyon.", kind="agent-message", source_id="a1")
    path = tmp_path / "x.jsonl"
    src.export_log_facts_to(path.open("wb"))
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    n, entry = next((i, r) for i, r in enumerate(lines, 1) if r.get("kind") == "agent-message")
    entry["payload"]["role"] = "user"
    entry.pop("contentHash", None)  # optional; it would no longer match
    path.write_text("\n".join(json.dumps(r) for r in lines) + "\n")
    dst = store.create_memory("dst")
    with pytest.raises(InvalidInput) as info:
        dst.import_log_facts(path)
    assert info.value.details == {"line": n, "field": "payload.role"}
    assert "role contradicts kind" in info.value.message
    assert dst.items(status="all").items == [] and store.adapter.source("dst", "a1") is None
