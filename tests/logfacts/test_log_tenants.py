"""Tenants over HTTP (issue 16 point 1), against a real `remem serve` on loopback, on SQLite
and PostgreSQL: every memory belongs to a tenant, a token reaches only its tenant's memory,
and another tenant's memory answers exactly like one that does not exist. Also: observe over
HTTP takes the log fields, and `remem verify` walks the chains."""

from __future__ import annotations

import json
import subprocess

import httpx
import pytest
from logfacts.log_kit import log_entry_validator, raw_sql

import remem
from _plugins.cli_in_process import run_cli
from remem.domain.logentry import log_entry_record
from remem.service.tokens import Tokens
from remem.testing.served import Server


def cli(db: str, *args: str) -> subprocess.CompletedProcess:
    return run_cli(["--db", db, "--json", *args], text=True)


@pytest.fixture
def served(store_url):  # noqa: F811
    """Tokens made before their memories exist: acme's admin (tenant t1), globex's admin
    (t2), an 'intruder' admin of tenant t2 bound to the id 'acme' and a 'ghost' admin of
    t2 bound to an id nobody creates. Yields (server, {name: client}, url)."""
    store = remem.open(store_url)
    tokens = Tokens(store)
    made = {"acme": tokens.create("acme", "admin", "admin", tenant_id="t1")[0],
            "globex": tokens.create("globex", "admin", "admin", tenant_id="t2")[0],
            "intruder": tokens.create("acme", "admin", "admin", tenant_id="t2")[0],
            "ghost": tokens.create("ghost", "admin", "admin", tenant_id="t2")[0]}
    store.close()
    with Server(store_url, startup_s=90) as srv:
        clients = {n: httpx.Client(base_url=srv.base, timeout=60,
                                   headers={"Authorization": f"Bearer {t}"})
                   for n, t in made.items()}
        try:
            yield srv, clients, store_url
        finally:
            for c in clients.values():
                c.close()


def _error(r: httpx.Response, status: int) -> dict:
    assert r.status_code == status, r.text
    return r.json()["error"]


def test_each_token_creates_and_reaches_memories_of_its_own_tenant_only(served):
    _, c, _ = served
    r = c["acme"].post("/memories", json={"memory_id": "acme"})
    assert r.status_code == 201 and r.json()["tenant_id"] == "t1"
    assert c["acme"].get("/memory/acme/status").json()["tenant"] == "t1"
    denied = c["globex"].post("/memories", json={"memory_id": "globex", "tenant_id": "t1"})
    assert _error(denied, 403)["code"] == "permission_denied"
    r = c["globex"].post("/memories", json={"memory_id": "globex"})
    assert r.status_code == 201 and r.json()["tenant_id"] == "t2"
    assert c["globex"].get("/memory/globex/status").json()["tenant"] == "t2"


#: Routes a token might probe another tenant's memory with: (method, path, body).
PROBES = [
    ("GET", "/memory/{m}/status", None),
    ("POST", "/memory/{m}/observe", {"scope": "user:eve", "text": "hello"}),
    ("POST", "/memory/{m}/recall", {"scopes": ["user:alice"], "query": "city",
                                    "budget_tokens": 200}),
    ("GET", "/memory/{m}/items", None),
    ("GET", "/memories/{m}", None),
    ("GET", "/memory/{m}/tokens", None),
    ("DELETE", "/memories/{m}", None),
]


def test_another_tenants_memory_reads_exactly_like_a_missing_one(served):
    _, c, _ = served
    assert c["acme"].post("/memories", json={"memory_id": "acme"}).status_code == 201
    c["acme"].post("/memory/acme/items", json={"scope": "user:alice", "key": "home_city",
                                               "value": "Paris"})
    for method, path, body in PROBES:
        other = c["intruder"].request(method, path.format(m="acme"), json=body)
        missing = c["ghost"].request(method, path.format(m="ghost"), json=body)
        assert other.status_code == missing.status_code == 404, (path, other.text)
        a, b = other.json()["error"], missing.json()["error"]
        assert a["code"] == b["code"] == "not_found_or_not_visible"
        assert a["message"].replace("'acme'", "<id>") == b["message"].replace("'ghost'",
                                                                              "<id>")
        assert set(a["details"]) == set(b["details"])
        assert "Paris" not in other.text and "t1" not in other.text
    status = c["acme"].get("/memory/acme/status").json()  # acme is there, untouched
    assert status["head_seq"] > 0 and status["tenant"] == "t1"


def test_observe_over_http_takes_kind_payload_and_caused_by(served):
    _, c, url = served
    acme = c["acme"]
    assert acme.post("/memories", json={"memory_id": "acme"}).status_code == 201
    call = acme.post("/memory/acme/observe", json={
        "scope": "user:alice", "kind": "tool-call", "run_id": "run-7",
        "payload": {"name": "weather", "arguments": {"city": "Lyon"}}})
    assert call.status_code == 202, call.text
    res = acme.post("/memory/acme/observe", json={
        "scope": "user:alice", "kind": "tool-result", "run_id": "run-7",
        "text": "sunny", "payload": {"unit": "C", "temp": 21},
        "caused_by_log_id": call.json()["source_id"]})
    assert res.status_code == 202, res.text
    assert (call.json()["sequence"], res.json()["sequence"]) == (0, 1)
    bad_kind = acme.post("/memory/acme/observe", json={"scope": "user:alice", "text": "x",
                                                       "kind": "document"})
    err = _error(bad_kind, 400)
    assert err["code"] == "invalid_input" and "tool-result" in err["message"]
    unknown = acme.post("/memory/acme/observe", json={"scope": "user:alice", "text": "x",
                                                      "causedBy": "x"})
    assert unknown.status_code in (400, 422)
    store = remem.open(url)
    try:
        row = store.adapter.source("acme", res.json()["source_id"])
        rec = log_entry_record(row)
        assert list(log_entry_validator().iter_errors(rec)) == []
        assert rec["payload"] == {"unit": "C", "temp": 21, "text": "sunny"}
        assert rec["causedByLogId"] == call.json()["source_id"]
        assert rec["scope"] == {"tenantId": "t1", "userId": "alice"}
        assert store.verify()["memories"]["acme"]["sources"] == 2
    finally:
        store.close()


def test_cli_creates_a_memory_in_a_tenant_and_verify_walks_its_log_chains(store_url):  # noqa: F811
    made = cli(store_url, "memory", "create", "m9", "--tenant", "t9")
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout)["tenant"] == "t9"
    shown = json.loads(cli(store_url, "memory", "show", "m9").stdout)
    assert shown["tenant"] == "t9"
    bad = cli(store_url, "memory", "create", "m10", "--tenant", "bad tenant")
    assert bad.returncode != 0 and "tenant" in bad.stdout + bad.stderr
    for i in range(2):
        r = cli(store_url, "--memory", "m9", "observe", "user:alice", f"turn {i}",
                "--run-id", "r", "--source-id", f"t{i}")
        assert r.returncode == 0, r.stderr
    ok = cli(store_url, "verify")
    assert ok.returncode == 0 and json.loads(ok.stdout)["memories"]["m9"]["sources"] == 2
    raw_sql(store_url, "UPDATE sources SET actor='mallory' WHERE source_id='t1'")
    broken = cli(store_url, "verify")
    assert broken.returncode == 2
    assert json.loads(broken.stdout)["memories"]["m9"]["sources_broken"]["source_id"] == "t1"
