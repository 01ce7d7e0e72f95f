"""Tool calls are parsed into typed requests before anything runs (issue 12, "The MCP server
and the agent tools reject unknown or mistyped arguments"): ``MemoryTools.call`` here, the
MCP server over a real stdio session in ``test_agent_mcp.py``."""

from __future__ import annotations

import json

import pytest
from conftest import AGENT, OTHER, USER

from remem.agent import MemoryTools
from remem.agent.toolspec import PROPERTIES, REQUESTS, REQUIRED, TOOL_NAMES, parse_call

# One sample of each JSON type, and the schema type names that admit it.
SAMPLES = [("text", {"string"}), (7, {"integer", "number"}), (2.5, {"number"}),
           (True, {"boolean"}), ([1], {"array"}), ({"a": 1}, {"object"})]


@pytest.fixture
def tools(seeded):
    memory, _ = seeded
    return MemoryTools(memory, user_scope=USER, agent_scope=AGENT)


def refused(result: dict, field: str) -> str:
    assert result["ok"] is False, result
    assert result["error"]["code"] == "invalid_input", result
    assert result["error"]["details"]["field"] == field, result
    return result["error"]["message"]


def test_each_request_model_has_exactly_the_published_arguments():
    for name in TOOL_NAMES:
        fields = REQUESTS[name].model_fields
        assert set(fields) == set(PROPERTIES[name]), name
        assert {f for f, info in fields.items() if info.is_required()} == set(REQUIRED[name])


@pytest.mark.parametrize("name, field", [(n, f) for n in TOOL_NAMES for f in PROPERTIES[n]])
def test_each_argument_takes_exactly_the_json_types_its_schema_publishes(name, field):
    spec = PROPERTIES[name][field]
    published = set(spec["type"] if isinstance(spec["type"], list) else [spec["type"]])
    base = {"query": "q"} if name == "SearchMemory" else {"key": "k", "value": "v"} \
        if name == "Remember" else {}
    for sample, json_types in SAMPLES:
        try:
            parse_call(name, {**base, field: sample}, scopes_note="-")
            accepted = True
        except Exception as exc:  # noqa: BLE001 - the kind of refusal is checked below
            assert getattr(exc, "code", None) == "invalid_input", exc
            assert exc.details["field"] == field
            accepted = False
        assert accepted == bool(json_types & published), (name, field, sample)


@pytest.mark.parametrize("name, arguments, field", [
    ("Remember", {"key": "diet", "value": "vegan", "ttl": 3}, "ttl"),
    ("Remember", {"key": "diet", "value": "vegan", "user": "bob"}, "user"),
    ("Remember", {"key": "diet", "value": "vegan", "__class__": "x", "model_config": {}},
     "__class__"),
    ("ForgetMemory", {"key": "dog_name", "memory_id": "other"}, "memory_id"),
    ("SearchMemory", {"query": "dog", "scopes": [OTHER]}, "scopes"),
    ("Remember", {"key": 5, "value": "vegan"}, "key"),
    ("Remember", {"key": "diet", "value": {"a": 1}}, "value"),
    ("Remember", {"key": "diet", "value": ["vegan"]}, "value"),
    ("Remember", {"key": "diet", "value": "vegan", "kind": 1}, "kind"),
    ("ForgetMemory", {"item_id": 123}, "item_id"),
    ("ForgetMemory", {"key": ["dog_name"]}, "key"),
    ("SearchMemory", {"query": "dog", "budget_tokens": "500"}, "budget_tokens"),
    ("SearchMemory", {"query": "dog", "budget_tokens": 500.5}, "budget_tokens"),
    ("SearchMemory", {"query": 42}, "query"),
    ("Remember", '{"key": "diet", "value": NaN}', "arguments"),
    ("Remember", '{"key": "diet", "value": "vegan", "key": "dog_name"}', "arguments"),
    ("Remember", '{"key": "diet", "value": ' + "[" * 100_000 + "]" * 100_000 + "}",
     "arguments"),
])
def test_unknown_or_mistyped_arguments_are_refused_and_nothing_is_written(
        tools, seeded, name, arguments, field):
    memory, ids = seeded
    head = memory.status()["head_seq"]
    message = refused(tools.call(name, arguments), field)
    assert message.endswith(".") and len(message) < 400
    assert memory.status()["head_seq"] == head
    assert memory.get(ids[(USER, "dog_name")]).status == "current"


def test_forget_memory_with_another_users_scope_refuses_instead_of_forgetting_the_callers(
        tools, seeded):
    """The issue's attack: the scope argument used to be dropped (MCP), so the caller's own
    key was forgotten instead."""
    memory, ids = seeded
    message = refused(tools.call("ForgetMemory", {"key": "dog_name", "scope": OTHER}), "scope")
    assert "Call ForgetMemory again without scope." in message
    assert memory.get(ids[(USER, "dog_name")]).status == "current"
    assert memory.get(ids[(OTHER, "dog_name")]).status == "current"


def test_a_type_error_says_what_was_given_and_what_to_send(tools):
    message = refused(tools.call("Remember", {"key": "diet", "value": {"a": 1}}), "value")
    assert message == ("Remember argument value must be a string, a finite number or a "
                       "boolean, got an object. Call Remember again with value as a string, "
                       "a finite number or a boolean.")


def test_json_looking_text_stays_text_and_integral_numbers_count_as_integers(tools, seeded):
    memory, _ = seeded
    stored = tools.call("Remember", {"key": "seat_rows", "value": "[1, 2]"})
    assert stored["ok"] and memory.get(stored["item_id"]).value == "[1, 2]"
    assert tools.call("SearchMemory", {"query": "seat", "budget_tokens": 300.0})["ok"]
    number = tools.call("Remember", {"key": "shoe_size", "value": 42})
    assert memory.get(number["item_id"]).value == 42


def test_null_for_an_optional_argument_means_not_given(tools, seeded):
    memory, _ = seeded
    result = tools.call("Remember", {"key": "seat", "value": "aisle", "kind": None})
    assert result["ok"] and memory.get(result["item_id"]).kind == "fact"
    assert tools.call("SearchMemory", {"query": "seat", "budget_tokens": None})["ok"]
    refused(tools.call("Remember", {"key": "seat", "value": None}), "value")
    forgot = tools.call("ForgetMemory", json.dumps({"item_id": None, "key": "seat"}))
    assert forgot["ok"] and forgot["items"] == [result["item_id"]]


@pytest.mark.parametrize("extra", ["scope", "model_extra", "__pydantic_extra__", "__dict__", "",
                                   "model_fields", "arguments", "self"])
def test_the_mcp_server_hands_every_argument_name_to_the_parser(seeded, extra):
    """In process (the stdio round trip is in test_agent_mcp.py): names that could collide
    with the SDK's argument model are refused like any other, never dropped or crashing."""
    import asyncio

    pytest.importorskip("mcp")
    from remem.agent.mcp import build_server

    memory, _ = seeded
    server = build_server(memory, user_scope=USER, agent_scope=AGENT)
    result = asyncio.run(server.call_tool("Remember", {"key": "seat", "value": "aisle",
                                                       extra: 1}))
    assert result.is_error and refused(result.structured_content, extra)
    assert memory.inspect(USER, "seat").state == "empty"
