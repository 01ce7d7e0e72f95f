"""Round-7 probe: ``remem serve`` logged every request line with its query string (uvicorn's
default access log at ``--log-level info``, the default), so what a user typed into a GET
form or filter (the manage view's text search ``/ui/items?text=...``, ``/items?filters=``
with metadata values) stayed in the operator's logs after that text was forgotten. The access
log now keeps the method, path and status and drops the query. Real ``remem serve`` on
loopback, real SQLite file."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import httpx

import remem
from remem.service.tokens import Tokens
from remem.testing.served import free_port

SECRET = "qzdiagnosisq"


def test_the_access_log_keeps_paths_but_not_the_query_strings_users_typed(tmp_path):
    db = str(tmp_path / "log.db")
    store = remem.open(db)
    try:
        store.create_memory("m1")
        token, _ = Tokens(store).create("m1", "admin", "admin")
    finally:
        store.close()
    port, log = free_port(), tmp_path / "serve.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "remem.cli.main", "--db", db, "serve",
                                 "--host", "127.0.0.1", "--port", str(port)],
                                stdout=out, stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                assert time.monotonic() < deadline and proc.poll() is None, log.read_text()
                time.sleep(0.05)
        auth = {"Authorization": f"Bearer {token}"}
        r = httpx.get(f"{base}/memory/m1/items", headers=auth, params={
            "filters": json.dumps({"metadata": {"diagnosis": SECRET}})})
        assert r.status_code == 200, r.text
        r = httpx.get(f"{base}/ui/items", params={"text": SECRET})
        assert r.status_code in (200, 303, 401), r.text
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    text = log.read_text(errors="replace")
    assert "GET /memory/m1/items" in text and "GET /ui/items" in text, text[-2000:]
    assert SECRET not in text, text[-2000:]
