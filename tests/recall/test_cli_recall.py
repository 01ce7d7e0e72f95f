"""The ``remem`` command line, run in process (tests/_plugins/cli_in_process.py; tests/cli/test_cli.py
keeps real processes): observe, recall, context, profile, reembed, bench recall."""

from __future__ import annotations

import json
import os

import pytest

from _plugins.cli_in_process import run_cli



@pytest.fixture
def cli(tmp_path):
    env = {**os.environ, "REMEM_DATABASE_URL": str(tmp_path / "cli.db"), "REMEM_MEMORY": "m1",
           "COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb", "OMP_NUM_THREADS": "1"}

    def run(*args: str, input: str | None = None, expect: int = 0) -> str:
        proc = run_cli(args, env=env, stdin=input, text=True, cwd=tmp_path)
        assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
        assert proc.returncode == expect, (proc.returncode, proc.stdout, proc.stderr)
        return proc.stdout

    run("memory", "create", "m1")
    run.tmp = tmp_path
    return run


def test_observe_recall_context_and_profile(cli) -> None:
    out = json.loads(cli("--json", "observe", "user:alice", "東京に引っ越しました 🗼",
                         "--source-id", "t1", "--run-id", "chat"))
    assert (out["source_id"], out["sequence"], out["phase"]) == ("t1", 0, "available")
    again = json.loads(cli("--json", "observe", "user:alice", "-", "--source-id", "t1",
                           "--run-id", "chat", input="東京に引っ越しました 🗼"))
    assert again["replayed"]
    err = json.loads(cli("--json", "observe", "user:alice", "other", "--source-id", "t1",
                         "--run-id", "chat", expect=1))
    assert err["error"]["code"] == "idempotency_conflict"
    cli("remember", "user:alice", "home_city", "Tokyo", "--kind", "profile_slot")
    cli("remember", "agent:bot", "response_style", "short bullets", "--kind", "rule")

    r = json.loads(cli("--json", "recall", "東京", "--scope", "user:alice",
                       "--budget-tokens", "600"))
    assert r["sources"][0]["label"] == "source" and r["sources"][0]["id"] == "t1"
    assert r["budget_tokens"] == 600 and r["truncated"] is False
    human = cli("recall", "home city", "--scope", "user:alice", "--budget-tokens", "600")
    assert 'home_city: "Tokyo"' in human

    c = json.loads(cli("--json", "context", "home city", "--scope", "user:alice",
                       "--max-bytes", "512"))
    assert set(c) == {"max_bytes", "items", "truncated"} and c["items"][0]["value"] == "Tokyo"

    p1 = cli("--json", "profile", "--scope", "agent:bot", "--scope", "user:alice",
             "--max-bytes", "2048", "--activation-id", "a1")
    p2 = cli("--json", "profile", "--scope", "agent:bot", "--scope", "user:alice",
             "--max-bytes", "2048", "--activation-id", "a1")
    assert json.loads(p1) == json.loads(p2)
    assert [i["key"] for i in json.loads(p1)["items"]] == ["response_style", "home_city"]
    assert "## Rules" in cli("profile", "--scope", "agent:bot")

    bad = json.loads(cli("--json", "recall", "x", "--scope", "user:alice", "--tokenizer", "gpt2",
                         expect=1))
    assert bad["error"]["code"] == "unsupported_capability"
    assert json.loads(cli("--json", "verify"))["ok"]


def test_reembed_reports_and_skips_unchanged(cli) -> None:
    cli("remember", "user:alice", "home_city", "Tokyo")
    out = json.loads(cli("--json", "reembed"))
    assert (out["embedded"], out["skipped"], out["switched"]) == (0, 1, False)
    assert "skipped 1 unchanged" in cli("reembed")


def test_every_new_command_has_help(cli) -> None:
    for cmd in (["observe"], ["recall"], ["context"], ["profile"], ["reembed"],
                ["bench", "recall"]):
        assert "Usage" in cli(*cmd, "--help")
