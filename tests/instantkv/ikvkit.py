"""Helpers: the instantKV drop-in commands run in-process (``Controller``) and the seed's
create proposal (``proposal``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from typer.testing import CliRunner


PROPOSAL = {
    "entity": "user", "attribute": "response_style", "value": "short bullets",
    "kind": "preference", "operation": "assert",
    "source": {"id": "guide/turn-1", "text": "Please use short bullets.", "role": "user",
               "occurred_at_ms": 1791504000000},
    "valid_until_ms": None,
}


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)

    def error(self) -> dict[str, Any]:
        return json.loads(self.stderr)


class Controller:
    """``remem --db DB [--providers-file F] --namespace knowledge --scope personal ...``."""

    def __init__(self, db: Path) -> None:
        self.db = db
        self.runner = CliRunner()
        self.providers_file: Path | None = None

    def __call__(self, *args: str, input: bytes | str | None = None,
                 options: tuple[str, ...] | None = None) -> Result:
        from remem.cli.main import app

        pre = ["--db", str(self.db)]
        if self.providers_file is not None:
            pre += ["--providers-file", str(self.providers_file)]
        pre += list(options if options is not None else
                    ("--namespace", "knowledge", "--scope", "personal"))
        r = self.runner.invoke(app, [*pre, *args], input=input)
        if r.exception is not None and not isinstance(r.exception, SystemExit):
            raise r.exception
        return Result(r.exit_code, r.stdout, r.stderr)

    def apply(self, proposal: dict[str, Any] | str) -> Result:
        text = proposal if isinstance(proposal, str) else json.dumps(proposal)
        return self("apply", "--file", "-", input=text)


def proposal(**changes: Any) -> dict[str, Any]:
    """The seed's create proposal with ``changes`` (``source_id=`` sets the source id)."""
    p = json.loads(json.dumps(PROPOSAL))
    if "source_id" in changes:
        p["source"]["id"] = changes.pop("source_id")
    p.update(changes)
    return p
