"""Round-6 probe: ``POST /facts`` took any pack-defined ``type``, including the three that
remem's own export uses for its bookkeeping records (``remem-claim-key``,
``remem-item-state``, ``remem-tombstone``). A scoped writer (``user:alice``) could store such
a fact; the export then carries a line with that ``type`` and import reads it as a
bookkeeping record: ``line N: field 'content.secret' is not valid ... nothing was
imported``. One writer made the whole memory's backup un-restorable (README: "A round trip
(export, restore into another database under the same memory id ...)"). The fix refuses the
reserved ``remem-`` prefix on write. Real server on loopback, real SQLite files."""

from __future__ import annotations

import pytest

import remem
from security.probe4_kit import Probe

RESERVED = {
    "remem-claim-key": {"memoryId": "m1", "secret": "QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE="},
    "remem-item-state": {"status": "current", "validAt": "2026-01-01T00:00:00.000000Z"},
    "remem-tombstone": "x",
}


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    p = Probe(tmp_path_factory.mktemp("types"))
    yield p
    p.close()


@pytest.mark.parametrize("fact_type", sorted(RESERVED))
def test_a_writer_cannot_store_a_fact_of_an_export_record_type(probe, fact_type):
    r = probe.call("aw", "POST", "/memory/m1/facts", json={
        "scope": "user:alice", "key": "planted", "content": RESERVED[fact_type],
        "type": fact_type})
    assert r.status_code == 400, r.text
    assert r.json()["error"]["code"] == "invalid_input"
    assert r.json()["error"]["details"]["field"] == "type"


def test_an_ordinary_pack_type_is_still_taken(probe):
    r = probe.call("aw", "POST", "/memory/m1/facts", json={
        "scope": "user:alice", "key": "invoice_total", "content": 12, "type": "billing-total"})
    assert r.status_code == 200, r.text


def test_the_memory_export_still_restores_after_the_attempts(probe, tmp_path):
    for fact_type in RESERVED:
        probe.call("aw", "POST", "/memory/m1/facts", json={
            "scope": "user:alice", "key": "planted", "content": RESERVED[fact_type],
            "type": fact_type})
    path = tmp_path / "m1.jsonl"
    path.write_text(probe.call("root", "GET", "/memory/m1/export").text)
    store = remem.open(tmp_path / "restored.db")
    try:
        mem = store.create_memory("m1", tenant_id="acme")
        mem.import_log_facts(path)
        assert "invoice_total" in {i.key for i in mem.items().items}
    finally:
        store.close()


def test_a_type_of_128_bytes_is_taken_as_documented(probe):
    """docs/log-facts.md: ``type`` is a free string of at most 128 bytes (the route said 64
    characters, 422)."""
    ok = probe.call("aw", "POST", "/memory/m1/facts", json={
        "scope": "user:alice", "key": "long_type", "content": 1, "type": "t" * 128})
    assert ok.status_code == 200, ok.text
    over = probe.call("aw", "POST", "/memory/m1/facts", json={
        "scope": "user:alice", "key": "long_type2", "content": 1, "type": "é" * 65})
    assert over.status_code == 400 and over.json()["error"]["details"]["field"] == "type"
