"""A bug inside a command reaches the user as one line (no traceback, paths or SQL), exit 2.

The bug is injected (a command body that raises RuntimeError) because remem has no known way
left to raise one from real input; the real ``run`` wrapper and output path are exercised.
"""

from __future__ import annotations

import json

import pytest
import typer

from remem.cli import main as cli
from remem.cli.output import STATE


def _body():
    raise RuntimeError("SELECT secret FROM /var/lib/remem/x.db")  # what must never show


def test_an_unexpected_exception_is_one_line_without_its_text(capsys, monkeypatch):
    monkeypatch.delenv("REMEM_DEBUG", raising=False)
    monkeypatch.setattr(STATE, "json", True)
    with pytest.raises(typer.Exit) as ended:
        cli.run(_body)
    assert ended.value.exit_code == 2
    out = capsys.readouterr()
    err = json.loads(out.out)["error"]
    assert err["code"] == "internal_error" and "RuntimeError" in err["message"]
    assert "SELECT" not in out.out + out.err and "/var/lib" not in out.out + out.err


def test_remem_debug_shows_the_traceback(monkeypatch):
    monkeypatch.setenv("REMEM_DEBUG", "1")
    with pytest.raises(RuntimeError):
        cli.run(_body)


def test_a_commands_own_exit_code_passes_through(monkeypatch):
    monkeypatch.delenv("REMEM_DEBUG", raising=False)

    def exits():
        raise typer.Exit(4)

    with pytest.raises(typer.Exit) as ended:
        cli.run(exits)
    assert ended.value.exit_code == 4
