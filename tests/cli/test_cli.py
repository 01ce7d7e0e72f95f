"""The ``remem`` console script (issue 2 "CLI", "Bad input").

Most tests run its ``main()`` in this process (``cli``: tests/_plugins/cli_in_process.py,
with its own argv, environment, stdin and captured output; a real process costs about 1.3 s
of CPU to start); ``real_cli`` runs the real console script in a subprocess, for the tests
of what only a process shows (exit codes, the environment, JSON on stdout and one message
on stderr, help); the one ``run`` helper asserts the same of both."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

from datetime import UTC, datetime

import pytest

import remem
from _plugins.cli_in_process import run_cli

_SCRIPT = shutil.which("remem", path=str(Path(sys.executable).parent))
REMEM = [_SCRIPT] if _SCRIPT else [sys.executable, "-m", "remem.cli.main"]

CREATE = {
    "entity": "user:alice", "attribute": "response_style", "value": "short bullets",
    "kind": "preference", "operation": "assert",
    "source": {"id": "guide/turn-1", "text": "Please use short bullets.", "role": "user",
               "occurred_at_ms": 1791504000000},
    "valid_until_ms": None,
}


@pytest.fixture
def cli(tmp_path):
    """Runs ``remem ARGS`` (in process) with REMEM_DATABASE_URL pointing at a fresh file in
    tmp_path."""
    yield from _cli(tmp_path, real=False)


@pytest.fixture
def real_cli(tmp_path):
    """As ``cli``, but each command is a real ``remem`` process."""
    yield from _cli(tmp_path, real=True)


def _cli(tmp_path, *, real: bool):
    db = tmp_path / "cli.db"
    env = {**os.environ, "REMEM_DATABASE_URL": str(db), "COLUMNS": "200", "NO_COLOR": "1",
           "TERM": "dumb"}
    env.pop("REMEM_MEMORY", None)

    def run(*args: str, input: str | None = None, expect: int | None = 0,
            extra_env: dict | None = None) -> subprocess.CompletedProcess:
        if real:
            proc = subprocess.run([*REMEM, *args], input=input, capture_output=True, text=True,
                                  env={**env, **(extra_env or {})}, cwd=tmp_path, timeout=60)
        else:
            proc = run_cli(args, stdin=input, text=True, env={**env, **(extra_env or {})},
                           cwd=tmp_path)
        assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
        if expect is not None:
            assert proc.returncode == expect, (proc.returncode, proc.stdout, proc.stderr)
        return proc

    opened: list[remem.RememStore] = []

    def api(memory_id: str = "m1") -> remem.Memory:
        """In-process access for set-up and checks (keeps the subprocess count small)."""
        s = remem.open(db)
        opened.append(s)
        return s.memory(memory_id)

    run.db = db
    run.tmp = tmp_path
    run.api = api
    yield run
    for s in opened:
        s.close()


def js(proc: subprocess.CompletedProcess):
    return json.loads(proc.stdout)


def head(db: Path, memory_id: str = "m1") -> int:
    s = remem.open(db)
    try:
        return s.memory(memory_id).status()["head_seq"]
    finally:
        s.close()


@pytest.fixture
def m1(cli):
    """The CLI with memory m1 created (in process: `memory create` has its own test)."""
    s = remem.open(cli.db)
    s.create_memory("m1")
    s.close()
    return cli


# --- memory admin -------------------------------------------------------------------------


def test_memory_create_list_show_delete(real_cli):
    cli = real_cli
    assert "Created memory m1" in cli("memory", "create", "m1").stdout
    assert js(cli("--json", "memory", "create", "m2")) == {"memory": "m2", "created": True,
                                                              "tenant": "default"}
    assert cli("memory", "list").stdout.split() == ["m1", "m2"]
    shown = js(cli("--json", "memory", "show", "m1"))
    assert shown["memory"] == "m1" and shown["head_seq"] == 0 and shown["config"] == {}
    deleted = js(cli("--json", "memory", "delete", "m1"))
    assert deleted["deleted"] is True
    assert [m["memory_id"] for m in js(cli("--json", "memory", "list"))] == ["m2"]
    err = js(cli("--json", "memory", "show", "m1", expect=1))
    assert err["error"]["code"] == "not_found"
    dup = cli("memory", "create", "m2", expect=1)
    assert "already_exists" in dup.stderr


def test_memory_delete_asks_unless_yes(cli):
    cli("memory", "create", "m1")
    cli("memory", "delete", "m1", input="n\n", expect=None)
    assert head(cli.db) == 0  # still there
    cli("memory", "delete", "m1", "--yes")
    assert "m1" not in cli("memory", "list").stdout


def test_memory_create_validates_the_config_file(cli):
    bad = cli.tmp / "bad.json"
    bad.write_text(json.dumps({"keys": {"home_city": {"cardinality": "many"}}}))
    out = js(cli("--json", "memory", "create", "m1", "--config", str(bad), expect=1))
    assert out["error"]["code"] == "config_invalid"
    (cli.tmp / "broken.json").write_text("{not json")
    proc = cli("memory", "create", "m1", "--config", str(cli.tmp / "broken.json"), expect=1)
    assert "config" in proc.stderr
    cli("memory", "create", "m1", "--config", str(cli.tmp / "missing.json"), expect=1)
    good = cli.tmp / "good.json"
    good.write_text(json.dumps({"keys": {"home_city": {"on_change": "conflict"}}}))
    cli("memory", "create", "m2", "--config", str(good))
    s = remem.open(cli.db)
    assert [m["memory_id"] for m in s.list_memories()] == ["m2"]
    assert s.memory("m2").config == {"keys": {"home_city": {"on_change": "conflict"}}}
    s.close()


# --- remember / inspect / correct -----------------------------------------------------------


def test_remember_then_inspect(m1):
    out = js(m1("--json", "-m", "m1", "remember", "user:alice", "home_city", "Paris",
                "--kind", "profile_slot", "--valid-at", "2024-01-01T00:00:00+00:00",
                "--source-id", "t1", "--quote", "I live in Paris"))
    assert (out["outcome"], out["revision"], out["status"]) == ("created", 1, "current")
    i = js(m1("--json", "-m", "m1", "inspect", "user:alice", "home_city"))
    assert (i["state"], i["value"], i["revision"], i["kind"]) == (
        "current", "Paris", 1, "profile_slot")
    assert i["source"]["text"] == "I live in Paris"
    m1("-m", "m1", "remember", "user:alice", "age", "41", "--json-value")
    assert m1.api().inspect("user:alice", "age").value == 41  # JSON keeps its type
    human = m1("-m", "m1", "inspect", "user:alice", "home_city").stdout
    assert "Paris" in human and "revision=1" in human
    out = js(m1("--json", "-m", "m1", "inspect", "user:alice", "diet", expect=4))
    assert out["state"] == "empty"


def test_correct_with_a_stale_revision_fails_cleanly(m1):
    m1.api().remember("user:alice", "home_city", "Paris")
    proc = m1("-m", "m1", "correct", "user:alice", "home_city", "Rome",
              "--expected-revision", "5", expect=1)
    assert "revision_mismatch" in proc.stderr
    assert "current revision is 1" in " ".join(proc.stderr.split())
    err = js(m1("--json", "-m", "m1", "correct", "user:alice", "home_city", "Rome",
                "--expected-revision", "5", expect=1))
    assert err["error"]["code"] == "revision_mismatch"
    assert err["error"]["details"]["current_revision"] == 1
    assert set(err["error"]) >= {"code", "message", "retryable", "details"}
    ok = js(m1("--json", "-m", "m1", "correct", "user:alice", "home_city", "Rome",
               "--expected-revision", "1"))
    assert ok["outcome"] == "corrected" and ok["revision"] == 2


@pytest.mark.parametrize(("args", "code", "field"), [
    (["remember", "team:x", "home_city", "Paris"], "invalid_input", "scope"),
    (["remember", "user:alice", "home_city_paris", "Paris"], "invalid_input", "key"),
    (["remember", "user:alice", "home_city", "x" * 1025], "invalid_input", "value"),
    (["remember", "user:alice", "age", "NaN", "--json-value"], "invalid_input", "value"),
    (["remember", "user:alice", "age", "{bad", "--json-value"], "invalid_input", "value"),
], ids=["scope", "key-contains-value", "oversize", "nan", "bad-json"])
def test_bad_input_prints_the_error_object_and_writes_nothing(m1, args, code, field):
    err = js(m1("--json", "-m", "m1", *args, expect=1))["error"]
    assert err["code"] == code and err["details"]["field"] == field
    assert head(m1.db) == 0


def test_a_human_error_is_one_message_on_stderr(m1):
    human = m1("-m", "m1", "remember", "team:x", "home_city", "Paris", expect=1)
    assert human.stderr.startswith("error (invalid_input): scope") and human.stdout == ""


def test_no_memory_selected_is_a_clean_error(m1):
    err = js(m1("--json", "inspect", "user:alice", "home_city", expect=1))["error"]
    assert err["details"]["field"] == "memory"
    err = js(m1("--json", "-m", "ghost", "inspect", "user:alice", "home_city", expect=1))
    assert err["error"]["code"] == "not_found"


def test_remember_into_a_conflict_exits_non_zero(cli):
    cfg = cli.tmp / "c.json"
    cfg.write_text(json.dumps({"default_on_change": "conflict"}))
    cli("memory", "create", "m1", "--config", str(cfg))
    cli.api().remember("user:alice", "home_city", "Paris",
                         valid_at=datetime(2024, 1, 1, tzinfo=UTC))
    out = js(cli("--json", "-m", "m1", "remember", "user:alice", "home_city", "Rome",
                 "--valid-at", "2024-02-01T00:00:00Z", expect=3))
    assert out["outcome"] == "conflict"
    groups = js(cli("--json", "-m", "m1", "conflicts"))
    assert len(groups) == 1 and len(groups[0]["items"]) == 2
    keep = next(i["item_id"] for i in groups[0]["items"] if i["value"] == "Rome")
    cli("-m", "m1", "resolve", groups[0]["group_id"], "--keep", keep)
    mem = cli.api()
    assert mem.inspect("user:alice", "home_city").value == "Rome" and mem.conflicts() == []


def test_items_history_archive_restore(m1):
    mem = m1.api()
    a = mem.remember("user:alice", "home_city", "Paris", valid_at=datetime(2024, 1, 1, tzinfo=UTC))
    mem.remember("user:alice", "home_city", "Rome", valid_at=datetime(2024, 2, 1, tzinfo=UTC))
    for n in range(3):
        mem.remember("user:alice", "languages", f"lang {n}")
    page = js(m1("--json", "-m", "m1", "items", "--limit", "2"))
    assert len(page["items"]) == 2 and page["next_cursor"]
    rest = js(m1("--json", "-m", "m1", "items", "--limit", "2", "--cursor", page["next_cursor"]))
    assert len(rest["items"]) == 2 and rest["next_cursor"] is None
    h = js(m1("--json", "-m", "m1", "history", a.item_id))
    assert [e["type"] for e in h["events"]] == ["item.added", "item.superseded"]
    assert "more: --cursor" in m1("-m", "m1", "items", "--limit", "2").stdout
    lang = next(i for i in page["items"] + rest["items"] if i["key"] == "languages")
    m1("-m", "m1", "archive", lang["item_id"])
    assert m1.api().get(lang["item_id"]).status == "archived"
    out = js(m1("--json", "-m", "m1", "restore", lang["item_id"]))
    assert out["status"] == "current"


# --- apply --------------------------------------------------------------------------------


def test_apply_file_then_identical_retry_on_stdin_is_replayed(m1):
    f = m1.tmp / "create.json"
    f.write_text(json.dumps(CREATE))
    out = js(m1("--json", "-m", "m1", "apply", "--file", str(f)))
    assert out["ok"] and out["results"][0]["receipt"]["status"] == "created"
    again = js(m1("--json", "-m", "m1", "apply", "--file", "-", input=f.read_text()))
    assert again["results"][0]["receipt"]["replayed"] is True
    assert head(m1.db) == 2  # key.declared + item.added
    human = m1("-m", "m1", "apply", "-f", "-", input=json.dumps(CREATE)).stdout
    assert "created (replayed)" in human


def test_apply_conflict_exits_non_zero(m1):
    from remem.service.apply import apply_document

    apply_document(m1.api(), json.dumps(CREATE))
    other = {**CREATE, "value": "long paragraphs",
             "source": {**CREATE["source"], "id": "guide/turn-2",
                        "occurred_at_ms": 1791504001000}}
    out = js(m1("--json", "-m", "m1", "apply", "--file", "-", input=json.dumps(other),
                expect=3))
    assert out["ok"] is False and out["results"][0]["receipt"]["status"] == "conflict"
    rev = js(m1("--json", "-m", "m1", "inspect", "user:alice", "response_style"))["revision"]
    fix = {**other, "operation": "correct", "expected_revision": rev,
           "source": {**other["source"], "id": "guide/turn-3"}}
    out = js(m1("--json", "-m", "m1", "apply", "--file", "-", input=json.dumps(fix)))
    assert out["results"][0]["receipt"]["status"] == "corrected"


def test_apply_rejects_invalid_documents_without_writing(m1):
    bad = json.dumps({"proposals": [CREATE] * 9, "applied": False})
    err = js(m1("--json", "-m", "m1", "apply", "--file", "-", input=bad, expect=1))["error"]
    assert err["code"] == "invalid_input" and err["details"]["field"] == "proposals"
    m1("-m", "m1", "apply", "--file", "-", input=json.dumps([CREATE]), expect=1)
    m1("-m", "m1", "apply", "--file", str(m1.tmp / "missing.json"), expect=1)
    assert head(m1.db) == 0


def test_apply_with_entity_user_needs_scope(m1):
    p = {**CREATE, "entity": "user"}
    m1("-m", "m1", "apply", "--file", "-", input=json.dumps(p), expect=1)
    out = js(m1("--json", "-m", "m1", "apply", "--file", "-", "--scope", "user:bob",
                input=json.dumps(p)))
    assert out["results"][0]["receipt"]["scope"] == "user:bob"


# --- verify / rebuild -------------------------------------------------------------------------


def test_verify_and_rebuild(m1):
    mem = m1.api()
    for day, city in enumerate(("Paris", "Rome", "Oslo"), start=1):
        mem.remember("user:alice", "home_city", city, valid_at=datetime(2024, 1, day, tzinfo=UTC))
    rep = js(m1("--json", "verify"))
    assert rep["ok"] and rep["memories"]["m1"]["events"] == 6
    before = remem.open(m1.db)
    dump = before.adapter.dump("m1")
    before.close()
    out = js(m1("--json", "-m", "m1", "rebuild"))
    assert out == {"m1": 6}
    after = remem.open(m1.db)
    assert after.adapter.dump("m1") == dump
    after.close()
    conn = sqlite3.connect(m1.db)
    conn.execute("UPDATE ledger SET actor='mallory' WHERE memory_id='m1' AND seq=4")
    conn.commit()
    conn.close()
    rep = js(m1("--json", "verify", expect=2))
    assert rep["ok"] is False and rep["memories"]["m1"]["broken"]["seq"] == 4
    assert "seq 4" in m1("verify", expect=2).stdout


# --- environment, --db, help ------------------------------------------------------------------


def test_remem_database_url_is_the_default_and_db_overrides_it(real_cli):
    cli = real_cli
    cli("memory", "create", "from-env")
    assert cli.db.exists()
    other = cli.tmp / "other.db"
    cli("--db", str(other), "memory", "create", "from-flag")
    s = remem.open(cli.db)
    assert [m["memory_id"] for m in s.list_memories()] == ["from-env"]
    s.close()
    s = remem.open(other)
    assert [m["memory_id"] for m in s.list_memories()] == ["from-flag"]
    s.close()
    memory_env = cli("--json", "inspect", "user:alice", "home_city",
                     extra_env={"REMEM_MEMORY": "from-env"}, expect=4)
    assert js(memory_env)["state"] == "empty"


def _all_commands() -> list[list[str]]:
    import typer.main

    from remem.cli.main import app

    root = typer.main.get_command(app)
    out = []

    def walk(group, prefix):
        for name in group.list_commands(None):
            cmd = group.get_command(None, name)
            out.append((prefix + [name], cmd))
            if hasattr(cmd, "list_commands"):
                walk(cmd, prefix + [name])

    walk(root, [])
    return out


def test_every_command_has_help():
    commands = _all_commands()
    names = {" ".join(p) for p, _ in commands}
    assert names >= {"memory create", "memory list", "memory show", "memory delete", "remember",
                     "correct", "inspect", "items", "history", "conflicts", "resolve", "apply",
                     "verify", "rebuild", "archive", "restore"}
    for path, cmd in commands:
        assert (cmd.help or "").strip(), f"`remem {' '.join(path)}` has no help text"
    from typer.testing import CliRunner

    from remem.cli.main import app

    runner = CliRunner()
    for path, _ in commands:  # every command, in process (fast)
        res = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "200"})
        assert res.exit_code == 0 and "Usage:" in res.output, (path, res.output)
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    sample = [[], ["memory"], ["memory", "create"], ["apply"], ["correct"], ["verify"]]
    procs = [(p, subprocess.Popen([*REMEM, *p, "--help"], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, env=env)) for p in sample]
    for path, proc in procs:  # and through the real console script
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, (path, err)
        assert "Usage:" in out, path
    assert "--expected-revision" in runner.invoke(app, ["correct", "--help"]).output
