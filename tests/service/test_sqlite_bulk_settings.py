"""SQLite's bulk-only setting (a batch defers its WAL checkpoint) lasts only as long as the
batch, and an acknowledged batch survives a killed process (``stores/sqlite/uow.py``,
``store.py``): real SQLite files, a real OS process killed with SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import remem
from remem.service.writer import Writer
from remem.stores.sqlite.store import CACHE_KIB
from remem.stores.sqlite.uow import NORMAL_WAL_AUTOCHECKPOINT_PAGES


def _batch(start: int, n: int) -> list[dict]:
    return [{"scope": f"user:u{i % 5}", "key": "likes", "value": f"sailing to island {i}",
             "kind": "preference"} for i in range(start, start + n)]


def _wal_frames(store) -> tuple[int, int]:
    """(frames in the WAL, frames of it already copied into the database)."""
    _, log, done = store.adapter.conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    return log, done


def test_batches_checkpoint_once_for_many_and_a_single_write_restores_the_normal_rhythm(
        tmp_path: Path) -> None:
    store = remem.open(tmp_path / "bulk.db")
    try:
        mem = store.create_memory("m1")
        conn = store.adapter.conn
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db, wal = tmp_path / "bulk.db", tmp_path / "bulk.db-wal"
        db_bytes = db.stat().st_size
        for start in range(0, 1200, 200):
            mem.remember_many(_batch(start, 200))
            assert conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == \
                NORMAL_WAL_AUTOCHECKPOINT_PAGES
        # more than the normal threshold went into the WAL and no batch's commit copied a
        # page of it into the database file: the threshold was raised while each committed
        assert wal.stat().st_size > NORMAL_WAL_AUTOCHECKPOINT_PAGES * 4096, wal.stat()
        assert db.stat().st_size == db_bytes
        mem.remember("user:u1", "home_city", "Oslo")  # a single write: the normal threshold
        assert db.stat().st_size > db_bytes  # its commit checkpointed what the batches left
        frames, copied = _wal_frames(store)
        assert frames == copied
        assert sum(mem.status()["items"].values()) == 1201
        assert store.verify()["ok"]
    finally:
        store.close()


def test_a_batch_that_fails_restores_the_normal_threshold_and_writes_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = remem.open(tmp_path / "bulk.db")
    try:
        mem = store.create_memory("m1")
        real = Writer._write_in
        calls = []

        def failing(self, uow, req, *rest):  # rest: a claim id the batch computed
            calls.append(1)
            if len(calls) == 3:
                raise RuntimeError("boom")
            return real(self, uow, req, *rest)

        monkeypatch.setattr(Writer, "_write_in", failing)
        with pytest.raises(RuntimeError):
            mem.remember_many(_batch(0, 5))
        conn = store.adapter.conn
        assert conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == \
            NORMAL_WAL_AUTOCHECKPOINT_PAGES
        assert sum(mem.status()["items"].values()) == 0
    finally:
        store.close()


def test_the_store_connection_keeps_a_page_cache_sized_for_random_key_inserts(
        tmp_path: Path) -> None:
    store = remem.open(tmp_path / "bulk.db")
    try:
        store.create_memory("m1")
        assert store.adapter.conn.execute("PRAGMA cache_size").fetchone()[0] == -CACHE_KIB
    finally:
        store.close()


BULK_THEN_WAIT = textwrap.dedent("""
    import sys, time
    import remem
    store = remem.open(sys.argv[1])
    mem = store.memory("m1")
    for b in range(6):
        mem.remember_many([{"scope": f"user:u{i % 5}", "key": "likes",
                            "value": f"sailing to island {i}", "kind": "preference"}
                           for i in range(b * 200, b * 200 + 200)])
        print(f"acked {b}", flush=True)
    time.sleep(60)
""")


def test_acknowledged_batches_survive_a_killed_process_before_any_checkpoint(
        tmp_path: Path) -> None:
    db = tmp_path / "bulk.db"
    s = remem.open(db)
    s.create_memory("m1")
    s.close()
    proc = subprocess.Popen([sys.executable, "-c", BULK_THEN_WAIT, str(db)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for b in range(6):
            line = proc.stdout.readline()
            assert line.strip() == f"acked {b}", proc.stderr.read()
        assert (tmp_path / "bulk.db-wal").stat().st_size > NORMAL_WAL_AUTOCHECKPOINT_PAGES * 4096
    finally:
        os.kill(proc.pid, signal.SIGKILL)  # the WAL was never checkpointed
        proc.wait(timeout=20)
    assert proc.returncode == -signal.SIGKILL
    store = remem.open(db)
    try:
        mem = store.memory("m1")
        assert sum(mem.status()["items"].values()) == 1200
        assert mem.items(key="likes", scope="user:u4", limit=1).items
        rep = store.verify()
        assert rep["ok"], rep
        before = store.adapter.dump("m1")  # the read model matches the ledger after the kill
        store.rebuild("m1")
        assert store.adapter.dump("m1") == before
    finally:
        store.close()
