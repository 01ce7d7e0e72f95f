"""Export/import of a Kind-B cached fact and a blob fact, on both backends: the Source block
and the contentRef travel, the restore under the same memory id is byte-identical, and a file
whose blob is not in the target's blob directory is refused before anything is written."""

from __future__ import annotations

import json
import shutil

import pytest

import remem
from remem.errors import InvalidInput

from .cached_kit import block
from .kit import VALIDATOR, export_bytes, records, sorted_lines

BIG = "x" * 70_000  # above the 64 KB inline limit: a blob fact


def _open(url: str, backend: str, blobs) -> remem.RememStore:
    return remem.open(url, **({"blob_dir": blobs} if backend == "postgres" else {}))


@pytest.fixture
def exported(store_url, backend, tmp_path):
    s = _open(store_url, backend, tmp_path / "blobs-a")
    m = s.create_memory("m1")
    cached = m.remember("user:maya", "eur_usd", 1.08,
                        cached_source=block("https://rates.example/eur", etag='"v1"'))
    big = m.remember_fact("user:maya", "manual", BIG, type="document")
    data = export_bytes(m)
    path = tmp_path / "m1.jsonl"
    path.write_bytes(data)
    yield s, data, path, cached.item_id, big.item_id
    s.close()


def test_the_source_block_and_the_content_ref_travel(exported):
    s, data, _, cached_id, big_id = exported
    recs = {r["id"]: r for r in records(data)}
    for r in recs.values():
        assert not list(VALIDATOR.iter_errors(r)), r["id"]
    assert recs[cached_id]["source"]["uri"] == "https://rates.example/eur"
    assert recs[cached_id]["source"]["freshness"]["etag"] == '"v1"'
    assert recs[big_id]["contentRef"].startswith("blob://local/m1/")
    assert recs[big_id]["size"] > 70_000 and BIG.encode() not in data
    assert recs[big_id]["type"] == "document"
    mem = s.memory("m1")
    assert {k: v for k, v in recs[cached_id].items() if k != "source"} == mem.fact(cached_id)
    assert recs[big_id] == mem.fact(big_id)


def test_a_restore_with_the_blob_directory_is_byte_identical(exported, other_url, backend,
                                                               tmp_path):
    s, data, path, cached_id, big_id = exported
    t = _open(other_url, backend, tmp_path / "blobs-b")
    try:
        shutil.copytree(s.blobs.root, t.blobs.root, dirs_exist_ok=True)
        m = t.create_memory("m1")
        summary = m.import_log_facts(path)
        assert (summary.facts, summary.item_states) == (2, 2)
        assert sorted_lines(export_bytes(m)) == sorted_lines(data)
        assert m.fact_content(big_id) == BIG
        assert m.ctx.cached.source_block(cached_id)["uri"] == "https://rates.example/eur"
        assert t.verify()["ok"]
    finally:
        t.close()


def test_a_missing_blob_refuses_the_file_and_writes_nothing(exported, other_url, backend,
                                                            tmp_path):
    _, data, path, _, big_id = exported
    line = 1 + next(i for i, r in enumerate(records(data)) if r["id"] == big_id)
    t = _open(other_url, backend, tmp_path / "blobs-empty")
    try:
        m = t.create_memory("m1")
        with pytest.raises(InvalidInput) as err:
            m.import_log_facts(path)
        assert err.value.details == {"line": line, "field": "contentRef"}
        assert t.adapter.export_counts("m1") == {"sources": 0, "items": 0, "tombstones": 0}
        assert json.dumps(err.value.details).count("blob://") == 0
    finally:
        t.close()
