"""The CLI reads the operator's providers file (``--providers-file`` / REMEM_PROVIDERS_FILE)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

REMEM = [sys.executable, "-m", "remem.cli.main"]


def _run(tmp_path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    base = {**os.environ, "REMEM_DATABASE_URL": str(tmp_path / "cli.db"), "COLUMNS": "200"}
    base.pop("REMEM_PROVIDERS_FILE", None)
    proc = subprocess.run([*REMEM, *args], capture_output=True, text=True, cwd=tmp_path,
                          env={**base, **(env or {})}, timeout=60)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    return proc


def test_memory_configs_name_providers_from_the_operator_file(tmp_path):
    (tmp_path / "providers.toml").write_text(
        '[providers.gpu]\ntype = "openai"\nbase_url = "http://10.9.8.7:8080/v1"\n'
        'api_key_env = "GPU_KEY"\n')
    (tmp_path / "cfg.json").write_text(json.dumps({"extraction": {"provider": "gpu",
                                                                  "model": "qwen"}}))
    without = _run(tmp_path, "--json", "memory", "create", "m1", "--config", "cfg.json")
    error = json.loads(without.stdout)["error"]
    assert without.returncode == 1 and error["code"] == "config_invalid"
    assert error["details"]["registered"] == ["rules"]
    env = {"REMEM_PROVIDERS_FILE": str(tmp_path / "providers.toml"), "GPU_KEY": "sk-cli-1"}
    ok = _run(tmp_path, "--json", "memory", "create", "m1", "--config", "cfg.json", env=env)
    assert ok.returncode == 0, ok.stderr
    shown = _run(tmp_path, "--json", "--providers-file", "providers.toml", "memory", "show",
                 "m1", env={"GPU_KEY": "sk-cli-1"})
    assert json.loads(shown.stdout)["config"]["extraction"] == {"provider": "gpu",
                                                                "model": "qwen"}
    assert "sk-cli-1" not in shown.stdout and "10.9.8.7" not in shown.stdout


def test_a_bad_providers_file_stops_every_command_with_a_clear_error(tmp_path):
    (tmp_path / "providers.toml").write_text(
        '[providers.gpu]\ntype = "openai"\nbase_url = "http://10.9.8.7:8080/v1"\n'
        'api_key_env = "UNSET_KEY_VAR"\n')
    for args in (["memory", "list"], ["worker", "--once", "--providers-file", "providers.toml"],
                 ["serve", "--port", "1", "--providers-file", "providers.toml"]):
        if args[0] == "memory":
            args = ["--providers-file", "providers.toml", *args]
        proc = _run(tmp_path, *args)
        assert proc.returncode == 1, (args, proc.stdout, proc.stderr)
        assert "config_invalid" in proc.stderr and "UNSET_KEY_VAR" in proc.stderr
