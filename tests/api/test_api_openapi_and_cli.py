"""The committed openapi.json is the app's schema; token and openapi commands work."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from remem.api.app import openapi_schema
from remem.cli.main import app as cli
from remem.cli.serve_cmds import openapi_text

ROOT = Path(__file__).resolve().parents[2]


def test_committed_openapi_json_equals_the_apps_schema():
    committed = (ROOT / "openapi.json").read_text(encoding="utf-8")
    assert json.loads(committed) == openapi_schema(), "run `remem openapi` and commit it"
    assert committed == openapi_text()


def test_every_route_but_health_needs_a_bearer_token_and_documents_the_error_shape():
    schema = openapi_schema()
    assert schema["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    for path, ops in schema["paths"].items():
        for method, op in ops.items():
            if path == "/healthz":
                continue
            assert op.get("security") == [{"bearer": []}], (method, path)
            for status in ("401", "404", "422"):
                ref = op["responses"][status]["content"]["application/json"]["schema"]["$ref"]
                assert ref.endswith("/ErrorOut"), (method, path, status)


def test_token_commands_create_once_list_and_revoke(db_path):
    runner = CliRunner()
    db = ["--db", str(db_path)]
    r = runner.invoke(cli, [*db, "token", "create", "--memory", "m1", "--role", "writer",
                            "--subject", "user:alice", "--label", "app"])
    assert r.exit_code == 0, r.output
    token = r.stdout.strip().splitlines()[0]
    assert token.startswith("rmm_")
    r = runner.invoke(cli, [*db, "--json", "token", "list"])
    rows = json.loads(r.stdout)
    assert [(t["memory_id"], t["role"], t["subject"]) for t in rows] == [("m1", "writer",
                                                                          "user:alice")]
    assert token not in r.stdout
    r = runner.invoke(cli, [*db, "--json", "token", "revoke", rows[0]["token_id"]])
    assert r.exit_code == 0 and json.loads(r.stdout)["revoked_at"]
    r = runner.invoke(cli, [*db, "token", "create", "--memory", "m1", "--role", "root",
                            "--subject", "admin"])
    assert r.exit_code == 1 and "role" in r.output


def test_openapi_command_writes_and_checks(tmp_path):
    out = tmp_path / "openapi.json"
    runner = CliRunner()
    missing = runner.invoke(cli, ["openapi", "--check", "-o", str(out)])
    text = " ".join(missing.output.split())  # the error line wraps at the terminal width
    assert missing.exit_code == 1 and "does not exist" in text  # not "out of date"
    assert runner.invoke(cli, ["openapi", "-o", str(out)]).exit_code == 0
    assert runner.invoke(cli, ["openapi", "--check", "-o", str(out)]).exit_code == 0
    assert json.loads(out.read_text()) == openapi_schema()


def test_openapi_command_with_json_prints_json_only(tmp_path):
    """Probe 8: with --json the command printed text (on stderr) and nothing on stdout."""
    out = tmp_path / "openapi.json"
    runner = CliRunner()
    missing = runner.invoke(cli, ["--json", "openapi", "--check", "-o", str(out)])
    assert missing.exit_code == 1
    assert json.loads(missing.stdout)["error"]["code"] == "not_found", missing.output
    written = runner.invoke(cli, ["--json", "openapi", "-o", str(out)])
    assert json.loads(written.stdout) == {"file": str(out), "written": True}
    assert json.loads(runner.invoke(cli, ["--json", "openapi", "--check", "-o", str(out)]
                                    ).stdout) == {"file": str(out), "current": True}
    out.write_text("{}", encoding="utf-8")
    stale = runner.invoke(cli, ["--json", "openapi", "--check", "-o", str(out)])
    assert stale.exit_code == 1
    assert "out of date" in json.loads(stale.stdout)["error"]["message"]
