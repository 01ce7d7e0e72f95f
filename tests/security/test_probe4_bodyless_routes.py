"""Round-4 probe: a POST route without a request model used to ignore whatever body came
with it. ``POST /items/{id}/forget`` with ``{"expected_revision": 99}`` (a guard the route
does not have) erased the item anyway; malformed JSON to ``/resummarize`` was accepted. Now
any body but nothing or ``{}`` is a 400 ``invalid_input`` and nothing runs."""

from __future__ import annotations

import pytest

from security.probe4_kit import Probe


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    p = Probe(tmp_path_factory.mktemp("bodyless"))
    yield p
    p.close()


def _item(probe: Probe, key: str) -> str:
    return probe.ok("aa", "POST", "/memory/m1/items", json={
        "scope": "user:alice", "key": key, "value": "kept-value"})["item_id"]


def test_a_forget_by_id_with_a_stale_expected_revision_erases_nothing(probe):
    item = _item(probe, "employer")
    r = probe.call("aw", "POST", f"/memory/m1/items/{item}/forget",
                   json={"expected_revision": 99})
    assert r.status_code == 400, r.text
    assert r.json()["error"]["code"] == "invalid_input"
    got = probe.ok("aw", "GET", f"/memory/m1/items/{item}")
    assert got["status"] == "current" and got["value"] == "kept-value"


@pytest.mark.parametrize("suffix", ["forget", "archive", "restore", "hold/release", "refresh"])
@pytest.mark.parametrize("body", [b'{"bogus": 1}', b"not json{", b"[]", b"null"])
def test_item_routes_without_a_body_model_refuse_any_body_and_change_nothing(probe, suffix,
                                                                             body):
    item = _item(probe, "diet")
    before = probe.ok("aa", "GET", f"/memory/m1/items/{item}/history")
    r = probe.call("aa", "POST", f"/memory/m1/items/{item}/{suffix}", content=body,
                   headers={"content-type": "application/json"})
    assert r.status_code == 400, r.text
    err = r.json()["error"]
    assert err["code"] == "invalid_input" and err["details"] == {"field": "body"}
    assert probe.ok("aa", "GET", f"/memory/m1/items/{item}/history") == before


def test_malformed_json_to_resummarize_is_refused(probe):
    r = probe.call("root", "POST", "/memory/m1/resummarize", content=b"not json{",
                   headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_input", r.text


@pytest.mark.parametrize("body", [None, b"", b"{}", b" {} "])
def test_no_body_or_an_empty_object_still_works(probe, body):
    item = _item(probe, "pets")
    kw = {} if body is None else {"content": body, "headers": {"content-type": "application/json"}}
    r = probe.call("aw", "POST", f"/memory/m1/items/{item}/archive", **kw)
    assert r.status_code == 200 and r.json()["status"] == "archived", r.text
    r = probe.call("aw", "POST", f"/memory/m1/items/{item}/forget", **kw)
    assert r.status_code == 200 and r.json()["state"] == "completed", r.text
