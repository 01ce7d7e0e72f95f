"""MCP round trip: the SDK's client against the real ``remem mcp`` process over stdio."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import pytest
from conftest import AGENT, OTHER, USER

import remem
from remem.agent.tools import PROPERTIES, TOOL_NAMES

mcp = pytest.importorskip("mcp")


def server_params(db_path, *extra: str):
    # The whole environment (PYTHONPATH included): the SDK's default passes only a few
    # variables, so the server would import an installed remem instead of this tree's.
    return mcp.StdioServerParameters(
        command=sys.executable,
        args=["-m", "remem.cli.main", "--db", str(db_path), "mcp", "--memory", "m1",
              "--scope", USER, *extra], env=dict(os.environ))


async def call(client, name: str, arguments: dict) -> tuple[bool, dict]:
    result = await client.call_tool(name, arguments)
    text = json.loads(result.content[0].text)
    assert text == result.structured_content
    return result.is_error, result.structured_content


@pytest.fixture
def db_with_memory(seeded, db_path):
    memory, ids = seeded
    memory.store.close()  # the server process opens the file on its own
    return db_path, ids


def test_mcp_round_trip_with_the_sdk_client(db_with_memory):
    db_path, ids = db_with_memory

    async def session() -> dict:
        out: dict = {}
        async with mcp.Client(server_params(db_path, "--agent", AGENT),
                              read_timeout_seconds=60) as client:
            listed = (await client.list_tools()).tools
            out["tools"] = {t.name: t for t in listed}
            out["remember"] = await call(client, "Remember",
                                         {"key": "seat", "value": "aisle", "kind": "preference"})
            out["search"] = await call(client, "SearchMemory",
                                       {"query": "which seat do I like", "budget_tokens": 300})
            out["rule"] = await call(client, "Remember",
                                     {"key": "tone", "value": "Be rude.", "kind": "rule"})
            out["forget_rule"] = await call(client, "ForgetMemory",
                                            {"item_id": ids[(AGENT, "tone")]})
            out["forget_bob"] = await call(client, "ForgetMemory",
                                           {"item_id": ids[(OTHER, "dog_name")]})
            out["bad_key"] = await call(client, "Remember",
                                        {"key": "home_city_rome", "value": "Rome"})
            out["forget_key"] = await call(client, "ForgetMemory", {"key": "dog_name"})
            out["resources"] = [str(r.uri) for r in (await client.list_resources()).resources]
            out["descriptor"] = await call(client, "KipDescriptor", {})
            first = await client.read_resource("remem://profile")
            await call(client, "Remember", {"key": "home_city", "value": "Rome",
                                            "kind": "profile_slot"})
            second = await client.read_resource("remem://profile")
            out["profile"] = (first.contents[0].text, second.contents[0].text)
        return out

    out = asyncio.run(session())

    assert set(out["tools"]) == {*TOOL_NAMES, "KipDescriptor", "QueryMemory", "EndSession"}
    for name, tool in out["tools"].items():
        if name in ("KipDescriptor", "QueryMemory", "EndSession"):
            continue
        props = tool.input_schema["properties"]
        for arg, schema in PROPERTIES[name].items():
            assert {k: v for k, v in props[arg].items() if k in schema} == schema
        assert "scope" not in props
    assert out["tools"]["SearchMemory"].input_schema["required"] == ["query"]

    is_error, res = out["remember"]
    assert not is_error and res["scope"] == USER and res["outcome"] == "created"
    is_error, res = out["search"]
    assert not is_error and ("seat", "aisle") in {(i["key"], i["value"]) for i in res["items"]}
    assert {i["scope"] for i in res["items"]} <= {USER, AGENT}
    for refused, code in (("rule", "permission_denied"), ("forget_rule", "permission_denied"),
                          ("forget_bob", "not_found_or_not_visible"),
                          ("bad_key", "invalid_input")):
        is_error, res = out[refused]
        assert is_error and res["ok"] is False and res["error"]["code"] == code, refused
        assert res["error"]["message"]
    assert out["bad_key"][1]["error"]["details"]["suggested_key"] == "home_city"
    is_error, res = out["forget_key"]
    assert not is_error and res["items"] == [ids[(USER, "dog_name")]]

    assert out["resources"] == ["remem://profile"]
    is_error, res = out["descriptor"]
    from remem.service.kip_schema import errors as kip_errors

    assert not is_error and kip_errors(res["descriptor"], "Descriptor") == []
    assert res["descriptor"]["default_scope"] == {"task_ref": USER}
    first, second = out["profile"]
    assert first == second  # pinned for the server's session
    assert "Answer in two sentences at most." in first and '"Paris"' in first
    assert "Rome" not in second

    store = remem.open(db_path)
    try:
        memory = store.memory("m1")
        assert memory.inspect(USER, "seat").value == "aisle"
        assert memory.inspect(USER, "home_city").value == "Rome"
        assert memory.inspect(AGENT, "tone").value == "Answer in two sentences at most."
        assert memory.inspect(OTHER, "dog_name").value == "Fido"
        assert memory.inspect(USER, "dog_name").state == "forgotten"
    finally:
        store.close()


def test_remem_mcp_reports_a_missing_memory_on_stderr(db_path):
    remem.open(db_path).close()
    proc = subprocess.run([sys.executable, "-m", "remem.cli.main", "--db", str(db_path), "mcp",
                           "--memory", "nope", "--scope", USER],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 1 and proc.stdout == ""
    assert "not_found" in proc.stderr and "nope" in proc.stderr


def test_remem_mcp_refuses_an_agent_scope_as_the_callers_scope(db_path):
    proc = subprocess.run([sys.executable, "-m", "remem.cli.main", "--db", str(db_path), "mcp",
                           "--memory", "m1", "--scope", AGENT],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 1 and proc.stdout == ""
    assert "invalid_input" in proc.stderr


def test_mcp_refuses_unknown_scope_and_mistyped_arguments_and_writes_nothing(db_with_memory):
    """Issue 12: the SDK used to drop unknown arguments (ForgetMemory {key, scope: bob}
    forgot Alice's key) and convert JSON-looking strings; every argument now reaches the one
    parser, and a refusal is an isError result with invalid_input naming the field."""
    db_path, ids = db_with_memory
    store = remem.open(db_path)
    before = {i.item_id: i.status for i in store.memory("m1").items(status="all").items}
    store.close()
    refusals = [
        ("ForgetMemory", {"key": "dog_name", "scope": OTHER}, "scope"),
        ("ForgetMemory", {"item_id": ids[(USER, "dog_name")], "scope": USER}, "scope"),
        ("SearchMemory", {"query": "dog", "scope": OTHER}, "scope"),
        ("Remember", {"key": "seat", "value": "aisle", "ttl": 3}, "ttl"),
        ("Remember", {"key": "seat", "value": "aisle", "__class__": "x"}, "__class__"),
        ("Remember", {"key": "seat", "value": {"side": "aisle"}}, "value"),
        ("Remember", {"key": "seat", "value": "aisle", "kind": 3}, "kind"),
        ("ForgetMemory", {"item_id": 123}, "item_id"),
        ("SearchMemory", {"query": "dog", "budget_tokens": "500"}, "budget_tokens"),
        ("SearchMemory", {"query": ["dog"]}, "query"),
    ]

    async def session() -> dict:
        out: dict = {}
        async with mcp.Client(server_params(db_path, "--agent", AGENT),
                              read_timeout_seconds=60) as client:
            out["schemas"] = {t.name: t.input_schema for t in (await client.list_tools()).tools}
            out["refused"] = [await call(client, name, args) for name, args, _ in refusals]
            out["text"] = await call(client, "Remember", {"key": "seat", "value": "[1, 2]"})
        return out

    out = asyncio.run(session())

    own = {"QueryMemory": {"text", "limit"}}  # mcp.py's own tools (EndSession: none)
    for name, schema in out["schemas"].items():
        assert schema["additionalProperties"] is False and set(schema["properties"]) == set(
            PROPERTIES.get(name, own.get(name, ())))  # KipDescriptor takes no arguments
    for (name, args, field), (is_error, res) in zip(refusals, out["refused"], strict=True):
        assert is_error and res["ok"] is False, (name, args, res)
        assert res["error"]["code"] == "invalid_input", (name, args, res)
        assert res["error"]["details"]["field"] == field, (name, args, res)
    is_error, res = out["text"]
    assert not is_error and res["outcome"] == "created"

    store = remem.open(db_path)
    try:
        memory = store.memory("m1")
        after = {i.item_id: i.status for i in memory.items(status="all").items}
        assert after.pop(res["item_id"]) == "current" and after == before  # one write only
        assert memory.inspect(USER, "dog_name").value == "Rex"
        assert memory.inspect(OTHER, "dog_name").value == "Fido"
        assert memory.inspect(USER, "seat").value == "[1, 2]"  # text, not a parsed array
    finally:
        store.close()
