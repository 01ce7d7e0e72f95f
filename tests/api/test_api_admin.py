"""Memory admin and token routes (admin token with subject 'admin')."""

from __future__ import annotations

from apikit import Api, assert_error
from fastapi.testclient import TestClient

from remem.api import create_app


def test_an_admin_token_creates_configures_and_deletes_its_memory(store):
    with TestClient(create_app(store)) as client:
        api = Api(client, store)
        api.token("root", "notes", "admin", "admin")
        config = {"description": "notes", "keys": {"pets": {"cardinality": "multi"}}}
        r = api.post("/memories", "root", json={"memory_id": "notes", "config": config})
        assert r.status_code == 201 and r.json() == {"memory_id": "notes", "config": config,
                                                        "tenant_id": "default"}
        assert_error(api.post("/memories", "root", json={"memory_id": "notes"}), 409,
                     "already_exists")
        assert api.get("/memories/notes", "root").json()["config"] == config
        r = api.put("/memories/notes/config", "root", json={"description": "new"})
        assert r.json()["config"] == {"description": "new"}
        assert_error(api.put("/memories/notes/config", "root", json={"bogus": 1}), 400,
                     "config_invalid")
        api.remember("root", "user:alice", "diet", "vegan", memory="notes")
        r = api.delete("/memories/notes", "root")
        assert r.status_code == 200 and r.json()["rows"]["items"] == 1
        assert r.json()["rows"]["tokens"] == 1
        assert store.list_memories() == []
        assert_error(api.get("/memories/notes", "root"), 401, "unauthenticated")


def test_an_invalid_config_creates_nothing(store):
    with TestClient(create_app(store)) as client:
        api = Api(client, store)
        api.token("root", "m9", "admin", "admin")
        r = api.post("/memories", "root", json={"memory_id": "m9", "config": {"keys": 3}})
        assert_error(r, 400, "config_invalid")
        assert store.list_memories() == []


def test_tokens_are_created_listed_and_revoked_over_http(api):
    r = api.post("/memory/m1/tokens", "admin", json={"role": "reader", "subject": "user:carol",
                                                     "label": "carol's app"})
    assert r.status_code == 201
    created = r.json()
    assert created["token"].startswith(f"rmm_{created['token_id']}_")
    headers = {"Authorization": f"Bearer {created['token']}"}
    assert api.get("/memory/m1/items", headers=headers).status_code == 200
    listed = api.get("/memory/m1/tokens", "admin").json()
    assert created["token_id"] in {t["token_id"] for t in listed}
    assert all("token" not in t and "secret_hash" not in t for t in listed)
    assert created["token"] not in api.get("/memory/m1/tokens", "admin").text
    api.delete(f"/memory/m1/tokens/{created['token_id']}", "admin")
    assert_error(api.get("/memory/m1/items", headers=headers), 401, "unauthenticated")


def test_bad_token_requests_are_rejected(api):
    r = api.post("/memory/m1/tokens", "admin", json={"role": "root", "subject": "admin"})
    assert_error(r, 422, "validation_failed")
    r = api.post("/memory/m1/tokens", "admin", json={"role": "reader", "subject": "alice"})
    assert assert_error(r, 400, "invalid_input")["details"]["field"] == "subject"


def test_revoking_a_token_of_another_memory_is_the_same_404_as_a_missing_one(api):
    other = api.tokens.list("m2")[0].token_id
    probe = api.delete(f"/memory/m1/tokens/{other}", "admin")
    missing = api.delete(f"/memory/m1/tokens/{'0' * len(other)}", "admin")
    assert_error(probe, 404, "not_found_or_not_visible")
    assert probe.content.replace(other.encode(), b"T") == \
        missing.content.replace(b"0" * len(other), b"T")
    assert api.tokens.list("m2")[0].revoked_at is None
