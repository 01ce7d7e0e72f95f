"""Round-4 probe (new user): the instantKV CLI refuses a non-loopback ``--url`` and a
group-readable ``--secrets-file`` with a clear message, but its ``next_action`` says
"Inspect the slot, review, then retry." — advice about a memory slot for what is a fix to
the command line. Fix needed (cli, instantKV error rendering): a next action per field
(``url``: "pass a loopback origin", ``secrets_file``: "chmod 600 the file")."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest


def _run(tmp_path, *args: str, mode: int = 0o600) -> dict:
    secrets = tmp_path / "secrets.env"
    secrets.write_text("REMEM_TOKEN=rmm_0123456789abcdef_x\n")
    os.chmod(secrets, mode)
    r = subprocess.run([sys.executable, "-m", "remem.cli.main", *args, "--secrets-file",
                        str(secrets), "--namespace", "m1", "--scope", "alice", "profile"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "Traceback" not in r.stderr
    return json.loads(r.stderr.strip().splitlines()[-1])


@pytest.mark.parametrize("case", ["url", "secrets_file"])
def test_a_command_line_error_gets_a_next_action_about_the_command_line(tmp_path, case):
    if case == "url":
        out = _run(tmp_path, "--url", "http://10.0.0.5:8080")
    else:
        out = _run(tmp_path, "--url", "http://127.0.0.1:9", mode=0o640)
    assert out["error"]["details"]["field"] == case
    assert "slot" not in out["next_action"], out["next_action"]
