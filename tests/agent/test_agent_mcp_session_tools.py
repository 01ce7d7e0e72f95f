"""The MCP tools QueryMemory (``Memory.query``) and EndSession (``Memory.deactivate``) over the
SDK's client against the real ``remem mcp`` process: arguments parsed strictly (an unknown
argument, ``scope`` or a wrong type is an invalid_input result), the bound caller's scopes
only (Bob's items never come back), and the session's deactivation brings consolidation
forward once. KipDescriptor, which also takes no arguments, refuses one the same way."""

from __future__ import annotations

import asyncio
import json
import os
import sys

import pytest
from conftest import AGENT, OTHER, USER

mcp = pytest.importorskip("mcp")


def _params(db_path):
    return mcp.StdioServerParameters(
        command=sys.executable,
        args=["-m", "remem.cli.main", "--db", str(db_path), "mcp", "--memory", "m1",
              "--scope", USER, "--agent", AGENT], env=dict(os.environ))


async def _call(client, name: str, arguments: dict) -> tuple[bool, dict]:
    result = await client.call_tool(name, arguments)
    assert json.loads(result.content[0].text) == result.structured_content
    return result.is_error, result.structured_content


def test_query_and_end_session_over_mcp(seeded, db_path):
    memory, ids = seeded
    memory.store.close()

    async def session() -> dict:
        out: dict = {}
        async with mcp.Client(_params(db_path), read_timeout_seconds=60) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            out["schemas"] = {n: tools[n].input_schema for n in ("QueryMemory", "EndSession")}
            out["query"] = await _call(client, "QueryMemory", {"text": "my dog", "limit": 20})
            out["scope"] = await _call(client, "QueryMemory", {"text": "dog",
                                                               "scope": OTHER})
            out["typed"] = await _call(client, "QueryMemory", {"text": "dog", "limit": "5"})
            out["empty"] = await _call(client, "QueryMemory", {"text": ""})
            out["end_args"] = await _call(client, "EndSession", {"now": True})
            out["descriptor_args"] = await _call(client, "KipDescriptor", {"bundle": "all"})
            out["end"] = await _call(client, "EndSession", {})
            out["again"] = await _call(client, "EndSession", {})
        return out

    out = asyncio.run(session())
    assert out["schemas"]["QueryMemory"]["additionalProperties"] is False
    assert "scope" not in out["schemas"]["QueryMemory"]["properties"]
    is_error, res = out["query"]
    assert not is_error and res["ok"] is True
    got = {(i["scope"], i["key"]) for i in res["items"]}
    assert (USER, "dog_name") in got and (OTHER, "dog_name") not in got
    assert {s for s, _ in got} <= {USER, AGENT}
    assert all(0 < i["meta"]["similarity"] <= 1 for i in res["items"])
    for name, field in (("scope", "scope"), ("typed", "limit"), ("empty", "text"),
                        ("end_args", "now"), ("descriptor_args", "bundle")):
        is_error, res = out[name]
        assert is_error and res["ok"] is False, name
        assert res["error"]["code"] == "invalid_input" and res["error"]["details"]["field"] \
            == field, name
    is_error, res = out["end"]
    assert not is_error and res["ended"] is True
    assert res["deactivation"]["consolidation"]["kind"] == "consolidate"
    assert "job_id" not in res["deactivation"]["consolidation"]  # a scoped caller's view
    is_error, res = out["again"]
    assert not is_error and res["ended"] is False  # once per session
