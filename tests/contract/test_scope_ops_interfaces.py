"""Forget a whole scope and index health through a real `remem serve` on loopback and the
`remem` command (run in process: tests/_plugins/cli_in_process.py), on SQLite and PostgreSQL
(issue 13.4, 13.5)."""

from __future__ import annotations

import json
import os
import subprocess

import httpx
import pytest

import remem
from _plugins.cli_in_process import run_cli
from remem.service.tokens import Tokens
from remem.testing.served import Server



def _seed(store_url: str) -> dict[str, dict[str, str]]:
    """m1 with two scopes of data, a held item in user:c; bearer headers by name."""
    s = remem.open(store_url)
    try:
        m = s.create_memory("m1")
        m.remember("user:alice", "diet", "vegan")
        m.observe("user:alice", "I am vegan since 2019.", source_id="a1", derive=False)
        m.remember("user:bob", "diet", "keto")
        held = m.remember("user:c", "diet", "paleo").item_id
        m.set_legal_hold(held)
        tokens = Tokens(s)
        out = {}
        for name, role, subject in (("admin", "admin", "admin"), ("bob", "writer", "user:bob"),
                                    ("alice", "writer", "user:alice")):
            tok, _ = tokens.create("m1", role, subject, label=name)
            out[name] = {"Authorization": f"Bearer {tok}"}
        return out
    finally:
        s.close()


def _err(r: httpx.Response, status: int, code: str) -> dict:
    assert r.status_code == status, r.text
    assert r.json()["error"]["code"] == code, r.text
    return r.json()["error"]


def test_http_forget_scope_and_status(store_url):
    h = _seed(store_url)
    with Server(store_url) as srv:
        url = f"{srv.base}/memory/m1"
        st = httpx.get(f"{url}/status", headers=h["admin"]).json()
        assert st["index_health"]["state"] == "healthy"
        assert st["index_health"]["receipts"]["available"] == 1
        # the scope is required and a handle (the API's one 4xx for a bad body)
        _err(httpx.post(f"{url}/forget-scope", headers=h["admin"], json={}),
             422, "validation_failed")
        _err(httpx.post(f"{url}/forget-scope", headers=h["admin"], json={"scope": "user:*"}),
             400, "invalid_input")
        _err(httpx.post(f"{url}/forget-scope", headers=h["bob"],
                        json={"scope": "user:alice"}), 403, "permission_denied")
        e = _err(httpx.post(f"{url}/forget-scope", headers=h["admin"],
                            json={"scope": "user:c"}), 409, "legal_hold_active")
        assert e["details"]["held"] == 1 and "1 item of scope user:c is under" in e["message"]
        rep = httpx.post(f"{url}/forget-scope", headers=h["alice"],
                         json={"scope": "user:alice"}).json()
        assert rep["state"] == "completed" and len(rep["items"]) == 1
        assert rep["sources"] == ["a1"] and rep["tombstones"] == 1
        assert rep["scopes"] == ["user:alice"]
        items = httpx.get(f"{url}/items", headers=h["admin"]).json()["items"]
        assert sorted(i["scope"] for i in items) == ["user:bob", "user:c"]


def _cli(store_url: str, *args: str, input: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb"}
    env.pop("REMEM_MEMORY", None)
    proc = run_cli(["--db", store_url, "--memory", "m1", *args], stdin=input, text=True, env=env)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    return proc


def test_cli_forget_all_in_scope_asks_first_and_reports(store_url):
    _seed(store_url)
    no = _cli(store_url, "forget", "--all-in-scope", "user:alice", input="n\n")
    assert no.returncode != 0 and "Forget every item and source of scope" in no.stdout
    unasked = _cli(store_url, "--json", "forget", "--all-in-scope", "user:alice")
    assert unasked.returncode == 1 and "invalid_input" in unasked.stdout + unasked.stderr
    bare = _cli(store_url, "forget")
    assert bare.returncode == 1 and "--all-in-scope" in bare.stdout + bare.stderr
    s = remem.open(store_url)
    try:
        assert s.memory("m1").inspect("user:alice", "diet").revision == 1  # nothing erased
    finally:
        s.close()
    held = _cli(store_url, "--json", "forget", "--all-in-scope", "user:c", "--yes")
    assert held.returncode == 1 and "legal_hold_active" in held.stdout + held.stderr
    ok = _cli(store_url, "--json", "forget", "--all-in-scope", "user:alice", "--yes")
    assert ok.returncode == 0, ok.stderr
    rep = json.loads(ok.stdout)
    assert rep["state"] == "completed" and rep["sources"] == ["a1"] and len(rep["items"]) == 1
    human = _cli(store_url, "forget", "--all-in-scope", "user:bob", input="y\n")
    assert human.returncode == 0 and "erasure report: completed" in human.stdout


def test_cli_status_shows_index_health(store_url):
    _seed(store_url)
    out = json.loads(_cli(store_url, "--json", "status").stdout)
    assert out["index_health"]["state"] == "healthy"
    assert out["index_health"]["jobs"] == {} or all(
        c["failed"] == 0 for c in out["index_health"]["jobs"].values())
    human = _cli(store_url, "status").stdout
    assert "index healthy (0 pending, 0 failed)" in human
