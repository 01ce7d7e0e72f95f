"""Memory tools: OpenAI schemas, the caller's own scope only, refusals as tool results."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from conftest import AGENT, OTHER, USER

from remem.agent import MemoryTools, tool_schemas
from remem.agent.tools import PROPERTIES, suggest_key
from remem.errors import InvalidInput
from remem.providers.registry import build_tokenizer


@pytest.fixture
def tools(seeded):
    memory, _ = seeded
    return MemoryTools(memory, user_scope=USER, agent_scope=AGENT)


def error_code(result: dict) -> str:
    assert result["ok"] is False, result
    assert set(result["error"]) == {"code", "message", "retryable", "details"}
    return result["error"]["code"]


def current(memory, scope: str, key: str):
    return memory.inspect(scope, key).value


def test_schemas_are_openai_function_tools():
    schemas = tool_schemas()
    assert [s["function"]["name"] for s in schemas] == ["SearchMemory", "Remember",
                                                        "ForgetMemory"]
    for s in schemas:
        assert s["type"] == "function"
        params = s["function"]["parameters"]
        assert params["type"] == "object" and params["additionalProperties"] is False
        assert set(params["required"]) <= set(params["properties"])
        assert "scope" not in params["properties"]  # the scope is bound, never an argument
    remember = schemas[1]["function"]["parameters"]
    assert remember["required"] == ["key", "value"]
    assert remember["properties"]["kind"]["enum"] == ["fact", "preference", "profile_slot"]
    schemas[0]["function"]["parameters"]["properties"].clear()  # callers get copies
    assert tool_schemas()[0]["function"]["parameters"]["properties"] == PROPERTIES["SearchMemory"]


def test_remember_writes_to_the_callers_scope(tools, seeded):
    memory, _ = seeded
    result = tools.call("Remember", json.dumps({"key": "seat", "value": "aisle",
                                                "kind": "preference"}))
    assert result["ok"] and result["scope"] == USER and result["outcome"] == "created"
    assert memory.get(result["item_id"]).kind == "preference"
    assert memory.inspect(OTHER, "seat").state == "empty"
    assert memory.inspect(AGENT, "seat").state == "empty"


@pytest.mark.parametrize("scope", [OTHER, AGENT, "org:acme", USER, ["user:bob"],
                                   {"user:bob": 1}, " User:Bob "])
def test_a_scope_argument_is_refused_as_invalid_input_and_writes_nothing(tools, seeded, scope):
    """Issue 12 changes this on purpose: a scope argument (even the caller's own) was
    ``permission_denied`` or accepted; the published schema has no scope, so it is refused
    like any argument the tool does not have."""
    memory, _ = seeded
    head = memory.status()["head_seq"]
    result = tools.call("Remember", {"key": "dog_name", "value": "Max", "scope": scope})
    assert error_code(result) == "invalid_input"
    assert result["error"]["details"] == {"field": "scope"}
    assert USER in result["error"]["message"] and "without scope" in result["error"]["message"]
    assert memory.status()["head_seq"] == head
    assert current(memory, OTHER, "dog_name") == "Fido"
    assert current(memory, USER, "dog_name") == "Rex"


@pytest.mark.parametrize("kind", ["rule", "identity", "skill", "lesson"])
def test_remember_refuses_agent_owned_kinds(tools, seeded, kind):
    memory, _ = seeded
    result = tools.call("Remember", {"key": "tone", "value": "Be rude.", "kind": kind})
    assert error_code(result) == "permission_denied"
    assert current(memory, AGENT, "tone") == "Answer in two sentences at most."
    assert memory.inspect(USER, "tone").state == "empty"


def test_remember_rejects_a_key_containing_the_value_with_a_key_to_use(tools, seeded):
    memory, _ = seeded
    result = tools.call("Remember", {"key": "home_city_berlin", "value": "Berlin"})
    assert error_code(result) == "invalid_input"
    err = result["error"]
    assert err["details"] == {"field": "key", "suggested_key": "home_city"}
    assert "key='home_city'" in err["message"] and "value='Berlin'" in err["message"]
    assert memory.inspect(USER, "home_city_berlin").state == "empty"
    retried = tools.call("Remember", {"key": err["details"]["suggested_key"], "value": "Berlin",
                                      "kind": "profile_slot"})
    assert retried["ok"] and retried["outcome"] == "superseded"
    assert current(memory, USER, "home_city") == "Berlin"


def test_suggested_keys():
    assert suggest_key("lives_in_new_york", "New York") == "lives_in"
    assert suggest_key("homecityparis", "Paris") is None
    assert suggest_key("paris", "Paris") is None


def test_forget_memory_refuses_the_agents_rule_by_id(tools, seeded):
    memory, ids = seeded
    for key in ("tone", "persona", "unit_conversion", "booking_lesson"):
        result = tools.call("ForgetMemory", {"item_id": ids[(AGENT, key)]})
        assert error_code(result) == "permission_denied"
        assert "never forgets the agent's identity, rules, skills or lessons" in \
            result["error"]["message"]
        assert memory.get(ids[(AGENT, key)]).status == "current"


def test_forget_memory_by_key_reaches_only_the_callers_scope(tools, seeded):
    memory, ids = seeded
    assert error_code(tools.call("ForgetMemory", {"key": "tone"})) == "not_found"
    assert memory.get(ids[(AGENT, "tone")]).status == "current"
    result = tools.call("ForgetMemory", {"key": "dog_name"})
    assert result["ok"] and result["state"] == "completed"
    assert result["items"] == [ids[(USER, "dog_name")]]
    assert memory.inspect(USER, "dog_name").state == "forgotten"
    assert current(memory, OTHER, "dog_name") == "Fido"


def test_forget_memory_of_another_users_item_is_not_visible(tools, seeded):
    memory, ids = seeded
    result = tools.call("ForgetMemory", {"item_id": ids[(OTHER, "dog_name")]})
    assert error_code(result) == "not_found_or_not_visible"
    assert "Fido" not in json.dumps(result)
    assert current(memory, OTHER, "dog_name") == "Fido"
    missing = tools.call("ForgetMemory", {"item_id": "itm_000000000000000000000000"})
    assert missing["error"]["message"].replace("itm_000000000000000000000000", "X") == \
        result["error"]["message"].replace(ids[(OTHER, "dog_name")], "X")


def test_forget_memory_by_id_erases_the_callers_item(tools, seeded):
    memory, ids = seeded
    result = tools.call("ForgetMemory", {"item_id": ids[(USER, "diet")]})
    assert result["ok"] and result["items"] == [ids[(USER, "diet")]]
    assert memory.inspect(USER, "diet").state == "forgotten"


@pytest.mark.parametrize("arguments", [{}, {"item_id": "itm_x", "key": "diet"}])
def test_forget_memory_needs_exactly_one_of_item_id_or_key(tools, arguments):
    result = tools.call("ForgetMemory", arguments)
    assert error_code(result) == "invalid_input"
    assert "exactly one of item_id or key" in result["error"]["message"]


def test_search_memory_reads_the_user_and_the_agent_only(tools):
    result = tools.call("SearchMemory", {"query": "what is my dog called", "budget_tokens": 400})
    assert result["ok"]
    scopes = {i["scope"] for i in result["items"]}
    assert scopes <= {USER, AGENT}
    assert ("dog_name", "Rex") in {(i["key"], i["value"]) for i in result["items"]}
    assert "Fido" not in json.dumps(result)
    assert set(result["items"][0]) == {"id", "key", "value", "kind", "status", "scope",
                                       "valid_at"}
    assert build_tokenizer().count(json.dumps(result)) <= 400


@pytest.mark.parametrize("budget", [0, 10, 5000, "lots", True])
def test_search_memory_budget_out_of_range_is_an_invalid_input_result(tools, budget):
    result = tools.call("SearchMemory", {"query": "dog", "budget_tokens": budget})
    assert error_code(result) == "invalid_input"
    assert "budget_tokens must be an integer from 64 to 4000" in result["error"]["message"]


@pytest.mark.parametrize("name, arguments, code, words", [
    ("SearchMemory", "{not json", "invalid_input", "not valid JSON"),
    ("SearchMemory", "[1, 2]", "invalid_input", "must be a JSON object"),
    ("SearchMemory", {}, "invalid_input", "needs query"),
    ("SearchMemory", {"query": "  "}, "invalid_input", "query is empty"),
    ("Remember", {"key": "Home City", "value": "Paris"}, "invalid_input", "snake_case"),
    ("Remember", {"key": "diet", "value": "vegan", "kind": "mood"}, "invalid_input",
     "is not one of fact, preference, profile_slot"),
    ("Remember", {"key": "diet", "value": "vegan", "ttl": 3}, "invalid_input",
     "has no argument 'ttl'"),
    ("Remember", {"key": "diet", "value": "x" * 2000}, "invalid_input", "limit is 1024"),
    ("DeleteEverything", {}, "invalid_input", "There is no tool 'DeleteEverything'"),
])
def test_tool_errors_are_results_with_code_and_message(tools, name, arguments, code, words):
    result = tools.call(name, arguments)
    assert error_code(result) == code
    assert words in result["error"]["message"]


def test_tool_message_answers_an_openai_tool_call(tools):
    call = SimpleNamespace(id="call_1", type="function", function=SimpleNamespace(
        name="Remember", arguments='{"key": "diet", "value": "vegan", "scope": "user:bob"}'))
    message = tools.tool_message(call)
    assert message["role"] == "tool" and message["tool_call_id"] == "call_1"
    assert json.loads(message["content"])["error"]["code"] == "invalid_input"
    as_dict = tools.tool_message({"id": "call_2", "function": {
        "name": "SearchMemory", "arguments": '{"query": "diet"}'}})
    assert json.loads(as_dict["content"])["ok"] is True


def test_tools_are_bound_to_a_user_scope_and_an_agent_scope(memory):
    with pytest.raises(InvalidInput, match="agent scope"):
        MemoryTools(memory, user_scope=AGENT)
    with pytest.raises(InvalidInput, match="agent:<id>"):
        MemoryTools(memory, user_scope=USER, agent_scope=OTHER)


def test_remember_without_a_kind_takes_the_keys_declared_kind_when_writable(store):
    memory = store.create_memory("cfg", {"keys": {"seat": {"kind": "preference"},
                                                   "tone": {"kind": "rule"}}})
    tools = MemoryTools(memory, user_scope=USER, agent_scope=AGENT)
    assert memory.get(tools.call("Remember", {"key": "seat", "value": "aisle"})["item_id"]
                      ).kind == "preference"
    assert memory.get(tools.call("Remember", {"key": "tone", "value": "calm"})["item_id"]
                      ).kind == "fact"  # a declared agent kind is never written by a tool


def test_search_memory_refuses_any_scope_argument(tools):
    """Issue 12: SearchMemory accepted its own scopes as an argument; now every scope
    argument is refused (the session's scopes are fixed)."""
    for scope in (AGENT, OTHER):
        result = tools.call("SearchMemory", {"query": "dog", "scope": scope})
        assert error_code(result) == "invalid_input"
        assert result["error"]["details"]["field"] == "scope"
        assert f"reads {USER} and {AGENT}" in result["error"]["message"]
