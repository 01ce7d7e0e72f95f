"""The retention job sweeps orphan blob files: a crash between writing a blob and committing
its fact leaves a file no payload refers to. Old orphans go; a fresh file (a write still in
flight) and every referenced blob stay; the run's stats count the swept files."""

from __future__ import annotations

import os
import time
from remem.service.memory_facts import BLOB_GRACE_S, sweep_orphan_blobs

from .fact_kit import (  # noqa: F401 - fixtures
    ALICE,
    big_text,
    blob_dir,
    blob_files,
    clock,
    store,
)

CONFIG = {"retention": {"interval_hours": 1}}


def _plant(folder, name: str, age_s: float) -> os.PathLike:
    path = folder / name
    path.write_bytes(b'{"value": "left behind by a crash"}')
    at = time.time() - age_s
    os.utime(path, (at, at))
    return path


def test_retention_job_sweeps_old_orphans_and_keeps_fresh_and_referenced_blobs(store, clock):
    mem = store.create_memory("m1", config=CONFIG)
    kept = mem.remember_fact(ALICE, "trip_report", big_text(100_000))
    [real] = blob_files(store)
    os.utime(real, (time.time() - 2 * BLOB_GRACE_S,) * 2)  # old, but referenced
    folder = real.parent
    old = _plant(folder, "blob_crashed", 2 * BLOB_GRACE_S)
    old_tmp = _plant(folder, ".tmp-interrupted", 2 * BLOB_GRACE_S)
    fresh = _plant(folder, "blob_in_flight", 60)
    other = store.create_memory("m2")
    other.remember_fact(ALICE, "notes", big_text(80_000))
    [theirs] = [p for p in blob_files(store) if p.parent.name == "m2"]
    os.utime(theirs, (time.time() - 2 * BLOB_GRACE_S,) * 2)
    clock.advance(hours=2)
    runs = [o for o in mem.run_jobs() if o["kind"] == "retention"]
    assert runs[0]["stats"]["orphan_blobs"] == 2
    assert not old.exists() and not old_tmp.exists()
    assert fresh.exists() and real.exists() and theirs.exists()
    assert mem.fact_content(kept.item_id).endswith("tailmarkerword")
    assert [r for r in mem.runs() if r["kind"] == "retention"][0]["status"] == "succeeded"


def test_the_grace_period_protects_a_blob_until_it_is_an_hour_old(store):
    mem = store.create_memory("m1")
    mem.remember_fact(ALICE, "trip_report", big_text(100_000))
    folder = blob_files(store)[0].parent
    orphan = _plant(folder, "blob_orphan", 0)
    now = time.time()
    assert sweep_orphan_blobs(mem, now_s=now + BLOB_GRACE_S - 5) == 0
    assert orphan.exists()
    assert sweep_orphan_blobs(mem, now_s=now + BLOB_GRACE_S + 5) == 1
    assert not orphan.exists() and len(blob_files(store)) == 1


def test_a_memory_without_blobs_sweeps_nothing(store, clock):
    mem = store.create_memory("m1", config=CONFIG)
    mem.remember_fact(ALICE, "diet", "vegan", retention={"keep_days": 1})
    clock.advance(days=2)
    runs = [o for o in mem.run_jobs() if o["kind"] == "retention"]
    assert runs[0]["stats"] == {"erased": 1, "blocked": 0, "blobs": 0, "orphan_blobs": 0}


def test_the_sweep_never_reaches_outside_its_memory_folder(store):
    mem = store.create_memory("m1")
    mem.remember_fact(ALICE, "trip_report", big_text(100_000))
    root = store.blobs.root
    stray = root / "not-a-bucket.txt"
    stray.write_bytes(b"x")
    os.utime(stray, (time.time() - 2 * BLOB_GRACE_S,) * 2)
    assert sweep_orphan_blobs(mem, grace_s=0) == 0
    assert stray.exists()
