"""The README's "Log + Facts" round trip runs as written (the `remem` of the snippet is this
checkout's CLI) and prints what it promises."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def readme_snippet() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Log + Facts\n", 1)[1].split("\n## ", 1)[0]
    return re.search(r"```sh\n(.*?)```", section, re.S).group(1)


def test_the_readme_round_trip_runs_and_the_records_match(tmp_path):
    script = (f'remem() {{ "{sys.executable}" -m remem.cli.main "$@"; }}\nset -e\n'
              + readme_snippet())
    env = {**os.environ, "OMP_NUM_THREADS": "1", "COLUMNS": "200",
           "PYTHONPATH": str(ROOT / "src")}
    out = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True,
                         text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    assert "same records after the move" in out.stdout
    assert "the forgotten value did not travel" in out.stdout
    assert "vegan" not in (tmp_path / "moved.jsonl").read_text()
