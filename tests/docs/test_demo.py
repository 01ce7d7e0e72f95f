"""`make demo` runs: the conversation demo completes and says what a product should say."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_demo_runs_and_shows_every_part(tmp_path):
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "demo.py")], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300,
                         env={"COLUMNS": "160", "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr[-2000:]
    text = out.stdout
    for part in ("1. Capture", "2. Pinned profile", "3. Recall under", "4. inspect user:maya "
                 "home_city: Montreal", "As of 15 March 2024 she lived in: Lille",
                 "erasure report: completed", "database file and WAL: gone",
                 "outcome forgotten, 0 events written", "6. The same engine",
                 "Ledger verified: True"):
        assert part in text, part
    assert "truncated=true" in text
