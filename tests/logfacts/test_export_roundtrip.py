"""Log+Facts export and import (issue 16 point 5) through the Python API, on both backends:
schema-valid lines, chains, nothing forgotten leaves, export -> import -> export is
byte-identical, tombstones keep a forgotten claim forgotten, a bad line writes nothing."""

from __future__ import annotations

import json

import pytest

import remem
from remem.domain.access import Principal, Role
from remem.errors import InvalidInput, PermissionDenied
from remem.service.logfacts_io import comparable_lines

from .kit import (ERASED, FORGOTTEN, VALIDATOR, content_hash, export_bytes, populate,
                  records, sorted_lines)

ZERO = "sha256:" + "0" * 64


@pytest.fixture
def source(store_url):
    s = remem.open(store_url)
    populate(s.create_memory("m1"))
    yield s
    s.close()


def test_every_line_is_schema_valid_and_chained_per_run(source):
    data = export_bytes(source.memory("m1"))
    recs = records(data)
    for r in recs:
        assert not list(VALIDATOR.iter_errors(r)), r["id"]
    logs = [r for r in recs if "runId" in r]
    # every entry with its real chain; the erased s2 keeps its place without its payload
    assert [(r["runId"], r["sequence"], r["id"]) for r in logs] == [
        ("r1", 0, "s1"), ("r1", 1, "s2"), ("r1", 2, "s3"), ("r2", 0, "t1")]
    for run in ("r1", "r2"):
        prev = ZERO
        for r in (x for x in logs if x["runId"] == run):
            assert r["prevHash"] == prev
            if "payload" in r:
                assert r["contentHash"] == content_hash(r["payload"])
            prev = r["entryHash"]
    s2 = next(r for r in logs if r["id"] == "s2")
    assert "payload" not in s2 and "contentHash" not in s2
    assert next(r for r in logs if r["id"] == "s3")["kind"] == "agent-message"
    t1 = next(r for r in logs if r["id"] == "t1")
    assert t1["scope"] == {"tenantId": "default", "userId": "agent:bot"}
    assert t1["kind"] == "tool-result" and t1["actor"] == "calc"
    mem = source.memory("m1")
    facts = {r["id"]: r for r in recs if r.get("type") not in (
        "remem-tombstone", "remem-claim-key", "remem-item-state") and "runId" not in r}
    for item_id, rec in facts.items():  # exactly what Memory.fact says of each item
        assert rec == mem.fact(item_id)
    cities = sorted((r for r in facts.values() if r["content"]["key"] == "home_city"),
                    key=lambda r: r["version"])
    assert [r["content"]["value"] for r in cities] == ["Lisbon", "Porto"]
    assert cities[1]["supersedes"] == cities[0]["id"]
    assert cities[0]["causedByLogId"] == ["s1"]
    tone = next(r for r in facts.values() if r["content"]["key"] == "rule_tone")
    assert tone["retention"]["legalHold"] is True and tone["type"] == "rule"
    nick = next(r for r in facts.values() if r["content"]["key"] == "nickname")
    states = {r["id"]: r["content"] for r in recs if r.get("type") == "remem-item-state"}
    assert states[nick["id"] + "#state"]["status"] == "archived"
    assert states[cities[0]["id"] + "#state"] == {"status": "superseded",
                                                  "validAt": "2024-03-01T09:00:00.000000Z",
                                                  "cardinality": "single"}
    assert states[cities[1]["id"] + "#state"]["metadata"] == {"confidence": "high"}
    tombs = [r for r in recs if r.get("type") == "remem-tombstone"]
    assert len(tombs) == 1 and "content" not in tombs[0]


def test_forgotten_content_is_never_exported(source):
    data = export_bytes(source.memory("m1")).lower()
    assert FORGOTTEN.encode() not in data
    assert ERASED.lower().encode() not in data


def test_export_import_export_gives_the_same_records(source, other_url):
    first = export_bytes(source.memory("m1"))
    path = _write(first, source)
    # into a new memory of the same store: item ids derive from the memory, the rest is kept
    m2 = source.create_memory("m2")
    summary = m2.import_log_facts(path)
    assert (summary.log_entries, summary.facts, summary.tombstones) == (4, 6, 1)
    assert summary.warnings  # its tombstones cannot match claims keyed by another memory
    again = export_bytes(m2)
    assert comparable_lines(again, same_memory=False) == comparable_lines(
        first, same_memory=False)
    assert sorted_lines(again) != sorted_lines(first)  # the item ids are m2's own
    # into the same memory id of another database (a migration): byte for byte
    target = remem.open(other_url)
    try:
        m1 = target.create_memory("m1")
        assert not m1.import_log_facts(path).warnings
        assert sorted_lines(export_bytes(m1)) == sorted_lines(first)
        report = target.verify()
        assert report["ok"], report
        assert target.rebuild("m1")  # the read model refolds from the imported ledger
        assert sorted_lines(export_bytes(target.memory("m1"))) == sorted_lines(first)
    finally:
        target.close()

def test_an_imported_tombstone_keeps_the_forgotten_claim_forgotten(store_url, other_url):
    s = remem.open(store_url)
    t = remem.open(other_url)
    try:
        m = s.create_memory("m1")
        m.observe("user:maya", "I am vegan")
        gone = m.inspect("user:maya", "diet").current[0]
        m.forget(gone.item_id)
        path = _write(export_bytes(m), s)
        control = t.create_memory("control")  # without the tombstone the claim is learned
        control.observe("user:maya", "I am vegan")
        assert control.inspect("user:maya", "diet").value == "vegan"
        restored = t.create_memory("m1")
        restored.import_log_facts(path)
        restored.observe("user:maya", "I am vegan")
        after = restored.inspect("user:maya", "diet")
        assert after.current == [] and after.value is None
    finally:
        s.close()
        t.close()


def test_a_bad_line_writes_nothing_and_names_line_and_field_not_value(source, tmp_path):
    lines = export_bytes(source.memory("m1")).splitlines()
    bad = json.loads(lines[3])
    assert bad["runId"] == "r1"  # a log entry
    bad["scope"] = {"tenantId": "default", "userId": "SECRET VALUE 123"}
    lines[3] = json.dumps(bad).encode()
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    target = source.create_memory("m3")
    head = source.adapter.head_seq("m3")
    with pytest.raises(InvalidInput) as err:
        target.import_log_facts(path)
    assert err.value.details["line"] == 4
    assert err.value.details["field"].endswith("scope")
    assert "SECRET" not in str(err.value) and "SECRET" not in json.dumps(err.value.details)
    assert source.adapter.head_seq("m3") == head
    assert target.items(status="all").total == 0
    assert source.adapter.export_counts("m3") == {"sources": 0, "items": 0, "tombstones": 0}


def test_a_schema_violation_is_refused_before_anything_is_written(source, tmp_path):
    good = export_bytes(source.memory("m1")).splitlines()
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b"\n".join(good[:5] + [b'{"id":"x","type":"fact","scope":{},'
                                              b'"version":1,"createdAt":"2024-01-01T00:00:00Z"}'])
                     + b"\n")
    target = source.create_memory("m4")
    with pytest.raises(InvalidInput) as err:
        target.import_log_facts(path)
    assert err.value.details == {"line": 6, "field": "scope.tenantId"}
    assert source.adapter.export_counts("m4") == {"sources": 0, "items": 0, "tombstones": 0}


@pytest.mark.parametrize("principal", [
    Principal("m1", Role.WRITER, "user:maya", "tok1"),
    Principal("m1", Role.ADMIN, "user:maya", "tok2"),
    Principal("m1", Role.READER, "admin", "tok3")])
def test_only_the_owner_or_a_memory_wide_admin_exports_or_imports(source, principal, tmp_path):
    mem = source.memory("m1").as_principal(principal)
    with pytest.raises(PermissionDenied):
        mem.export_log_facts()
    with pytest.raises(PermissionDenied):
        mem.import_log_facts(tmp_path / "never-read.jsonl")
    admin = Principal("m1", Role.ADMIN, "admin", "tok4")
    assert b"".join(source.memory("m1").as_principal(admin).export_log_facts()) == \
        export_bytes(source.memory("m1"))


def _write(data: bytes, store) -> str:
    import tempfile

    fh = tempfile.NamedTemporaryFile("wb", suffix=".jsonl", delete=False)
    with fh:
        fh.write(data)
    return fh.name


def test_an_owner_message_keeps_its_role_through_the_round_trip(store_url, other_url):
    s, t = remem.open(store_url), remem.open(other_url)
    try:
        m = s.create_memory("m1")
        m.observe("user:maya", "note to self", role="owner", source_id="o1", derive=False)
        path = _write(export_bytes(m), s)
        restored = t.create_memory("m1")
        restored.import_log_facts(path)
        assert t.adapter.source("m1", "o1")["role"] == "owner"
        assert sorted_lines(export_bytes(restored)) == sorted_lines(export_bytes(m))
    finally:
        s.close()
        t.close()


def test_an_audit_copy_without_the_claim_key_says_its_tombstones_cannot_match(source,
                                                                             other_url):
    import io

    buf = io.BytesIO()
    source.memory("m1").export_log_facts_to(buf, claim_key=False)
    types = [json.loads(x).get("type") for x in buf.getvalue().splitlines()]
    assert "remem-claim-key" not in types and "remem-tombstone" in types
    target = remem.open(other_url)
    try:
        summary = target.create_memory("m1").import_log_facts(_write(buf.getvalue(), source))
        assert summary.tombstones == 1 and any("no claim key" in w for w in summary.warnings)
    finally:
        target.close()


def test_paging_by_keyset_gives_the_same_export_at_any_page_size(source, monkeypatch):
    """The store reads a page at a time (nothing memory-wide in RAM); two rows a page
    crosses every page boundary of sources, items and tombstones and loses nothing."""
    import remem.stores.sql.export as export_reads

    mem = source.memory("m1")
    for i in range(5):  # more tombstones, in two scopes and keys, to cross pages
        gone = mem.remember("user:zed" if i % 2 else "user:maya", f"pet_{i % 3}",
                            f"animal {i}", valid_at=None)
        mem.forget(gone.item_id)
    whole = export_bytes(mem)
    monkeypatch.setattr(export_reads, "EXPORT_PAGE", 2)
    assert export_bytes(mem) == whole
    # claim key, 4 log entries, 6 facts each with its item state, 6 tombstones
    assert len(whole.splitlines()) == 1 + 4 + 12 + 6


def test_a_key_keeps_its_cardinality_in_a_memory_whose_config_does_not_name_it(store_url):
    s = remem.open(store_url)
    try:
        src = s.create_memory("src", {"keys": {"color": {"cardinality": "multi"}}})
        for v in ("red", "blue"):
            src.remember("user:maya", "color", v)
        first = export_bytes(src)
        dst = s.create_memory("dst")  # default config: 'color' would be single
        dst.import_log_facts(_write(first, s))
        assert sorted(i.value for i in dst.items(key="color").items) == ["blue", "red"]
        assert comparable_lines(export_bytes(dst), same_memory=False) == comparable_lines(
            first, same_memory=False)  # another memory id: its own item ids
    finally:
        s.close()
