"""instantKV slots (``Memory.slot_*`` and apply's per-slot bounds) on SQLite and PostgreSQL."""

from __future__ import annotations

import json

from remem.service.apply import apply_document
from remem.service.slots import MAX_SLOT_CONFLICTS

SCOPE = "user:personal"


def _proposal(value: str, source_id: str, **more) -> bytes:
    return json.dumps({"entity": "user", "attribute": "response_style", "value": value,
                       "kind": "preference", "operation": "assert",
                       "source": {"id": source_id, "text": f"Use {value}.", "role": "user",
                                  "occurred_at_ms": 1791504000000}, **more}).encode()


def _apply(mem, doc: bytes) -> dict:
    return apply_document(mem, doc, default_scope=SCOPE)["results"][0]


def test_a_slot_is_created_conflicted_corrected_and_forgotten(mem, database_bytes):
    assert _apply(mem, _proposal("short bullets", "t1"))["receipt"]["status"] == "created"
    assert _apply(mem, _proposal("long prose", "t2"))["receipt"]["status"] == "conflict"
    assert mem.slot_profile(default_scope=SCOPE) == {"items": [], "truncated": False}
    slot = mem.slot_inspect("user", "response_style", default_scope=SCOPE)
    assert slot["state"] == "conflict" and len(slot["conflicts"]) == 2
    fixed = _apply(mem, _proposal("numbered points", "t3", operation="correct",
                                  expected_revision=slot["revision"]))
    assert fixed["receipt"]["status"] == "corrected"
    found = mem.slot_context("numbered points", default_scope=SCOPE)
    assert [i["value"] for i in found["items"]] == ["numbered points"]
    rev = mem.slot_inspect("user", "response_style", default_scope=SCOPE)["revision"]
    out = mem.slot_forget("user", "response_style", expected_revision=rev,
                          default_scope=SCOPE)
    assert out["status"] == "forgotten"
    after = mem.slot_inspect("user", "response_style", default_scope=SCOPE)
    assert (after["state"], after["value"], after["history"], after["conflicts"]) == (
        "forgotten", None, [], [])
    raw = database_bytes()
    for text in (b"short bullets", b"long prose", b"numbered points"):
        assert text not in raw


def test_a_slot_with_eight_conflicting_values_refuses_a_ninth(mem):
    assert _apply(mem, _proposal("value 0", "c0"))["receipt"]["status"] == "created"
    for i in range(1, MAX_SLOT_CONFLICTS):
        assert _apply(mem, _proposal(f"value {i}", f"c{i}"))["receipt"]["status"] == "conflict"
    full = _apply(mem, _proposal("value 8", "c8"))
    assert full["error"]["code"] == "slot_full"
    assert full["error"]["details"]["bound"] == "conflicts"
    slot = mem.slot_inspect("user", "response_style", default_scope=SCOPE)
    assert len(slot["conflicts"]) == MAX_SLOT_CONFLICTS
