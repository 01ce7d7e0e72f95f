"""Round-5 probe: a legal hold preserves a fact, but not the log entry it was taken from.
Bob says "I live in Lyon." (source ``user:bob/b1``); his home_city fact is put under legal
hold by the memory admin. Later the admin forgets *alice's* home_city "Lyon": an owner's
forget redacts every scope's source texts that contain the value, so bob's source — the
``causedByLogId`` of his held fact — loses its text, and the report says ``completed`` and
lists it. "legal_hold blocks erasure"; here the held fact's evidence is destroyed by an
erasure aimed at another user. Real server on loopback, real SQLite file."""

from __future__ import annotations

import json

import pytest

from security.probe4_kit import Probe


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    p = Probe(tmp_path_factory.mktemp("hold"))
    yield p
    p.close()


def _log_entry(probe: Probe, source_id: str) -> dict:
    lines = probe.call("root", "GET", "/memory/m1/export").text.splitlines()
    return next(r for r in map(json.loads, lines) if r.get("id") == source_id)


@pytest.fixture(scope="module")
def held(probe):
    probe.ok("bw", "POST", "/memory/m1/observe", json={
        "scope": "user:bob", "text": "I live in Lyon.", "source_id": "b1"})
    [item] = probe.ok("bw", "GET", "/memory/m1/items")["items"]
    assert (item["key"], item["value"], item["source_id"]) == ("home_city", "Lyon",
                                                                "user:bob/b1")
    probe.ok("root", "POST", f"/memory/m1/items/{item['item_id']}/hold", json={"hold": True})
    assert "payload" in _log_entry(probe, "user:bob/b1")
    alice = probe.ok("aw", "POST", "/memory/m1/items", json={
        "scope": "user:alice", "key": "home_city", "value": "Lyon"})
    report = probe.ok("root", "POST", f"/memory/m1/items/{alice['item_id']}/forget")
    return item, report


def test_the_held_fact_itself_survives(probe, held):
    item, _ = held
    got = probe.ok("bw", "GET", f"/memory/m1/facts/{item['item_id']}")
    assert got["content"] == {"key": "home_city", "value": "Lyon"}
    assert got["retention"]["legalHold"] is True


def test_a_held_facts_source_keeps_its_text_when_another_user_forgets(probe, held):
    _, report = held
    assert "payload" in _log_entry(probe, "user:bob/b1")
    assert "user:bob/b1" not in report["sources"]
    assert report["state"] == "partial" and "legal hold" in report["reason"]
