"""Stored text is printed exactly as stored; odd dates never lock a key (new-user findings). The
commands run in process (tests/_plugins/cli_in_process.py)."""

from __future__ import annotations

import os
from datetime import UTC, datetime

import remem
from _plugins.cli_in_process import run_cli


def run(db, *args):
    env = {**os.environ, "REMEM_DATABASE_URL": str(db), "COLUMNS": "200"}
    return run_cli(args, env=env, text=True)


def test_bracketed_text_is_data_not_markup(tmp_path):
    db = tmp_path / "r.db"
    assert run(db, "memory", "create", "m").returncode == 0
    weird = "[/bold] closing tag and [red]x[/red] and [x] buy milk"
    assert run(db, "-m", "m", "remember", "user:a", "note", weird).returncode == 0
    for args in (("inspect", "user:a", "note"), ("items", "--scope", "user:a"),
                 ("recall", "closing tag", "--scope", "user:a", "--budget-tokens", "800")):
        out = run(db, "-m", "m", *args)
        assert out.returncode == 0, out.stderr
        assert "Traceback" not in out.stderr
        assert "[/bold] closing tag" in out.stdout and "[x] buy milk" in out.stdout, args
    bad = run(db, "-m", "[/x]", "inspect", "user:a", "note")
    assert bad.returncode == 1 and "Traceback" not in bad.stderr and "[/x]" in bad.stderr


def test_a_date_before_the_year_1000_round_trips_and_the_key_stays_writable(tmp_path):
    store = remem.open(tmp_path / "d.db")
    mem = store.create_memory("m")
    mem.remember("user:a", "home_city", "Lyon", valid_at=datetime(999, 6, 1, tzinfo=UTC))
    assert mem.remember("user:a", "home_city", "Paris").outcome == "superseded"
    i = mem.inspect("user:a", "home_city")
    assert [h.valid_at[:10] for h in i.history] == ["0999-06-01"]
    assert mem.forget(scope="user:a", key="home_city", expected_revision=i.revision).state \
        == "completed"
    assert store.verify()["ok"]


def test_an_envelope_without_applied_false_says_what_is_missing(tmp_path):
    db = tmp_path / "e.db"
    run(db, "memory", "create", "m")
    f = tmp_path / "p.json"
    f.write_text('{"proposals": [{"entity": "user:a", "attribute": "diet", "value": "vegan",'
                 ' "kind": "preference", "operation": "assert"}]}')
    out = run(db, "-m", "m", "apply", "--file", str(f))
    assert out.returncode == 1 and '"applied": false is missing' in out.stderr
