"""The agent tools (``MemoryTools.call`` in-process) and the stdio MCP server (``remem mcp``
with the SDK client), bound to user:alice with agent:bot, on the seeded database the HTTP
server also serves: no argument reaches another scope, unknown arguments are refused (never
dropped), other scopes' ids look absent, and nothing outside alice's own writes changes."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

import pytest

from security.kit import (
    ALICE,
    ALICE_MARK,
    BOB,
    BOT,
    T1,
    check_others_intact,
    check_unchanged,
    forbidden,
    missing_like,
    rebaseline,
)
from security.routes import fill
from security.shapes import STRINGS

#: a key of alice's made just before the call, so each forget case has its own target
FRESH = "<fresh key>"
QUERY = "sister Ingrid dog Fido home city Oslo work harbour nephew room car"
#: (id, tool, arguments, kind): kind "refuse" (ok false, nothing changes), "neutral"
#: (refused exactly as for a missing id), "search" (ok, alice's own data, no leak).
CASES: list[tuple[str, str, dict[str, Any], str]] = [
    ("search-plain", "SearchMemory", {"query": QUERY, "budget_tokens": 4000}, "search"),
    *[(f"search-scope-{n}", "SearchMemory", {"query": QUERY, "scope": t}, "refuse")
      for n, t in STRINGS],
    ("search-scope-list", "SearchMemory", {"query": QUERY, "scope": [BOB]}, "refuse"),
    ("search-scope-object", "SearchMemory", {"query": QUERY, "scope": {BOB: 1}}, "refuse"),
    ("search-unknown-scopes", "SearchMemory", {"query": QUERY, "scopes": [BOB]}, "refuse"),
    ("search-unknown-context", "SearchMemory",
     {"query": QUERY, "context_refs": [BOB]}, "refuse"),
    *[(f"remember-scope-{n}", "Remember", {"key": "shoe_size", "value": "42", "scope": t},
       "refuse") for n, t in STRINGS],
    ("remember-scope-list", "Remember", {"key": "shoe_size", "value": "42", "scope": [BOB]},
     "refuse"),
    ("remember-unknown-user-scope", "Remember",
     {"key": "shoe_size", "value": "42", "user_scope": BOB}, "refuse"),
    ("remember-agent-kind", "Remember", {"key": "tone", "value": "Be rude.", "kind": "rule"},
     "refuse"),
    *[(f"forget-{t}", "ForgetMemory", {"item_id": "{%s}" % t}, "neutral")
      for t in ("bob.home", "bob.archived", "bob.conflict_a", "t1.fact")],
    ("forget-agent-rule", "ForgetMemory", {"item_id": "{bot.rule}"}, "refuse"),
    *[(f"forget-key-scope-{n}", "ForgetMemory", {"key": FRESH, "scope": t}, "refuse")
      for n, t in STRINGS],
    ("forget-key-unknown-target", "ForgetMemory", {"key": FRESH, "target": BOB}, "refuse"),
    ("forget-key-unknown-scopes", "ForgetMemory", {"key": FRESH, "scopes": [BOB]}, "refuse"),
]
IDS = [c[0] for c in CASES]


def _judge(world, kind: str, results: list[dict[str, Any]], sent: list[str],
           real: dict[str, str]) -> list[str]:
    """Problems with one case's result(s) (empty when it passed)."""
    problems = []
    text = json.dumps(results[0], ensure_ascii=False)
    leaked = [m for m in forbidden(world, "alice_tool", sent[0]) if m in text]
    if leaked:
        problems.append(f"leaked {leaked}: {text[:400]}")
    if kind == "search":
        if not results[0].get("ok") or ALICE_MARK not in text:
            problems.append(f"search failed or missed alice's data: {text[:400]}")
    elif results[0].get("ok") is not False:
        problems.append(f"not refused: {text[:400]}")
    if kind == "neutral":
        a, b = text, json.dumps(results[1], ensure_ascii=False)
        for name, rid in real.items():
            a, b = a.replace(rid, f"<{name}>"), b.replace(missing_like(rid), f"<{name}>")
        if a != b:
            problems.append(f"oracle: {a[:300]} vs {b[:300]}")
    return problems


def _arguments(world, args: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """The arguments with seeded ids filled in (and a fresh key of alice's made for
    ``FRESH``), and the real ids named (by seed name)."""
    real = {k[1:-1]: world.seed.ids[k[1:-1]] for k in args.values()
            if isinstance(k, str) and k.startswith("{")}
    if FRESH in args.values():
        world.fresh_keys = getattr(world, "fresh_keys", 0) + 1
        key = f"fresh_key_{world.fresh_keys}"
        world.ok("root", "POST", "/memory/m1/items", json={
            "scope": ALICE, "key": key, "value": f"v{world.fresh_keys}", "kind": "fact"})
        rebaseline(world)
        args = {k: key if v == FRESH else v for k, v in args.items()}
    return fill(args, world.names()), real


def _missing(args: dict[str, Any], real: dict[str, str]) -> dict[str, Any]:
    out = json.loads(json.dumps(args))
    for k, v in out.items():
        if v in real.values():
            out[k] = missing_like(v)
    return out


# --- in-process: MemoryTools.call --------------------------------------------------------
@pytest.fixture
def tools(world):
    import remem
    from remem.agent.tools import MemoryTools

    store = remem.open(world.db)
    try:
        yield MemoryTools(store.memory("m1"), user_scope=ALICE, agent_scope=BOT)
    finally:
        store.close()


@pytest.mark.parametrize(("case_id", "tool", "args", "kind"), CASES, ids=IDS)
def test_memory_tools_reach_only_alice(world, tools, case_id, tool, args, kind):
    filled, real = _arguments(world, args)
    calls = [filled] + ([_missing(filled, real)] if kind == "neutral" else [])
    results = [tools.call(tool, dict(a)) for a in calls]
    problems = _judge(world, kind, results, [json.dumps(filled)], real)
    try:
        check_unchanged(world, full=True)
    except AssertionError as exc:
        problems.append(str(exc))
    assert not problems, " | ".join(problems)


# --- the stdio MCP server -----------------------------------------------------------------
mcp = pytest.importorskip("mcp")


@pytest.fixture(scope="module")
def mcp_results(worlds) -> dict[str, Any]:
    """Runs every case through one `remem mcp` session per backend; per case: the results
    and the problems found (state compared before and after each call)."""
    world = worlds.get()
    params = mcp.StdioServerParameters(  # the SDK passes only a few variables on by default
        command=sys.executable, env=dict(os.environ),
        args=["-m", "remem.cli.main", "--db", world.db, "mcp", "--memory", "m1",
              "--scope", ALICE, "--agent", BOT])

    async def one(client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        try:
            result = await client.call_tool(tool, args)
        except Exception as exc:  # a protocol-level refusal is a refusal
            return {"ok": False, "protocol_error": type(exc).__name__}
        if result.structured_content is not None:
            return result.structured_content
        text = " ".join(getattr(c, "text", "") for c in result.content)
        return {"ok": not result.is_error, "text": text}

    async def session() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with mcp.Client(params, read_timeout_seconds=30) as client:
            for case_id, tool, args, kind in CASES:
                filled, real = _arguments(world, args)
                calls = [filled] + ([_missing(filled, real)] if kind == "neutral" else [])
                results = [await one(client, tool, a) for a in calls]
                problems = _judge(world, kind, results, [json.dumps(filled)], real)
                try:
                    check_unchanged(world, full=True)
                except AssertionError as exc:
                    problems.append(str(exc))
                    rebaseline(world)  # judge the next case against the state it meets
                out[case_id] = problems
        return out

    try:
        return asyncio.run(session())
    finally:
        world.dirty = True


@pytest.mark.parametrize("case_id", IDS)
def test_mcp_tools_reach_only_alice(mcp_results, case_id):
    problems = mcp_results[case_id]
    assert not problems, " | ".join(problems)


def test_scopes_named_in_the_cases_exist(world):
    """The seeded scopes the cases aim at are there (the refusals are not vacuous)."""
    page = world.ok("root", "GET", "/memory/m1/items", params={"status": "all"})["items"]
    assert {BOB, T1, BOT, ALICE} <= {i["scope"] for i in page}


def test_bob_and_the_thread_are_intact_at_the_end(world):
    """Re-read as root after this module's cases: values, sources and ledger events of
    bob's and the thread's items are as seeded."""
    check_others_intact(world)
