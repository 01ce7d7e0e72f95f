"""Erasure truth on SQLite (issue 12): a forget report never says ``completed`` while a byte
of the erased text remains in the database file or its WAL. A reader's snapshot and a
process killed between commit and scrub leave the erasure ``pending``, recorded durably, and
it is finished later (worker, next open). Real files, real processes."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import remem
from remem.service.jobs.runner import Worker
from tests.forget.test_forget import raw_bytes

U = "user:maya"
SECRET = "Zanzibar-Quokka-7731"
QUOTE = "my secret hideout is Zanzibar-Quokka-7731, tell no one"
NEEDLE = SECRET.lower().encode()


def _fill(mem: remem.Memory, n: int = 20) -> None:
    for i in range(n):  # neighbours on the same pages
        mem.remember(f"user:u{i}", "home_city", f"City number {i}",
                     source={"id": f"a{i}", "text": f"I live in city number {i}"})


def test_a_reader_snapshot_keeps_the_report_pending_until_the_worker_scrubs(db_path):
    store = remem.open(db_path, scrub_wait_ms=200)
    mem = store.create_memory("m1")
    _fill(mem)
    r = mem.remember(U, "hideout", SECRET, source={"id": "t1", "text": QUOTE})
    reader = sqlite3.connect(db_path)  # a long report that started before the forget
    reader.execute("BEGIN")
    assert reader.execute("SELECT count(*) FROM payloads").fetchone()[0] == 21

    rep = mem.forget(r.item_id)

    assert rep.state == "pending" and "snapshot" in rep.reason
    assert rep.surfaces["payloads"] == {"erased": 1, "state": "erased"}  # rows are gone
    assert NEEDLE in raw_bytes(db_path)  # ... but the bytes are not: pending is the truth
    assert store.pending_erasures() == 1 and mem.status()["pending_erasures"] == 1
    assert store.verify()["pending_erasures"] == 1
    assert Worker(store).finish_erasures()["state"] == "pending"  # still held
    assert NEEDLE in raw_bytes(db_path)

    reader.rollback()
    reader.close()
    out = Worker(store).finish_erasures()

    assert out["state"] == "completed" and out["pending"] == 0
    assert store.pending_erasures() == 0 and mem.status()["pending_erasures"] == 0
    data = raw_bytes(db_path)
    assert NEEDLE not in data and b"secret hideout" not in data
    assert b"city number 19" in data  # the check can see text at all
    assert Worker(store).finish_erasures() is None  # nothing owed any more
    assert store.verify()["ok"]


def test_a_completed_report_means_the_checkpoint_emptied_the_wal(db_path):
    store = remem.open(db_path)
    mem = store.create_memory("m1")
    _fill(mem, 5)
    r = mem.remember(U, "hideout", SECRET, source={"id": "t1", "text": QUOTE})
    rep = mem.forget(r.item_id)
    assert rep.state == "completed" and rep.reason is None
    assert store.pending_erasures() == 0
    assert NEEDLE not in raw_bytes(db_path)


CHILD = textwrap.dedent("""
    import os, signal, sys
    import remem

    store = remem.open(sys.argv[1])
    mem = store.create_memory("m1")
    for i in range(20):
        mem.remember(f"user:u{i}", "home_city", f"City number {i}")
    r = mem.remember("user:maya", "hideout", sys.argv[2],
                     source={"id": "t1", "text": "my secret hideout is " + sys.argv[2]})
    # die right after the erasing transaction committed, before any scrub
    store.adapter.scrub_after_erasure = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)
    mem.forget(r.item_id)
    print("not killed")
""")


def test_a_process_killed_between_commit_and_scrub_is_scrubbed_on_the_next_open(db_path):
    src = str(Path(remem.__file__).resolve().parents[1])
    proc = subprocess.run([sys.executable, "-c", CHILD, str(db_path), SECRET],
                          capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": src, "OMP_NUM_THREADS": "1", "PATH": "/usr/bin"})
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert NEEDLE in raw_bytes(db_path)  # the kill left the text in the files
    ro = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:  # the erasure committed, and so did the scrub it owes
        assert ro.execute("SELECT count(*) FROM payloads").fetchone()[0] == 20
        assert ro.execute("SELECT kind FROM erasure_scrubs").fetchall() == [("forget",)]
    finally:
        ro.close()

    store = remem.open(db_path)
    assert store.pending_erasures() == 0  # the first use opened the file and scrubbed it

    data = raw_bytes(db_path)
    assert NEEDLE not in data and b"secret hideout" not in data
    assert b"city number 19" in data
    mem = store.memory("m1")
    assert mem.inspect(U, "hideout").state == "forgotten"
    assert store.verify()["ok"]
    store.close()


def test_forgetting_a_source_under_a_reader_snapshot_is_pending_then_scrubbed(db_path):
    store = remem.open(db_path, scrub_wait_ms=200)
    mem = store.create_memory("m1")
    for i in range(10):
        mem.observe(U, f"small talk number {i}", source_id=f"s{i}", derive=False)
    mem.observe(U, QUOTE, source_id="secret", derive=False)
    reader = sqlite3.connect(db_path)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM sources").fetchone()

    out = mem.forget_source("secret")

    assert out["state"] == "pending" and out["reason"] and out["scopes"] == "all"
    assert NEEDLE in raw_bytes(db_path) and store.pending_erasures("m1") == 1
    reader.rollback()
    reader.close()
    store.close()  # the next open finishes the owed scrub
    again = remem.open(db_path)
    assert again.pending_erasures() == 0
    assert NEEDLE not in raw_bytes(db_path)
    assert again.verify()["ok"]
    again.close()
