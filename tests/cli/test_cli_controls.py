"""The ``remem`` command line, run in process (tests/_plugins/cli_in_process.py): --metadata,
--filter, --filter-json, --mode, --since/--until and the listing total."""

from __future__ import annotations

import json
import os

import pytest

from _plugins.cli_in_process import run_cli



@pytest.fixture
def cli(tmp_path):
    env = {**os.environ, "REMEM_DATABASE_URL": str(tmp_path / "cli.db"), "REMEM_MEMORY": "m1",
           "COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb", "OMP_NUM_THREADS": "1"}

    def run(*args: str, expect: int = 0) -> str:
        proc = run_cli(args, env=env, stdin=None, text=True, cwd=tmp_path)
        assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
        assert proc.returncode == expect, (proc.returncode, proc.stdout, proc.stderr)
        return proc.stdout + proc.stderr

    run("memory", "create", "m1")
    return run


def test_metadata_filters_windows_and_totals_from_the_command_line(cli):
    cli("remember", "user:u1", "diet", "vegan", "--metadata", '{"app": "crm", "n": 2}')
    cli("remember", "user:u1", "home_city", "Lyon", "--metadata", '{"app": "chat", "n": 5}',
        "--valid-at", "2020-01-01T00:00:00Z")
    page = json.loads(cli("--json", "items", "--filter", "app=crm", "--limit", "1"))
    assert [i["key"] for i in page["items"]] == ["diet"] and page["total"] == 1
    assert page["items"][0]["metadata"] == {"app": "crm", "n": 2}
    page = json.loads(cli("--json", "items", "--filter-json",
                          '{"metadata": {"n": {"gte": 2}}}', "--limit", "1"))
    assert page["total"] == 2 and page["next_cursor"] is not None
    page = json.loads(cli("--json", "items", "--since", "2021-01-01T00:00:00Z"))
    assert [i["key"] for i in page["items"]] == ["diet"]
    old = json.loads(cli("--json", "recall", "diet city", "-s", "user:u1", "--until",
                         "2021-01-01T00:00:00Z", "--mode", "lexical"))
    assert [i["key"] for i in old["items"]] == ["home_city"]
    assert "1 of 1 matching items" in cli("items", "--filter", "n=5")


@pytest.mark.parametrize("args, says", [
    (["recall", "diet", "-s", "user:u1", "--mode", "fuzzy"], "mode 'fuzzy'"),
    (["recall", "diet", "-s", "user:u1", "--filter-json", '{"metadata": {"n": {"near": 1}}}'],
     "'near'"),
    (["items", "--filter", "no-equals-sign"], "FIELD=VALUE"),
    (["items", "--since", "the other day"], "is not a time"),
    (["remember", "user:u1", "diet", "vegan", "--metadata", "{oops"], "--metadata is not JSON"),
    (["recall", "diet", "-s", "user:u1/x"], "not a scope handle"),
])
def test_controls_that_cannot_be_honoured_fail_clearly(cli, args, says):
    out = cli(*args, expect=1)
    assert "invalid_input" in out and says in out
    assert json.loads(cli("--json", "items", "--status", "all"))["total"] == 0
