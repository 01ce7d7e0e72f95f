"""Round-7 probe: the first example of docs/cached-facts.md opened ``memory("m1")`` on a new
file, so a newcomer who ran it got ``NotFound: No memory 'm1'`` at the second statement. The
example runs now on a fresh file, as written, except that the refresh handler gets a local
transport answering 304 (tests never reach the network)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ALLOWED = 'HttpRefreshHandler(["https://rates.example.com/v1/"])'
OFFLINE = ('HttpRefreshHandler(["https://rates.example.com/v1/"], transport=__import__('
           '"httpx").MockTransport(lambda request: __import__("httpx").Response(304)))')


def test_the_cached_facts_example_runs_on_a_new_file(tmp_path):
    doc = (ROOT / "docs" / "cached-facts.md").read_text()
    block = re.search(r"```python\n(.*?)```", doc, re.S).group(1)
    assert ALLOWED in block
    script = block.replace(ALLOWED, OFFLINE) + \
        "\nprint('refresh', mem.refresh(w.item_id)['state'])\n"
    out = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    assert out.returncode == 0, out.stderr[-2000:]
    assert "refresh " in out.stdout, out.stdout
