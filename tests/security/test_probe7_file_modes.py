"""Round-7 probe: a new SQLite database (and its ``-wal`` and ``-shm`` files) was created
with the process umask's default mode, 0644 on most systems, and so was the file of
``remem export --out``: every memory's text, its keyed-claim-id secret and the token hashes
were readable by any local user, while remem's blob files are 0600 in a 0700 directory.
New database files and export files are now created 0600 (owner only); a file that already
exists keeps the mode its owner gave it. Real SQLite files, a real ``remem`` process."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest

import remem


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def _others_bits(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode) & 0o077


def test_a_new_database_and_its_wal_files_are_private(tmp_path, umask_022):
    db = tmp_path / "private.db"
    store = remem.open(str(db))
    try:
        store.create_memory("m1").remember("user:maya", "diagnosis", "private text")
        files = [p for p in (db, tmp_path / "private.db-wal", tmp_path / "private.db-shm")
                 if p.exists()]
        assert len(files) == 3, files  # WAL mode: all three exist while the store is open
        assert {p.name: oct(_others_bits(p)) for p in files} == \
            {p.name: "0o0" for p in files}
    finally:
        store.close()


def test_an_existing_database_keeps_its_mode(tmp_path, umask_022):
    """A guard beside the fix (passes before it too): remem never changes an existing
    file's mode."""
    db = tmp_path / "shared.db"
    for _ in range(2):
        store = remem.open(str(db))
        store.list_memories()  # opens (and creates) the file
        store.close()
        if stat.S_IMODE(os.stat(db).st_mode) != 0o640:
            os.chmod(db, 0o640)  # the operator's choice (e.g. a group that backs it up)
    assert stat.S_IMODE(os.stat(db).st_mode) == 0o640


def test_an_export_file_is_private(tmp_path, umask_022):
    db = str(tmp_path / "e.db")
    store = remem.open(db)
    store.create_memory("m1").remember("user:maya", "diagnosis", "private text")
    store.close()
    out = tmp_path / "backup.jsonl"
    done = subprocess.run([sys.executable, "-m", "remem.cli.main", "--db", db, "-m", "m1",
                           "--json", "export", "--out", str(out)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "private text" in out.read_text()
    assert oct(_others_bits(out)) == "0o0"
