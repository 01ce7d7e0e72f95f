"""Round-6 probe: a legal hold keeps a fact *and* the log entry it was taken from (round 5:
an owner's forget leaves a held fact's source text and reports ``partial``), but KIP's
``forget`` in mode ``payload_only`` erased that source anyway: alice's own writer token,
naming either the source (``s1``) or the held item itself, got ``succeeded`` /
``completed`` / ``erased`` and the held fact's evidence lost its text, while the same request
in mode ``semantic`` is refused with ``LegalHoldActive``. Real server on loopback, real SQLite
file."""

from __future__ import annotations

import json

import pytest

from security.probe4_kit import Probe


@pytest.fixture
def held(tmp_path):
    p = Probe(tmp_path)
    p.ok("aw", "POST", "/memory/m1/observe", json={
        "scope": "user:alice", "text": "I live in Lyon.", "source_id": "s1"})
    [item] = [i for i in p.ok("aw", "GET", "/memory/m1/items")["items"]
              if i["key"] == "home_city"]
    assert item["source_id"] == "user:alice/s1"
    p.ok("aa", "POST", f"/memory/m1/items/{item['item_id']}/hold")
    yield p, item["item_id"]
    p.close()


def _source_has_text(p: Probe) -> bool:
    lines = p.call("root", "GET", "/memory/m1/export").text.splitlines()
    entry = next(r for r in map(json.loads, lines) if r.get("id") == "user:alice/s1")
    return "payload" in entry


def _kip_forget(p: Probe, target: str, mode: str):
    return p.call("aw", "POST", "/memory/m1/kip", json={
        "kip_memory": "2.0", "operation": "forget", "scope": {"task_ref": "user:alice"},
        "idempotency_key": f"forget:{target}:{mode}",
        "input": {"target_ref": target, "mode": mode}})


@pytest.mark.parametrize("target", ["s1", "item"])
def test_payload_only_forget_keeps_the_held_facts_source(held, target):
    p, item_id = held
    r = _kip_forget(p, item_id if target == "item" else "s1", "payload_only")
    assert r.status_code == 409, r.text
    assert r.json()["error"]["code"] == "LegalHoldActive"
    assert _source_has_text(p)


def test_semantic_forget_of_the_source_is_refused_as_before(held):
    p, _ = held
    r = _kip_forget(p, "s1", "semantic")
    assert r.status_code == 409 and r.json()["error"]["code"] == "LegalHoldActive"
    assert _source_has_text(p)


def test_after_the_release_payload_only_erases_the_source(held):
    p, item_id = held
    p.ok("aa", "POST", f"/memory/m1/items/{item_id}/hold/release")
    r = _kip_forget(p, "s1", "payload_only")
    assert r.status_code == 200, r.text
    assert r.json()["result"]["status"] == "completed"
    assert not _source_has_text(p)
