"""``observe_many`` over HTTP (typed request, batch limit, scoped tokens) and from the CLI
(``remem observe-many --file F.jsonl``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

import remem
from remem.api import create_app
from remem.service.tokens import Tokens

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def client(store):
    store.create_memory("m1")
    tokens = Tokens(store)
    alice, _ = tokens.create("m1", "writer", "user:alice", label="alice")
    bob, _ = tokens.create("m1", "writer", "user:bob", label="bob")
    with TestClient(create_app(store)) as c:
        c.as_ = {"alice": {"Authorization": f"Bearer {alice}"},
                 "bob": {"Authorization": f"Bearer {bob}"}}
        yield c


def _post(client, who: str, body: dict):
    return client.post("/memory/m1/observe_many", headers=client.as_[who], json=body)


def test_http_observe_many_returns_one_receipt_per_turn_and_replays(client, store):
    body = {"scope": "user:alice", "run_id": "chat", "turns": [
        {"id": "t1", "text": "I like green tea.", "occurred_at": "2026-01-01T10:00:00Z"},
        {"id": "t2", "text": "My dog is called Rex.", "actor": "alice"}]}
    r = _post(client, "alice", body)
    assert r.status_code == 202, r.text
    receipts = r.json()["receipts"]
    assert [x["phase"] for x in receipts] == ["available", "available"]
    again = _post(client, "alice", body).json()["receipts"]
    assert [x["receipt_id"] for x in again] == [x["receipt_id"] for x in receipts]
    assert all(x["replayed"] for x in again)
    # a scoped token's ids live under its scope, as observe's do
    assert store.memory("m1").store.source("m1", "user:alice/t1") is not None


def test_http_observe_many_refuses_bad_batches_and_writes_nothing(client, store):
    mem = store.memory("m1")
    head = mem.store.head_seq("m1")
    unknown = _post(client, "alice", {"scope": "user:alice",
                                      "turns": [{"text": "hi", "colour": "red"}]})
    too_many = _post(client, "alice", {"scope": "user:alice",
                                       "turns": [{"text": f"t{i}"} for i in range(257)]})
    empty_text = _post(client, "alice", {"scope": "user:alice", "turns": [
        {"id": "a", "text": "fine"}, {"id": "b", "text": "   "}]})
    for r in (unknown, too_many):  # refused by the typed request model
        assert r.status_code == 422 and r.json()["error"]["code"] == "validation_failed"
    assert empty_text.status_code == 400, empty_text.text  # refused by the service
    assert empty_text.json()["error"]["code"] == "invalid_input"
    other = _post(client, "bob", {"scope": "user:alice", "turns": [{"text": "x"}]})
    assert other.status_code in (403, 404)
    assert mem.store.head_seq("m1") == head


def test_cli_observe_many_reads_jsonl_in_batches(tmp_path):
    db = tmp_path / "cli.db"
    remem.open(db).create_memory("m1")
    lines = [json.dumps({"id": f"t{i}", "text": f"We talked about item {i}."})
             for i in range(5)]
    (tmp_path / "turns.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "OMP_NUM_THREADS": "1"}

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "remem.cli.main", "--db", str(db),
                               "--memory", "m1", *args], capture_output=True, text=True,
                              env=env, timeout=120)

    first = cli("observe-many", "user:a", "--file", str(tmp_path / "turns.jsonl"),
                "--batch-size", "2")
    assert first.returncode == 0, first.stderr
    assert "5 turns: 5 recorded, 0 replayed" in first.stdout
    second = cli("--json", "observe-many", "user:a", "--file", str(tmp_path / "turns.jsonl"))
    assert [r["replayed"] for r in json.loads(second.stdout)] == [True] * 5
    (tmp_path / "bad.jsonl").write_text('{"id": "x", "text": "ok"}\nnot json\n')
    bad = cli("observe-many", "user:a", "--file", str(tmp_path / "bad.jsonl"))
    assert bad.returncode != 0 and "line 2" in bad.stderr
    store = remem.open(db)
    assert store.memory("m1").store.source("m1", "x") is None
