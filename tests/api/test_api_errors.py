"""One JSON error shape for every error the API returns, with fitting status codes."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from remem.api import create_app
from remem.errors import HeadMoved
from remem.service.memory import Memory
from apikit import assert_error


def test_error_shape_is_pinned(api):
    r = api.get("/memory/m1/items")
    assert r.json() == {"error": {
        "code": "unauthenticated",
        "message": "Missing or invalid bearer token; send 'Authorization: Bearer rmm_...' "
                   "with a token from `remem token create`.",
        "retryable": False, "details": {}}}
    assert r.status_code == 401
    assert r.headers["www-authenticate"] == "Bearer"


@pytest.mark.parametrize("header", [
    "Bearer rmm_0000000000000000_nope", "Bearer garbage", "Basic dXNlcjpwdw==", "Bearer ",
    "Bearer rmm_", "Bearer rmm__x",
])
def test_bad_tokens_get_the_same_401(api, header):
    r = api.get("/memory/m1/items", headers={"Authorization": header})
    assert assert_error(r, 401, "unauthenticated") == api.get("/memory/m1/items").json()["error"]


def test_a_wrong_secret_with_a_real_token_id_gets_401(api):
    token = api.token("x", "m1", "admin", "admin")
    forged = token[: token.rindex("_") + 1] + "A" * 43
    r = api.get("/memory/m1/items", headers={"Authorization": f"Bearer {forged}"})
    assert_error(r, 401, "unauthenticated")


def test_unknown_route_is_404_in_the_error_shape(api):
    err = assert_error(api.get("/no/such/route"), 404, "not_found")
    assert "/no/such/route" in err["message"]


def test_wrong_method_is_405_in_the_error_shape(api):
    assert_error(api.delete("/memory/m1/items", "admin"), 405, "method_not_allowed")


def test_schema_violation_is_422_in_the_error_shape(api):
    r = api.post("/memory/m1/items", "alice", json={"scope": "user:alice", "key": "k",
                                                    "value": "v", "surprise": 1})
    err = assert_error(r, 422, "validation_failed")
    assert err["details"]["errors"][0]["loc"] == ["body", "surprise"]
    r = api.post("/memory/m1/items", "alice", content=b"{not json",
                 headers={"content-type": "application/json"})
    assert_error(r, 422, "validation_failed")
    assert_error(api.get("/memory/m1/items?limit=0", "alice"), 422, "validation_failed")


def test_validation_details_do_not_echo_the_input(api):
    r = api.post("/memory/m1/items", "alice", json={"scope": "secret-value-123" * 20,
                                                    "key": "k", "value": "v"})
    assert_error(r, 422, "validation_failed")
    assert "secret-value-123" not in r.text


def test_invalid_input_is_400(api):
    r = api.post("/memory/m1/items", "alice", json={"scope": "user:alice", "key": "Home City",
                                                    "value": "Paris"})
    err = assert_error(r, 400, "invalid_input")
    assert err["details"]["field"] == "key"
    r = api.post("/memory/m1/items", "alice", json={"scope": "user:alice", "key": "bio",
                                                    "value": "x" * 2000})
    assert assert_error(r, 400, "invalid_input")["details"]["field"] == "value"


def test_stale_revision_is_409_with_the_current_revision(api):
    item = api.remember("alice", "user:alice", "home_city", "Paris")
    r = api.put(f"/memory/m1/items/{item['item_id']}", "alice",
                json={"value": "Berlin", "expected_revision": 7})
    err = assert_error(r, 409, "revision_mismatch")
    assert err["details"]["current_revision"] == 1


def test_idempotency_conflict_is_409(api):
    api.remember("alice", "user:alice", "home_city", "Paris", idempotency_key="k1")
    r = api.post("/memory/m1/items", "alice", json={"scope": "user:alice", "key": "home_city",
                                                    "value": "Rome", "idempotency_key": "k1"})
    assert_error(r, 409, "idempotency_conflict")


def test_oversize_body_is_413_before_the_service_is_reached(api, monkeypatch):
    calls = []
    monkeypatch.setattr(Memory, "remember", lambda *a, **k: calls.append(a))
    big = b'{"scope": "user:alice", "key": "bio", "value": "' + b"x" * 70_000 + b'"}'
    r = api.post("/memory/m1/items", "alice", content=big,
                 headers={"content-type": "application/json"})
    err = assert_error(r, 413, "request_too_large")
    assert err["details"] == {"limit": 65_536}

    def chunks():  # no Content-Length: counted as it arrives
        for _ in range(20):
            yield b"x" * 8192
    r = api.post("/memory/m1/items", "alice", content=chunks(),
                 headers={"content-type": "application/json"})
    assert_error(r, 413, "request_too_large")
    assert calls == []


def test_head_moved_is_503_with_retry_after(api, monkeypatch):
    def moved(*a, **k):
        raise HeadMoved("The ledger head moved 5 times; retry.", memory="m1")
    monkeypatch.setattr(Memory, "remember", moved)
    r = api.post("/memory/m1/items", "alice", json={"scope": "user:alice", "key": "k",
                                                    "value": "v"})
    err = assert_error(r, 503, "head_moved")
    assert err["retryable"] is True
    assert r.headers["retry-after"] == "1"


def test_unexpected_failure_is_500_without_details(store, monkeypatch):
    from remem.service.tokens import Tokens

    store.create_memory("m1")
    token, _ = Tokens(store).create("m1", "admin", "admin")

    def boom(*a, **k):
        raise RuntimeError("secret internals")
    monkeypatch.setattr(Memory, "status", boom)
    with TestClient(create_app(store), raise_server_exceptions=False) as client:
        r = client.get("/memory/m1/status", headers={"Authorization": f"Bearer {token}"})
    err = assert_error(r, 500, "internal_error")
    assert "secret internals" not in r.text and err["details"] == {}
