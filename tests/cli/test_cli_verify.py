"""``remem verify`` in a real subprocess on a tampered SQLite file: a clear message naming
every broken link and its position, exit code 2, never a traceback."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import remem

_SCRIPT = shutil.which("remem", path=str(Path(sys.executable).parent))
REMEM = [_SCRIPT] if _SCRIPT else [sys.executable, "-m", "remem.cli.main"]


def _remem(db: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "REMEM_DATABASE_URL": str(db), "COLUMNS": "200", "NO_COLOR": "1",
           "TERM": "dumb"}
    proc = subprocess.run([*REMEM, *args], capture_output=True, text=True, env=env,
                          cwd=db.parent, timeout=60)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    return proc


def _tamper(db: Path, *statements: str) -> None:
    conn = sqlite3.connect(db)
    for s in statements:
        assert conn.execute(s).rowcount == 1
    conn.commit()
    conn.close()


def test_verify_reports_unparsable_event_json_and_a_deleted_row_without_a_traceback(tmp_path):
    db = tmp_path / "r.db"
    s = remem.open(db)
    mem = s.create_memory("m1")
    for city in ("Paris", "Rome", "Oslo", "Lima"):
        mem.remember("user:alice", "home_city", city)
    s.close()
    _tamper(db, "UPDATE ledger SET data = '[' || substr(data, 2) WHERE seq=3",
            "DELETE FROM ledger WHERE seq=6")
    proc = _remem(db, "verify")
    assert proc.returncode == 2
    assert "m1: BROKEN (7 events) first break at seq 3" in proc.stdout
    assert "ledger position 3 (seq 3): event data is not valid JSON (altered bytes)" in proc.stdout
    assert "ledger position 6 (seq 7): expected seq 6, found 7 (seq 6 missing)" in proc.stdout
    proc = _remem(db, "--json", "verify")
    assert proc.returncode == 2
    rep = json.loads(proc.stdout)
    assert [(b["seq"], b["position"]) for b in rep["memories"]["m1"]["breaks"]] == [(3, 3),
                                                                                   (7, 6)]


def test_rebuild_of_a_damaged_ledger_fails_clearly_and_keeps_the_read_model(tmp_path):
    db = tmp_path / "r.db"
    s = remem.open(db)
    mem = s.create_memory("m1")
    mem.remember("user:alice", "home_city", "Paris")
    mem.remember("user:alice", "home_city", "Rome")
    s.close()
    _tamper(db, "UPDATE ledger SET data = '[' || substr(data, 2) WHERE seq=2")
    proc = _remem(db, "-m", "m1", "rebuild")
    assert proc.returncode == 1
    assert "Ledger event seq 2 of memory 'm1' cannot be read" in proc.stdout + proc.stderr
    assert "remem verify" in proc.stdout + proc.stderr
    s = remem.open(db)
    try:  # the failed rebuild rolled back: the read model is still there
        assert s.memory("m1").inspect("user:alice", "home_city").value == "Rome"
    finally:
        s.close()
