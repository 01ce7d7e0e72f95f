"""Scopes named in every field and every shape: alice's tokens never read or write bob's
or the thread's scope, whatever the spelling (case, whitespace, look-alikes, wildcards) or
JSON shape (string, list, object, nested) and whichever field carries it."""

from __future__ import annotations

from typing import Any

import pytest

from security.kit import ALICE, BOB, BOT, SHARED_SOURCE_ID, T1, check_others_intact, \
    rebaseline, sent_text, verdict
from security.shapes import STRINGS, body_variants, json_shapes, query_variants

BODY = body_variants()
ADMIN_STRINGS = [(n, t) for n, t in STRINGS if n in ("bob", "Bob-case", "user-wildcard",
                                                     "wildcard")]
QUERY = query_variants()
KIP_SCOPE_FIELD = [(f"bob-{n}", v) for n, v in json_shapes("user:bob")] + [
    ("task-ref-list", {"task_ref": ["user:bob"]}),
    ("task-ref-object", {"task_ref": {"user:bob": 1}}),
    ("own-task-bob-context", {"task_ref": ALICE, "context_refs": ["user:bob"]}),
    ("own-task-bob-context-object", {"task_ref": ALICE, "context_refs": {"user:bob": 1}}),
    ("own-task-nested-context", {"task_ref": ALICE, "context_refs": [["user:bob"]]}),
    ("own-task-wildcard-context", {"task_ref": ALICE, "context_refs": ["user:*"]}),
    ("own-task-thread-context", {"task_ref": ALICE, "context_refs": "thread:t1"}),
]

# KIP "input" of each operation; nothing here names a marker string.
KIP_INPUT: dict[str, dict[str, Any]] = {
    "recall": {"query": "sister Ingrid dog Fido home city Oslo work harbour nephew room"},
    "observe": {"source_ref": SHARED_SOURCE_ID},
    "revise": {"source_ref": SHARED_SOURCE_ID, "change_kind": "world_change"},
    "feedback": {"source_ref": SHARED_SOURCE_ID},
    "forget": {"target_ref": "{bob.dog}", "mode": "semantic"},
    "forget-payload": {"target_ref": SHARED_SOURCE_ID, "mode": "payload_only"},
}
KIP_WRITES = ("observe", "revise", "feedback", "forget", "forget-payload")


def kip(op: str, scope: Any, names: dict[str, str]) -> dict[str, Any]:
    from security.routes import fill

    return {"kip_memory": "2.0", "operation": op.split("-")[0], "scope": scope,
            "idempotency_key": f"scope-matrix-{op}",
            "budget": {"max_output_tokens": 4000}, "input": fill(KIP_INPUT[op], names)}


def _q(name: str, value: Any) -> dict[str, Any]:
    return {name: value}


#: site -> (method, path, builder(value, names) -> (params, json)); reads
READ_QUERY_SITES = {
    "items.scope": ("GET", "/memory/m1/items", lambda v, n: (_q("scope", v), None)),
    "inspect.scope": ("GET", "/memory/m1/inspect",
                      lambda v, n: ({"scope": v, "key": "home_city"}, None)),
    "profile.scopes": ("GET", "/memory/m1/profile", lambda v, n: (_q("scopes", v), None)),
    "conflicts.scope": ("GET", "/memory/m1/conflicts", lambda v, n: (_q("scope", v), None)),
}
READ_BODY_SITES = {
    "recall.scopes": ("POST", "/memory/m1/recall", lambda v, n: (None, {
        "scopes": v, "query": KIP_INPUT["recall"]["query"], "budget_tokens": 4000})),
    "context.scopes": ("POST", "/memory/m1/context", lambda v, n: (None, {
        "scopes": v, "query": KIP_INPUT["recall"]["query"]})),
    "kip.recall.task_ref": ("POST", "/memory/m1/kip",
                            lambda v, n: (None, kip("recall", {"task_ref": v}, n))),
    "kip.recall.context_refs": ("POST", "/memory/m1/kip", lambda v, n: (None, kip(
        "recall", {"task_ref": ALICE, "context_refs": v}, n))),
}
WRITE_BODY_SITES = {
    "items.scope": ("POST", "/memory/m1/items", lambda v, n: (None, {
        "scope": v, "key": "shoe_size", "value": 42, "kind": "fact"})),
    "observe.scope": ("POST", "/memory/m1/observe", lambda v, n: (None, {
        "scope": v, "text": "I like green tea.", "source_id": "src-scope-matrix"})),
    "apply.entity": ("POST", "/memory/m1/apply", lambda v, n: (None, {
        "entity": v, "attribute": "shoe_size", "value": 43, "kind": "fact",
        "operation": "assert"})),
    **{f"kip.{op}.task_ref": ("POST", "/memory/m1/kip",
                              (lambda op: lambda v, n: (None, kip(op, {"task_ref": v}, n)))(op))
       for op in KIP_WRITES},
}
WRITE_QUERY_SITES = {
    "apply.query_scope": ("POST", "/memory/m1/apply", lambda v, n: (_q("scope", v), {
        "entity": "user", "attribute": "shoe_size", "value": 44, "kind": "fact",
        "operation": "assert"})),
}
KIP_SCOPE_SITES = {f"kip.{op}.scope": op for op in ("recall", "observe", "forget",
                                                     "forget-payload")}


def _cases(sites: dict, variants: list, principals: tuple[str, ...]):
    return [pytest.param(p, site, value, id=f"{p}-{site}-{name}")
            for site in sites for name, value in variants for p in principals]


def _run(world, principal: str, site: tuple, value: Any, *, erases: bool) -> None:
    method, path, build = site
    params, body = build(value, world.names())
    r = world.call(principal, method, path, params=params, json=body)
    verdict(world, principal, r, sent_text(params, body),
            full=True if erases else None)


@pytest.mark.parametrize(("principal", "site", "value"),
                         _cases(READ_QUERY_SITES, QUERY, ("alice_reader",))
                         + _cases(READ_BODY_SITES, BODY, ("alice_reader",)))
def test_alice_reads_no_other_scope(world, principal, site, value):
    sites = {**READ_QUERY_SITES, **READ_BODY_SITES}
    _run(world, principal, sites[site], value, erases=False)


@pytest.mark.parametrize(("principal", "site", "value"),
                         _cases(WRITE_BODY_SITES, BODY, ("alice_writer",))
                         + _cases(WRITE_BODY_SITES, ADMIN_STRINGS, ("alice_admin",))
                         + _cases(WRITE_QUERY_SITES, QUERY, ("alice_writer",)))
def test_alice_writes_no_other_scope(world, principal, site, value):
    sites = {**WRITE_BODY_SITES, **WRITE_QUERY_SITES}
    _run(world, principal, sites[site], value, erases="forget" in site)


@pytest.mark.parametrize(("principal", "site", "value"),
                         _cases({k: v for k, v in KIP_SCOPE_SITES.items() if "recall" in k},
                                KIP_SCOPE_FIELD, ("alice_reader",))
                         + _cases({k: v for k, v in KIP_SCOPE_SITES.items()
                                   if "recall" not in k}, KIP_SCOPE_FIELD, ("alice_writer",)))
def test_the_kip_scope_field_in_any_shape_reaches_only_alice(world, principal, site, value):
    """A recall naming another scope anywhere is refused. A mutation whose task_ref is
    alice's own may go through (context_refs add nothing to a write) but changes nothing
    of bob's, the thread's or the agent's."""
    op = KIP_SCOPE_SITES[site]
    body = kip(op, value, world.names())
    r = world.call(principal, "POST", "/memory/m1/kip", json=body)
    own_task = isinstance(value, dict) and value.get("task_ref") == ALICE
    if op == "recall" or not own_task:
        verdict(world, principal, r, sent_text(body), full=True if "forget" in op else None)
        return
    verdict(world, principal, r, sent_text(body), refused=False, full=True, head=False,
            scopes=(BOB, T1, BOT))
    rebaseline(world)


@pytest.mark.parametrize("op", KIP_WRITES)
@pytest.mark.parametrize("task_ref", ["user:alice", "agent:bot", "user:bob"])
def test_a_reader_makes_no_kip_mutation_even_in_its_own_scope(world, op, task_ref):
    body = kip(op, {"task_ref": task_ref}, world.names())
    r = world.call("alice_reader", "POST", "/memory/m1/kip", json=body)
    verdict(world, "alice_reader", r, sent_text(body), full=True)


@pytest.mark.parametrize("op", KIP_WRITES)
@pytest.mark.parametrize("principal", ["alice_writer", "alice_admin"])
def test_alice_makes_no_kip_mutation_in_the_agent_scope(world, principal, op):
    body = kip(op, {"task_ref": "agent:bot"}, world.names())
    if op.startswith("forget"):
        body["input"]["target_ref"] = world.seed.ids["bot.rule"]
    r = world.call(principal, "POST", "/memory/m1/kip", json=body)
    verdict(world, principal, r, sent_text(body), full=True)


def test_bob_and_the_thread_are_intact_at_the_end(world):
    """Re-read as root after this module's cases: values, sources and ledger events of
    bob's and the thread's items are as seeded."""
    check_others_intact(world)
