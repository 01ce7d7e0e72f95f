"""Fact content: up to 64 KB inline for facts (instantKV slots keep 1,024 bytes), larger in
the file-backed blob store (``blob://local/<memory>/<key>``, files 0600 under the data dir,
written atomically); recall indexes a bounded text (4,096 characters) and renders big
content clipped; forgetting a fact deletes its blob file and the report says so. Both
backends (PostgreSQL keeps its blobs in a named directory)."""

from __future__ import annotations

import json
import stat

import pytest
from logfacts.fact_kit import (  # noqa: F401
    ALICE,
    MARK,
    assert_valid_fact,
    blob_dir,
    big_text,
    blob_files,
    clock,
    mem,
    store,
)

import remem
from remem.domain.canonical import canonical_json
from remem.domain.fact import content_hash
from remem.errors import InvalidInput



def test_a_fact_holds_64_kb_inline_while_a_plain_value_keeps_the_slot_limit(mem, store):
    value = big_text(60_000)
    r = mem.remember_fact(ALICE, "trip_report", value, type="summary")
    rec = mem.fact(r.item_id)
    assert_valid_fact(rec)
    assert rec["content"]["value"] == value and "contentRef" not in rec
    assert rec["size"] == len(canonical_json({"key": "trip_report", "value": value}))
    assert blob_files(store) == []  # inline: no blob written
    with pytest.raises(InvalidInput) as info:
        mem.remember(ALICE, "notes", "x" * 1025)
    assert info.value.details["limit"] == 1024 and "remember_fact" in str(info.value)
    from remem.service.apply import apply_document

    with pytest.raises(InvalidInput):  # an instantKV proposal keeps its slot limit too
        apply_document(mem, json.dumps({"entity": ALICE, "attribute": "notes",
                                        "value": "x" * 1025, "kind": "fact",
                                        "operation": "assert"}))
    assert mem.items(scope=ALICE, key="notes").items == []


def test_content_above_64_kb_goes_to_a_private_blob_file_written_whole(mem, store, backend,
                                                                       tmp_path):
    value = big_text(100_000)
    r = mem.remember_fact(ALICE, "trip_report", value, type="summary")
    rec = mem.fact(r.item_id)
    assert_valid_fact(rec)
    assert rec["contentRef"].startswith("blob://local/m1/blob_")
    files = blob_files(store)
    assert len(files) == 1 and files[0].name == rec["contentRef"].rsplit("/", 1)[1]
    expected_root = tmp_path / ("remem.db.blobs" if backend == "sqlite" else "blobs")
    assert files[0].parent == expected_root / "m1"  # the memory's data dir
    assert stat.S_IMODE(files[0].stat().st_mode) == 0o600
    data = files[0].read_bytes()
    assert data == canonical_json({"key": "trip_report", "value": value})
    assert rec["size"] == len(data) and rec["contentHash"] == content_hash(data)
    assert rec["content"] == {"key": "trip_report", "summary": value[:4096]}
    assert mem.fact_content(r.item_id) == value
    assert not [p for p in files[0].parent.iterdir() if p.name.startswith(".tmp-")]


def test_recall_finds_big_content_by_its_indexed_text_and_renders_it_clipped(mem):
    inline = mem.remember_fact(ALICE, "trip_report", big_text(60_000), type="summary")
    blob = mem.remember_fact(ALICE, "field_log", big_text(90_000, "okapimeadow"))
    for rid, word in ((inline.item_id, MARK), (blob.item_id, "okapimeadow")):
        res = mem.recall(ALICE, word, budget_tokens=1000, mode="lexical")
        assert [i.id for i in res.items] == [rid]
        assert res.tokens <= 1000 and "…[+" in res.text  # clipped, still within budget
        assert len(res.text) < 2_000
    # only the first 4,096 characters are indexed: the tail word is not in the full text
    assert mem.recall(ALICE, "tailmarkerword", budget_tokens=1000, mode="lexical").items == []
    for budget in (12, 40, 200):  # never blows up: items drop, truncated says so
        res = mem.recall(ALICE, MARK, budget_tokens=budget)
        assert res.tokens <= budget and res.truncated


def test_forget_deletes_the_blob_file_and_the_report_says_so(mem, store):
    r = mem.remember_fact(ALICE, "trip_report", big_text(100_000))
    path = blob_files(store)[0]
    report = mem.forget(r.item_id).to_dict()
    assert report["state"] == "completed"
    assert report["surfaces"]["blobs"] == {"erased": 1, "state": "erased"}
    assert not path.exists()
    leftover = b"".join(p.read_bytes() for p in blob_files(store))
    assert MARK.encode() not in leftover and blob_files(store) == []
    with pytest.raises(remem.NotFound):
        mem.fact_content(r.item_id)


def test_forget_scope_deletes_every_blob_of_the_scope_and_keeps_others(mem, store):
    mem.remember_fact(ALICE, "trip_report", big_text(100_000))
    mem.remember_fact(ALICE, "field_log", big_text(70_000, "okapimeadow"))
    kept = mem.remember_fact("user:bob", "field_log", big_text(70_000, "bobsecret"))
    report = mem.forget_scope(ALICE).to_dict()
    assert report["surfaces"]["blobs"] == {"erased": 2, "state": "erased"}
    files = blob_files(store)
    assert len(files) == 1 and b"bobsecret" in files[0].read_bytes()
    assert mem.fact_content(kept.item_id).startswith("bobsecret")


def test_a_duplicate_or_refused_big_fact_leaves_no_orphan_blob(mem, store):
    value = big_text(100_000)
    first = mem.remember_fact(ALICE, "trip_report", value, source={"id": "log-1"})
    again = mem.remember_fact(ALICE, "trip_report", value, source={"id": "log-1"})
    assert again.replayed and again.item_id == first.item_id
    seen = mem.remember_fact(ALICE, "trip_report", value)  # no key: decided "seen again"
    assert seen.outcome == "duplicate" and seen.item_id == first.item_id
    assert len(blob_files(store)) == 1
    with pytest.raises(InvalidInput):  # bad kind: refused before anything is written
        mem.remember_fact(ALICE, "other_report", value, kind="gossip")
    with pytest.raises(InvalidInput):
        mem.remember_fact(ALICE, "other_report", value, retention={"keep_days": 0})
    assert len(blob_files(store)) == 1
    assert mem.items(scope=ALICE, key="other_report").items == []


def test_deleting_a_memory_deletes_its_blobs(store):
    m2 = store.create_memory("m2")
    m2.remember_fact(ALICE, "trip_report", big_text(100_000))
    assert len(blob_files(store)) == 1
    store.delete_memory("m2")
    assert blob_files(store) == []


def test_without_a_blob_directory_big_content_is_refused_with_what_to_do(store_url, backend,
                                                                         monkeypatch):
    if backend == "sqlite":
        pytest.skip("a SQLite file always has a data dir")
    monkeypatch.delenv("REMEM_BLOB_DIR", raising=False)
    s = remem.open(store_url)
    try:
        m = s.create_memory("m1")
        with pytest.raises(InvalidInput) as info:
            m.remember_fact(ALICE, "trip_report", big_text(100_000))
        assert "blob_dir" in str(info.value)
        assert m.items(scope=ALICE).items == []
    finally:
        s.close()


def test_a_blob_reference_never_escapes_the_blob_root(tmp_path):
    from remem.stores.blobs import LocalBlobStore

    blobs = LocalBlobStore(tmp_path / "b")
    for ref in ("blob://local/../x", "blob://local/m1/../../etc", "blob://other/m1/k",
                "blob://local/m1/.hidden", "blob://local/m1"):
        with pytest.raises(InvalidInput):
            blobs.get(ref)
    ref = blobs.put("m1", "k1", b"hello")
    assert blobs.get(ref) == b"hello" and blobs.exists(ref)
    assert blobs.delete(ref) and not blobs.delete(ref) and not blobs.exists(ref)
    json.dumps(ref)  # a plain string


def test_the_key_names_value_check_stays_exact_and_cheap_on_big_values():
    import time

    from remem.domain.limits import key_names_value

    assert key_names_value("home_city_paris", "Paris")
    assert key_names_value("home_city_paris", "!" * 100_000 + " paris")  # few letters: checked
    value = big_text(1_000_000)
    started = time.perf_counter()
    assert not key_names_value("trip_report", value)
    assert time.perf_counter() - started < 0.2  # stops counting letters early (was ≈1.4 s)
