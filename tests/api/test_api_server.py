"""End to end against a real `remem serve` (uvicorn) on a free loopback port, over httpx."""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import httpx

from remem.testing.served import Server
import pytest


def _cli(db, *args: str) -> str:
    out = subprocess.run([sys.executable, "-m", "remem.cli.main", "--db", str(db), *args],
                         capture_output=True, text=True, timeout=60, check=True)
    return out.stdout


@pytest.fixture
def server(db_path):
    """(base_url, admin token): `remem serve` in a subprocess, stopped after the test."""
    admin = json.loads(_cli(db_path, "--json", "token", "create", "--memory", "m1", "--role",
                            "admin", "--subject", "admin"))["token"]
    with Server(db_path, startup_s=30) as srv:
        yield srv.base, admin


def test_end_to_end_over_a_real_server(server):
    base, admin_token = server
    auth = lambda token: {"Authorization": f"Bearer {token}"}  # noqa: E731
    with httpx.Client(base_url=base, timeout=10) as http:
        admin = auth(admin_token)
        r = http.post("/memories", headers=admin, json={"memory_id": "m1"})
        assert r.status_code == 201, r.text
        alice = auth(http.post("/memory/m1/tokens", headers=admin, json={
            "role": "writer", "subject": "user:alice"}).json()["token"])
        reader = auth(http.post("/memory/m1/tokens", headers=admin, json={
            "role": "reader", "subject": "user:alice"}).json()["token"])

        w = http.post("/memory/m1/items", headers=alice, json={
            "scope": "user:alice", "key": "home_city", "value": "Paris",
            "kind": "profile_slot"}).json()
        assert (w["outcome"], w["revision"]) == ("created", 1)
        item = f"/memory/m1/items/{w['item_id']}"
        recalled = http.post("/memory/m1/recall", headers=reader, json={
            "scopes": ["user:alice"], "query": "which city is home", "budget_tokens": 300})
        assert recalled.status_code == 200
        assert [i["value"] for i in recalled.json()["items"]] == ["Paris"]

        r = http.put(item, headers=alice, json={"value": "Berlin", "expected_revision": 0})
        assert r.status_code == 409
        assert r.json()["error"]["code"] == "revision_mismatch"
        assert r.json()["error"]["details"]["current_revision"] == 1
        r = http.put(item, headers=reader, json={"value": "Berlin", "expected_revision": 1})
        assert r.status_code == 403
        r = http.put(item, headers=alice, json={"value": "Berlin", "expected_revision": 1})
        assert r.status_code == 200 and r.json()["outcome"] == "corrected"
        berlin = f"/memory/m1/items/{r.json()['item_id']}"
        assert http.get(berlin, headers=reader).json()["value"] == "Berlin"

        assert http.get("/memory/m2/items", headers=alice).status_code == 404
        r = http.post("/memory/m1/items", headers={**alice, "content-type": "application/json"},
                      content=b"x" * 100_000)
        assert r.status_code == 413 and r.json()["error"]["code"] == "request_too_large"

        with ThreadPoolExecutor(8) as pool:  # concurrent writers on one SQLite file
            codes = list(pool.map(lambda i: http.post("/memory/m1/items", headers=alice, json={
                "scope": "user:alice", "key": f"fact_{i}", "value": f"v{i}"}).status_code,
                range(24)))
        assert codes == [200] * 24

        report = http.post(f"{berlin}/forget", headers=alice).json()
        assert report["state"] == "completed" and len(report["items"]) == 2
        assert http.get(berlin, headers=alice).status_code == 404

        status = http.get("/memory/m1/status", headers=admin).json()
        assert status["memory"] == "m1" and status["head_seq"] >= 28
        assert status["items"].get("current") == 24
        assert "home_city" not in http.get("/memory/m1/items?status=all",
                                           headers=alice).text
