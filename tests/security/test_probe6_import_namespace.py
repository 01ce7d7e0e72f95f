"""Round-6 probe: ``remem import`` (``Memory.import_log_facts``) keeps a LogEntry's ``id`` and
``runId`` as the file gives them, even inside *another* scope's namespace: a crafted entry of
scope ``user:maya`` with id ``user:bob/turn1`` (or run ``user:bob/chat``) squats on bob's
names. Every other write path puts such a name under the target scope
(``user:maya/user:bob/turn1``, README "Names are per scope"), so a scoped token's namespace
stays its own. After the import, bob's writer token gets ``409 idempotency_conflict`` for his
own ``turn1`` (an existence oracle for a source he cannot read), and his run ``chat``
continues maya's hash chain. The import must refuse such a line (invalid_input naming the
field, nothing written). Real server on loopback, real SQLite file, the owner's import."""

from __future__ import annotations

import hashlib
import json

import pytest

import remem
from remem.errors import InvalidInput
from security.probe4_kit import Probe

TEXT = "I moved to Porto in May."


def _entry(entry_id: str, run_id: str) -> dict:
    payload = {"text": TEXT}
    digest = hashlib.sha256(json.dumps(payload, separators=(",", ":")).encode()).hexdigest()
    return {"id": entry_id, "kind": "user-message", "payload": payload,
            "contentHash": f"sha256:{digest}", "entryHash": "sha256:" + "1" * 64,
            "prevHash": "sha256:" + "0" * 64, "runId": run_id,
            "scope": {"tenantId": "acme", "userId": "maya"}, "sequence": 0,
            "timestamp": "2026-05-01T10:00:00.000000Z"}


@pytest.fixture
def probe(tmp_path):
    p = Probe(tmp_path)
    yield p
    p.close()


def _import(probe: Probe, tmp_path, record: dict) -> None:
    path = tmp_path / "crafted.jsonl"
    path.write_text(json.dumps(record) + "\n")
    store = remem.open(probe.db)
    try:
        store.memory("m1").import_log_facts(path)
    finally:
        store.close()


def test_an_imported_entry_id_in_another_scopes_namespace_is_refused(probe, tmp_path):
    with pytest.raises(InvalidInput) as err:
        _import(probe, tmp_path, _entry("user:bob/turn1", "imported"))
    assert err.value.details.get("field") == "id"
    assert "Porto" not in probe.call("root", "GET", "/memory/m1/export").text
    r = probe.call("bw", "POST", "/memory/m1/observe", json={
        "scope": "user:bob", "text": "I live in Oslo.", "source_id": "turn1"})
    assert r.status_code == 202, r.text
    assert r.json()["source_id"] == "user:bob/turn1"


def test_an_imported_run_id_in_another_scopes_namespace_is_refused(probe, tmp_path):
    with pytest.raises(InvalidInput) as err:
        _import(probe, tmp_path, _entry("m-1", "user:bob/chat"))
    assert err.value.details.get("field") == "runId"
    r = probe.ok("bw", "POST", "/memory/m1/observe", json={
        "scope": "user:bob", "text": "I live in Oslo.", "source_id": "b1", "run_id": "chat"})
    assert (r["run_id"], r["sequence"]) == ("user:bob/chat", 0)


def test_an_imported_entry_in_its_own_scopes_namespace_is_kept(probe, tmp_path):
    _import(probe, tmp_path, _entry("user:maya/turn1", "user:maya/chat"))
    lines = probe.call("root", "GET", "/memory/m1/export").text.splitlines()
    ids = [json.loads(x)["id"] for x in lines]
    assert "user:maya/turn1" in ids
