"""Round-7 probe: with ``--json`` a usage error (a missing option, a bad option value, an
unknown command) printed click's plain text on stderr and nothing on stdout, so a script
that parses stdout (README: "--json prints JSON for scripts, errors as {"error": {...}}")
got no JSON at all. It now prints the one error object on stdout (``invalid_input`` naming
the parameter, the usage hint in the message) and keeps click's exit code 2. Real
subprocesses, a real SQLite file."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import remem


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("usage") / "u.db")
    remem.open(path).close()
    return path


def _remem(db: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "remem.cli.main", "--db", db, *args],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("args, field", [
    (["export"], "out"),                                  # a missing required option
    (["items", "--limit", "many"], "limit"),              # a bad option value
    (["remember", "user:maya"], "key"),                   # a missing argument
    (["no-such-command"], "argv"),                        # an unknown command
])
def test_a_usage_error_under_json_is_one_json_error_on_stdout(db, args, field):
    done = _remem(db, "--json", *args)
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    err = json.loads(done.stdout)["error"]
    assert err["code"] == "invalid_input" and err["retryable"] is False, err
    assert err["details"]["field"] == field, err
    assert "--help" in err["message"], err


def test_a_usage_error_without_json_stays_text_on_stderr(db):
    done = _remem(db, "export")
    assert done.returncode == 2 and done.stdout == ""
    assert "Missing option '--out'" in done.stderr
