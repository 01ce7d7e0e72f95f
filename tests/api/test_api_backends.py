"""The API flow on every backend: SQLite (requests serialised) and PostgreSQL (concurrent)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from apikit import Api, assert_error
from fastapi.testclient import TestClient

import remem
from remem.api import create_app


@pytest.fixture
def backend_store(store_url: str):
    s = remem.open(store_url)
    yield s
    s.close()


def test_the_flow_on_each_backend(backend_store):
    app = create_app(backend_store)
    assert (app.state.store_lock is None) == (backend_store.adapter.backend == "postgres")
    with TestClient(app) as client:
        api = Api(client, backend_store)
        api.token("root", "m1", "admin", "admin")
        assert api.post("/memories", "root", json={"memory_id": "m1"}).status_code == 201
        api.token("alice", "m1", "writer", "user:alice")
        api.token("bob", "m1", "writer", "user:bob")
        w = api.remember("alice", "user:alice", "home_city", "Paris")
        item = f"/memory/m1/items/{w['item_id']}"
        r = api.put(item, "alice", json={"value": "Lyon", "expected_revision": 0})
        assert_error(r, 409, "revision_mismatch")
        probe = api.get(item, "bob")
        missing = api.get("/memory/m1/items/" + "itm_" + "0" * (len(w["item_id"]) - 4), "bob")
        assert_error(probe, 404, "not_found_or_not_visible")
        assert probe.content.replace(w["item_id"].encode(), b"X") == \
            missing.content.replace(missing.json()["error"]["details"]["item_id"].encode(), b"X")
        with ThreadPoolExecutor(4) as pool:
            codes = list(pool.map(lambda i: api.post("/memory/m1/items", "bob", json={
                "scope": "user:bob", "key": f"fact_{i}", "value": f"v{i}"}).status_code,
                range(12)))
        assert codes == [200] * 12
        assert api.post(f"{item}/forget", "alice").json()["state"] == "completed"
        status = api.get("/memory/m1/status", "root").json()
        assert status["items"].get("current") == 12
        assert api.delete("/memories/m1", "root").json()["rows"]["tokens"] == 3
        assert_error(api.get("/memory/m1/items", "alice"), 401, "unauthenticated")
