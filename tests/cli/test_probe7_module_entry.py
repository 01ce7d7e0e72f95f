"""Round-7 probe: ``python -m remem`` (the way the team brief and a newcomer without the
console script run the CLI) failed with "No module named remem.__main__". It now runs the
same ``remem`` command line (a real subprocess, a real SQLite file)."""

from __future__ import annotations

import json
import subprocess
import sys


def test_python_dash_m_remem_runs_the_command_line(tmp_path):
    db = str(tmp_path / "m.db")
    made = subprocess.run([sys.executable, "-m", "remem", "--db", db, "--json", "memory",
                           "create", "assistant"], capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    listed = subprocess.run([sys.executable, "-m", "remem", "--db", db, "--json", "memory",
                             "list"], capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0, listed.stderr
    assert [m["memory_id"] for m in json.loads(listed.stdout)] == ["assistant"]
