"""Round-4 probe: ``expected_revision`` (the compare-and-set guard of a correction and a slot
forget) is parsed laxly. ``"1"``, ``true`` and ``1.0`` are taken as revision 1, and a
revision past 2**53 on ``PUT /items/{id}`` is refused as "value is not canonical JSON"
naming the field ``value`` (the value was fine). Fix needed (schemas.py, CorrectIn and
SlotForgetIn): ``StrictInt`` with ``le=2**53 - 1`` (then regenerate openapi.json)."""

from __future__ import annotations

import pytest

from security.probe4_kit import Probe


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    p = Probe(tmp_path_factory.mktemp("revision"))
    yield p
    p.close()


def _item(probe: Probe, key: str) -> str:
    return probe.ok("aw", "POST", "/memory/m1/items", json={
        "scope": "user:alice", "key": key, "value": "first"})["item_id"]


@pytest.mark.parametrize("given", ["1", True, 1.0])
def test_a_correction_guard_that_is_not_an_integer_is_refused(probe, given):
    item = _item(probe, "employer")
    r = probe.call("aw", "PUT", f"/memory/m1/items/{item}",
                   json={"value": "second", "expected_revision": given})
    assert r.status_code == 422, r.text
    assert probe.ok("aw", "GET", f"/memory/m1/items/{item}")["status"] == "current"


def test_a_huge_expected_revision_is_blamed_on_itself(probe):
    item = _item(probe, "diet")
    r = probe.call("aw", "PUT", f"/memory/m1/items/{item}",
                   json={"value": "second", "expected_revision": 2**62})
    assert r.status_code in (400, 409, 422), r.text
    assert "expected_revision" in r.text, r.text


def test_a_slot_forget_with_a_wrong_revision_is_refused(probe):
    _item(probe, "pets")
    r = probe.call("aw", "POST", "/memory/m1/slots/user:alice/pets/forget",
                   json={"expected_revision": 7})
    assert r.status_code == 409 and r.json()["error"]["code"] == "revision_mismatch"
