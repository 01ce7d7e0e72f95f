"""Cached facts over a real `remem serve` (HTTP) and the real console script (CLI), with a
real HTTP source on loopback that the operator allowed (REMEM_REFRESH_ORIGINS)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import httpx
import pytest

from remem.testing.served import Server

from .cached_kit import block, source_server  # noqa: F401 - fixture

CLI = [sys.executable, "-m", "remem.cli.main"]


def _cli(db, *args: str, env: dict | None = None, expect: int = 0) -> str:
    out = subprocess.run([*CLI, "--db", str(db), *args], capture_output=True, text=True,
                         timeout=60, env={**os.environ, **(env or {})})
    assert "Traceback" not in out.stderr, out.stderr
    assert out.returncode == expect, (out.returncode, out.stdout, out.stderr)
    return out.stdout


@pytest.fixture
def served(tmp_path, source_server):
    db = tmp_path / "r.db"
    admin = json.loads(_cli(db, "--json", "token", "create", "--memory", "m1", "--role",
                            "admin", "--subject", "admin"))["token"]
    env = {**os.environ, "REMEM_REFRESH_ORIGINS": "loopback"}
    with Server(db, env=env, startup_s=30) as srv:
        yield srv.base, {"Authorization": f"Bearer {admin}"}


def test_remember_refresh_and_recall_a_cached_fact_over_http(served, source_server):
    base, admin = served
    source_server.resources["/rate"] = {"body": 1.09, "etag": '"v2"'}
    with httpx.Client(base_url=base, timeout=15) as http:
        assert http.post("/memories", headers=admin, json={"memory_id": "m1"}).status_code == 201
        alice = {"Authorization": "Bearer " + http.post("/memory/m1/tokens", headers=admin, json={
            "role": "writer", "subject": "user:alice"}).json()["token"]}
        reader = {"Authorization": "Bearer " + http.post("/memory/m1/tokens", headers=admin, json={
            "role": "reader", "subject": "user:alice"}).json()["token"]}
        bad = http.post("/memory/m1/items", headers=alice, json={
            "scope": "user:alice", "key": "eur_usd", "value": 1.08,
            "cached_source": {**block(source_server.url("/rate")), "ttl": 5}})
        assert bad.status_code == 422 and bad.json()["error"]["code"] == "validation_failed"
        assert "cached_source.ttl" in bad.json()["error"]["message"]
        w = http.post("/memory/m1/items", headers=alice, json={
            "scope": "user:alice", "key": "eur_usd", "value": 1.08,
            "cached_source": block(source_server.url("/rate"), ttl=0, etag='"v1"')})
        assert w.status_code == 200, w.text
        item = w.json()["item_id"]
        got = http.get(f"/memory/m1/items/{item}/cached-source", headers=reader).json()
        assert got["refresh"] == {"strategy": "manual"} and got["stale"] is True
        rec = http.post("/memory/m1/recall", headers=reader, json={
            "scopes": ["user:alice"], "query": "eur_usd", "budget_tokens": 200}).json()
        assert rec["items"][0]["cached"]["stale"] is True and "stale" in rec["text"]
        assert http.post(f"/memory/m1/items/{item}/refresh", headers=reader).status_code == 403
        assert source_server.log == []  # neither a reader nor a bad body reached the source
        out = http.post(f"/memory/m1/items/{item}/refresh", headers=alice)
        assert out.status_code == 200 and out.json()["state"] == "changed"
        assert source_server.log == [("/rate", '"v1"')]
        new = http.get(f"/memory/m1/items/{out.json()['new_item_id']}", headers=reader).json()
        assert new["value"] == 1.09


def test_cli_remembers_with_a_source_block_and_refreshes(tmp_path, source_server):
    db = tmp_path / "c.db"
    source_server.resources["/rate"] = {"status": 500}
    _cli(db, "memory", "create", "m1")
    src = json.dumps(block(source_server.url("/rate")))
    w = json.loads(_cli(db, "--memory", "m1", "--json", "remember", "user:alice", "eur_usd",
                        "1.08", "--json-value", "--cached-source-json", src))
    env = {"REMEM_REFRESH_ORIGINS": "loopback"}
    out = json.loads(_cli(db, "--memory", "m1", "--json", "refresh", w["item_id"], env=env,
                          expect=3))
    assert out["state"] == "failed" and "HTTP 500" in out["reason"]
    source_server.resources["/rate"] = {"body": 1.11}
    human = _cli(db, "--memory", "m1", "refresh", w["item_id"], env=env)
    assert human.startswith("changed: item " + w["item_id"] + " -> item ")
    bad = _cli(db, "--memory", "m1", "--json", "remember", "user:alice", "x", "1",
               "--cached-source-json", '{"kind": "ftp"}', expect=1)
    assert json.loads(bad)["error"]["details"]["field"] == "cached_source.kind"
