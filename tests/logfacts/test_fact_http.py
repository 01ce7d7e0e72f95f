"""Facts over a real `remem serve` (HTTP) and the real CLI, on SQLite and PostgreSQL: the
returned record is valid against the shared schema and equal to the Python one; a reader
cannot put; another scope's fact reads exactly like a missing id; content over 64 MiB and
malformed retention are 4xx and write nothing.

One server per backend serves the module; each test has a memory (and a blob bucket) of its
own. The CLI test runs one real ``remem`` process and the other commands in process
(tests/_plugins/cli_in_process.py)."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import httpx
import pytest

import remem
from _plugins.backends import BACKENDS, copy_migrated_sqlite, pg_database
from _plugins.cli_in_process import run_cli
from remem.domain.limits import MAX_BLOB_BYTES
from remem.domain.timefmt import from_iso
from remem.testing.served import Server

from .cached_kit import block
from .fact_kit import (  # noqa: F401 - fixtures
    ALICE,
    assert_valid_fact,
    big_text,
    blob_dir,
)

MISSING = "itm_000000000000000000000000"


@pytest.fixture
def env(blob_dir) -> dict[str, str]:
    return {**os.environ, "REMEM_BLOB_DIR": str(blob_dir), "OMP_NUM_THREADS": "1"}


@dataclass
class Served:
    """One test's memory on the module's server: an HTTP client rooted at the memory, bearer
    headers by name, the database URL, the memory id and its own blob folder."""

    http: httpx.Client
    heads: dict[str, dict[str, str]]
    url: str
    memory_id: str
    blob_dir: Path  # the server's blob root
    blobs: Path  # this memory's bucket under it


_MEMORY_NUMBER = itertools.count(1)


@pytest.fixture(scope="module", params=BACKENDS)
def server(request, tmp_path_factory):
    """One `remem serve` per backend for the whole module (a server start costs seconds);
    yields (database URL, base URL, blob root). Each test works in a memory of its own."""
    tmp = tmp_path_factory.mktemp(f"facts-{request.param}")
    blob_root = tmp / "blobs"
    env = {**os.environ, "REMEM_BLOB_DIR": str(blob_root), "OMP_NUM_THREADS": "1"}
    with ExitStack() as stack:
        if request.param == "sqlite":
            url = str(copy_migrated_sqlite(request, tmp / "remem.db"))
        else:
            url = stack.enter_context(pg_database())
        srv = stack.enter_context(Server(url, env=env, startup_s=90))
        yield url, srv.base, blob_root


@pytest.fixture
def served(server) -> Iterator[Served]:
    """A memory of this test's own on the served database, and bearer headers for: alice
    writer, alice reader, bob writer, admin."""
    url, base, blob_root = server
    memory_id = f"m{next(_MEMORY_NUMBER)}"
    s = remem.open(url)
    mem = s.create_memory(memory_id)
    who = {"writer": ("writer", ALICE), "reader": ("reader", ALICE),
           "bob": ("writer", "user:bob"), "admin": ("admin", "admin")}
    heads = {n: {"Authorization": f"Bearer {mem.create_token(r, sub)[0]}"}
             for n, (r, sub) in who.items()}
    s.close()
    with httpx.Client(base_url=f"{base}/memory/{memory_id}", timeout=120) as http:
        yield Served(http, heads, url, memory_id, blob_root, blob_root / memory_id)


def _days_kept(rec: dict) -> float:
    """keepDays as the record states it: keepUntil - createdAt, in days."""
    keep = from_iso(rec["retention"]["keepUntil"]) - from_iso(rec["createdAt"])
    return keep / timedelta(days=1)


def _count(http, heads) -> int:
    r = http.get("/items", params={"scope": ALICE, "status": "all"}, headers=heads["admin"])
    return r.json()["total"]


def test_a_writer_puts_facts_and_a_reader_gets_the_schema_record_and_content(served):
    http, heads = served.http, served.heads
    small = http.post("/facts", headers=heads["writer"], json={
        "scope": ALICE, "key": "diet", "content": {"diet": "vegan"}, "type": "user-profile",
        "retention": {"keepDays": 30}})
    assert small.status_code == 200, small.text
    text = big_text(200_000)
    big = http.post("/facts", headers=heads["writer"], json={
        "scope": ALICE, "key": "trip_report", "content": text, "type": "summary"})
    assert big.status_code == 200 and big.json()["outcome"] == "created", big.text
    records = {}
    for w in (small, big):
        r = http.get(f"/facts/{w.json()['item_id']}", headers=heads["reader"])
        assert r.status_code == 200
        assert_valid_fact(r.json())
        records[w.json()["item_id"]] = r.json()
    rec = records[small.json()["item_id"]]
    assert (rec["type"], rec["content"]["value"]) == ("user-profile", {"diet": "vegan"})
    assert _days_kept(rec) == 30
    brec = records[big.json()["item_id"]]
    assert brec["contentRef"].startswith(f"blob://local/{served.memory_id}/")
    assert brec["size"] > 200_000
    full = http.get(f"/facts/{big.json()['item_id']}/content", headers=heads["reader"])
    assert full.json() == {"item_id": big.json()["item_id"], "content": text}
    assert any(p.is_file() for p in served.blobs.rglob("*"))
    s = remem.open(served.url, blob_dir=served.blob_dir)
    try:
        mem = s.memory(served.memory_id)
        assert records == {i: mem.fact(i) for i in records}  # the Python record, exactly
    finally:
        s.close()


def test_a_reader_cannot_put_and_an_unknown_field_is_refused(served):
    http, heads = served.http, served.heads
    r = http.post("/facts", headers=heads["reader"],
                  json={"scope": ALICE, "key": "diet", "content": "vegan"})
    assert r.status_code == 403 and r.json()["error"]["code"] == "permission_denied"
    r = http.post("/facts", headers=heads["writer"],
                  json={"scope": ALICE, "key": "diet", "content": "vegan", "colour": "red"})
    assert r.status_code == 422 and r.json()["error"]["code"] == "validation_failed"
    r = http.post("/facts", headers=heads["bob"],
                  json={"scope": ALICE, "key": "diet", "content": "vegan"})
    assert r.status_code == 403
    big = {"scope": ALICE, "key": "notes", "value": big_text(100_000)}
    r = http.post("/items", headers=heads["writer"], json=big)  # other routes keep 64 KiB
    assert r.status_code == 413 and r.json()["error"]["code"] == "request_too_large"
    assert _count(http, heads) == 0


def test_a_fact_with_a_cached_source_is_a_kind_b_cached_fact(served):
    http, heads = served.http, served.heads
    src = block("https://rates.example.com/eur_usd", ttl=300, etag='"v1"')
    w = http.post("/facts", headers=heads["writer"], json={
        "scope": ALICE, "key": "eur_usd", "content": 1.08, "cached_source": src})
    assert w.status_code == 200, w.text
    got = http.get(f"/items/{w.json()['item_id']}/cached-source", headers=heads["reader"])
    out = got.json()
    assert (out["kind"], out["uri"], out["refresh"]) == (src["kind"], src["uri"],
                                                         src["refresh"])
    assert out["freshness"]["etag"] == '"v1"' and out["freshness"]["ttlSeconds"] == 300
    bad = http.post("/facts", headers=heads["writer"], json={
        "scope": ALICE, "key": "eur_gbp", "content": 0.85, "cached_source": {"kind": "ftp"}})
    assert bad.status_code == 422
    assert _count(http, heads) == 1


def test_another_scopes_fact_is_the_same_404_as_a_missing_id(served):
    http, heads = served.http, served.heads
    item = http.post("/facts", headers=heads["writer"], json={
        "scope": ALICE, "key": "diet", "content": "vegan"}).json()["item_id"]
    for suffix in ("", "/content"):
        hidden = http.get(f"/facts/{item}{suffix}", headers=heads["bob"])
        missing = http.get(f"/facts/{MISSING}{suffix}", headers=heads["bob"])
        assert hidden.status_code == missing.status_code == 404
        assert hidden.text.replace(item, "ID") == missing.text.replace(MISSING, "ID")
        assert http.get(f"/facts/{item}{suffix}", headers=heads["reader"]).status_code == 200


MALFORMED_RETENTION = [
    {"keepDays": 0}, {"keepDays": "soon"}, {"keepDays": "3"}, {"keepDays": 2.5},
    {"keepUntil": "2026-03-01T09:00:00"}, {"keepUntil": "tomorrow"},
    {"keepUntil": "2026-03-01T09:00:00Z", "keepDays": 3}, {"keepForever": True},
    {"keep_days": 3}, {"legalHold": "yes"}, "30 days", [30]]


def test_malformed_retention_is_4xx_and_writes_nothing(served):
    http, heads = served.http, served.heads
    for retention in MALFORMED_RETENTION:
        r = http.post("/facts", headers=heads["admin"], json={
            "scope": ALICE, "key": "trip_report", "content": big_text(100_000),
            "retention": retention})
        assert 400 <= r.status_code < 500, (retention, r.text)
        assert r.json()["error"]["code"] in ("validation_failed", "invalid_input")
    assert _count(http, heads) == 0
    assert not any(p.is_file() for p in served.blobs.rglob("*"))


def test_content_over_64_mib_is_4xx_and_writes_nothing(served):
    http, heads = served.http, served.heads
    text = "x" * (MAX_BLOB_BYTES + 10)
    r = http.post("/facts", headers=heads["writer"],
                  json={"scope": ALICE, "key": "dump", "content": text})
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_input"
    assert r.json()["error"]["details"]["field"] == "value"
    assert _count(http, heads) == 0
    assert not any(p.is_file() for p in served.blobs.rglob("*"))


def _cli(url: str, env: dict, *args: str, expect: int = 0, real: bool = False) -> str:
    """``remem --json ARGS`` on memory m1: in process, or a real process if ``real``."""
    argv = ["--db", url, "--memory", "m1", "--json", *args]
    if real:
        out = subprocess.run([sys.executable, "-m", "remem.cli.main", *argv],
                             capture_output=True, text=True, env=env, timeout=120)
    else:
        out = run_cli(argv, env=env, text=True)
    assert "Traceback" not in out.stderr, out.stderr
    assert out.returncode == expect, (out.returncode, out.stdout, out.stderr)
    return out.stdout


def test_cli_puts_and_shows_a_fact_and_refuses_malformed_retention(
        store_url, env, tmp_path, blob_dir):
    s = remem.open(store_url, blob_dir=blob_dir)
    s.create_memory("m1")
    s.close()
    report = tmp_path / "report.txt"
    report.write_text(big_text(120_000))
    w = json.loads(_cli(store_url, env, "fact", "put", ALICE, "trip_report", "--content-file",
                        str(report), "--text", "--type", "summary", "--keep-days", "7",
                        real=True))  # one real process: the console script, its env
    assert w["outcome"] == "created"
    rec = json.loads(_cli(store_url, env, "fact", "show", w["item_id"]))
    assert_valid_fact(rec)
    assert (rec["type"], _days_kept(rec)) == ("summary", 7)
    assert rec["contentRef"].startswith("blob://local/m1/")
    full = json.loads(_cli(store_url, env, "fact", "show", w["item_id"], "--content"))
    assert full["content"] == report.read_text()
    for bad in (["--keep-until", "2026-13-01T00:00:00Z"], ["--keep-days", "0"],
                ["--keep-until", "2026-03-01T09:00:00Z", "--keep-days", "2"]):
        err = json.loads(_cli(store_url, env, "fact", "put", ALICE, "diet", "--content",
                              '"vegan"', *bad, expect=1))
        assert err["error"]["code"] == "invalid_input"
        assert err["error"]["details"]["field"].startswith("retention")
    err = json.loads(_cli(store_url, env, "fact", "put", ALICE, "diet", "--content",
                          "not json", expect=1))
    assert err["error"]["details"]["field"] == "content"
    s = remem.open(store_url, blob_dir=blob_dir)
    try:
        assert s.memory("m1").items(scope=ALICE, status="all").total == 1
    finally:
        s.close()
