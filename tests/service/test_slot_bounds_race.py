"""instantKV per-slot bounds under concurrency: the check runs at the ledger head inside the
write's transaction, so writers racing for the last places of a slot take exactly the places
left and the rest fail ``slot_full``. SQLite: threads sharing one store on a file;
PostgreSQL: threads on two stores (two connection pools of 2 connections each)."""

from __future__ import annotations

import json
import threading

import pytest
from service.kickside_kit import store  # noqa: F401

import remem
from remem.service.apply import apply_document
from remem.service.slots import MAX_SLOT_CONFLICTS, MAX_SLOT_RECEIPTS

SCOPE = "user:personal"
RACERS = 6


def proposal(value: str, source_id: str) -> str:
    return json.dumps({
        "entity": "user", "attribute": "response_style", "value": value,
        "kind": "preference", "operation": "assert",
        "source": {"id": source_id, "text": f"Please use {value}.", "role": "user",
                   "occurred_at_ms": 1791504000000}})


def apply(mem, value: str, source_id: str) -> dict:
    return apply_document(mem, proposal(value, source_id), default_scope=SCOPE)["results"][0]


@pytest.fixture
def racers(store, store_url):
    """RACERS memory handles of m1: one shared store on SQLite; on PostgreSQL two more
    stores, each with a pool of 2 connections for its 3 racing threads (the check reads
    through the write's own transaction, so a pool smaller than its writers cannot starve)."""
    mem = store.create_memory("m1")
    if store_url.startswith("postgres"):
        others = [remem.open(store_url, max_connections=2) for _ in range(2)]
        yield mem, [others[i % 2].memory("m1") for i in range(RACERS)]
        for other in others:
            other.close()
    else:
        yield mem, [mem] * RACERS


def race(handles, make_args) -> list[dict]:
    """Runs ``apply(handle, *make_args(i))`` in one thread per handle, released together."""
    gate = threading.Barrier(len(handles))
    results: list[dict | None] = [None] * len(handles)

    def run(i: int) -> None:
        gate.wait()
        results[i] = apply(handles[i], *make_args(i))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(handles))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert all(r is not None for r in results)
    return results  # type: ignore[return-value]


def bounds_hit(results: list[dict]) -> list[str]:
    return [r["error"]["details"].get("bound", r["error"]["code"]) for r in results
            if "error" in r]


def test_racing_restatements_take_exactly_the_receipts_left(racers):
    mem, handles = racers
    left = 2
    for i in range(MAX_SLOT_RECEIPTS - left):
        assert "receipt" in apply(mem, "short bullets", f"turn-{i}")
    results = race(handles, lambda i: ("short bullets", f"race-{i}"))
    assert sum("receipt" in r for r in results) == left
    assert bounds_hit(results) == ["receipts"] * (RACERS - left)
    held = sum(len(mem.store.provenance(mem.id, v.item_id))
               for v in mem.items(scope=SCOPE, key="response_style", status="all").items)
    assert held == MAX_SLOT_RECEIPTS
    assert mem.owner.verify()["ok"]


def test_racing_conflicting_values_take_exactly_the_conflict_places_left(racers):
    mem, handles = racers
    left = 2
    for i in range(MAX_SLOT_CONFLICTS - left):
        assert "receipt" in apply(mem, f"style {i}", f"turn-{i}")
    assert len(mem.slot_inspect("user", "response_style", default_scope=SCOPE)["conflicts"]) \
        == MAX_SLOT_CONFLICTS - left
    results = race(handles, lambda i: (f"racing style {i}", f"race-{i}"))
    assert sum("receipt" in r for r in results) == left
    assert bounds_hit(results) == ["conflicts"] * (RACERS - left)
    slot = mem.slot_inspect("user", "response_style", default_scope=SCOPE)
    assert slot["state"] == "conflict" and len(slot["conflicts"]) == MAX_SLOT_CONFLICTS
