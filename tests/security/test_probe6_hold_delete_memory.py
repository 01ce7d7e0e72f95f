"""Round-6 probe: ``DELETE /memories/{id}`` by the memory's admin token purged every row,
items under legal hold included (``200 deleted``), although "legal_hold blocks erasure with
a clear error" (DESIGN) and a hold is released only by an explicit, ledgered release. Deleting
the memory was a way around every hold. Now the delete is refused with
``409 legal_hold_active`` naming how many items are held, and nothing is deleted; after the
release it goes through. Real server on loopback, real SQLite file."""

from __future__ import annotations

import pytest

from security.probe4_kit import Probe


@pytest.fixture
def held(tmp_path):
    p = Probe(tmp_path)
    item = p.ok("aw", "POST", "/memory/m1/items", json={
        "scope": "user:alice", "key": "home_city", "value": "Paris"})["item_id"]
    p.ok("aa", "POST", f"/memory/m1/items/{item}/hold")
    yield p, item
    p.close()


def test_deleting_a_memory_with_a_held_item_is_refused(held):
    p, item = held
    r = p.call("root", "DELETE", "/memories/m1")
    assert r.status_code == 409, r.text
    err = r.json()["error"]
    assert err["code"] == "legal_hold_active" and err["details"]["held"] == 1
    assert p.ok("root", "GET", f"/memory/m1/items/{item}")["legal_hold"] is True


def test_after_the_release_the_memory_can_be_deleted(held):
    p, item = held
    p.ok("aa", "POST", f"/memory/m1/items/{item}/hold/release")
    r = p.call("root", "DELETE", "/memories/m1")
    assert r.status_code == 200 and r.json()["deleted"] is True
