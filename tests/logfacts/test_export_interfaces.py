"""The export over a real `remem serve` (GET /memory/{id}/export, streamed NDJSON, admin
only) and the `remem export` / `remem import` commands, on both backends."""

from __future__ import annotations

import json
import os
import subprocess

import httpx

import remem
from _plugins.cli_in_process import run_cli
from remem.testing.served import Server

from remem.service.logfacts_io import comparable_lines

from .kit import VALIDATOR, export_bytes, populate


def cli(url: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "COLUMNS": "200"}
    out = run_cli(["--db", url, *args], text=True, env=env)
    if check:
        assert out.returncode == 0, out.stderr[-2000:]
    return out


def test_http_export_streams_the_same_lines_to_an_admin_and_refuses_others(store_url):
    s = remem.open(store_url)
    mem = s.create_memory("m1", tenant_id="acme")
    populate(mem)
    expected = export_bytes(mem)
    admin = mem.create_token("admin", "admin")[0]
    writer = mem.create_token("writer", "user:maya")[0]
    scoped_admin = mem.create_token("admin", "user:maya")[0]
    s.close()
    with Server(store_url, startup_s=90) as srv:
        with httpx.stream("GET", f"{srv.base}/memory/m1/export", params={"tenant": "acme"},
                          headers={"Authorization": f"Bearer {admin}"}, timeout=30) as r:
            assert r.status_code == 200
            assert r.headers["content-type"].startswith("application/x-ndjson")
            body = b"".join(r.iter_bytes())
        recs = [json.loads(line) for line in body.splitlines()]
        assert recs and all(VALIDATOR.is_valid(x) for x in recs)
        assert {x["scope"]["tenantId"] for x in recs} == {"acme"}
        r = httpx.get(f"{srv.base}/memory/m1/export", timeout=30,
                      headers={"Authorization": f"Bearer {admin}"})
        assert r.content == expected  # the default tenant: the Python export, byte for byte
        r = httpx.get(f"{srv.base}/memory/m1/export", params={"tenant": "globex"},
                      headers={"Authorization": f"Bearer {admin}"}, timeout=30)
        assert r.status_code == 403  # a token never labels its export as another tenant
        for token in (writer, scoped_admin):
            r = httpx.get(f"{srv.base}/memory/m1/export",
                          headers={"Authorization": f"Bearer {token}"}, timeout=30)
            assert r.status_code == 403
            assert r.json()["error"]["code"] == "permission_denied"
        r = httpx.get(f"{srv.base}/memory/m2/export",
                      headers={"Authorization": f"Bearer {admin}"}, timeout=30)
        assert r.status_code == 404


def test_cli_round_trip_summary_and_a_bad_file_creates_nothing(store_url, tmp_path):
    s = remem.open(store_url)
    populate(s.create_memory("m1"))
    s.close()
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    out = json.loads(cli(store_url, "--json", "export", "--format", "log-facts",
                         "--memory", "m1", "--out", str(a)).stdout)
    assert (out["log_entries"], out["facts"], out["tombstones"]) == (4, 6, 1)
    assert out["bytes"] == a.stat().st_size and out["seconds"] >= 0
    got = json.loads(cli(store_url, "--json", "import", str(a), "--memory", "copy").stdout)
    assert got["created"] is True and got["records"] == out["records"]
    cli(store_url, "export", "-m", "copy", "-o", str(b))
    assert comparable_lines(b.read_bytes(), same_memory=False) == comparable_lines(
        a.read_bytes(), same_memory=False)  # another memory id: its own item ids
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(a.read_bytes() + b'{"id": "x", "kind": "user-message"}\n')
    r = cli(store_url, "import", str(bad), "--memory", "never", check=False)
    assert r.returncode == 1
    assert f"line {out['records'] + 1}" in r.stderr + r.stdout
    listed = cli(store_url, "--json", "memory", "list").stdout
    assert "never" not in listed
    r = cli(store_url, "export", "--format", "csv", "-m", "m1", "-o", str(b), check=False)
    assert r.returncode == 1 and "log-facts" in r.stderr + r.stdout
