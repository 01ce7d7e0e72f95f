"""Runs command sequences of the instantKV seed unchanged in bash, with ``memory`` defined as
the real ``remem`` console script plus the seed's global options (README "instantKV users").

Each step is ``(name, shell text)``; a step's stdout, stderr and exit code land in
``out/<name>.{json,err,rc}`` so a test reads exactly what a user would have seen.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[2] / "src")
_SCRIPT = shutil.which("remem", path=str(Path(sys.executable).parent))
REMEM = _SCRIPT or f"{sys.executable} -m remem.cli.main"

# --- the seed's text, verbatim ---------------------------------------------------------------
CREATE_FILE = """cat > "$controller_work/create.json" <<'JSON'
{
  "entity": "user",
  "attribute": "response_style",
  "value": "short bullets",
  "kind": "preference",
  "operation": "assert",
  "source": {
    "id": "guide/turn-1",
    "text": "Please use short bullets.",
    "role": "user",
    "occurred_at_ms": 1791504000000
  },
  "valid_until_ms": null
}
JSON"""

BUILD_CORRECTION = """python3 - "$controller_work" <<'PY'
import json
from pathlib import Path
import sys

folder = Path(sys.argv[1])
detail = json.loads((folder / "inspection.json").read_text())
proposal = json.loads((folder / "create.json").read_text())
proposal.update(operation="correct", value="brief numbered points",
                expected_revision=detail["revision"])
proposal["source"] = {
    "id": "guide/turn-2", "text": "Correction: use brief numbered points.",
    "role": "user", "occurred_at_ms": 1791504001000
}
(folder / "correct.json").write_text(json.dumps(proposal))
PY"""

READ_REVISION = """controller_revision=$(python3 - "$controller_work/inspection.json" <<'PY'
import json
import sys
with open(sys.argv[1]) as stream:
    print(json.load(stream)["revision"])
PY
)"""

CREATE_READ = [
    ("create_file", CREATE_FILE),
    ("apply_file", 'memory apply --file "$controller_work/create.json"'),
    ("apply_stdin", 'memory apply < "$controller_work/create.json"'),
    ("profile1", "memory profile --max-bytes 8192"),
    ("context1", 'memory context "bullets" --max-bytes 8192'),
    ("inspect1", 'memory inspect user response_style > "$controller_work/inspection.json"'),
    ("build_correction", BUILD_CORRECTION),
    ("apply_correct", 'memory apply --file "$controller_work/correct.json"'),
    ("profile2", "memory profile"),
    ("inspect2", 'memory inspect user response_style > "$controller_work/inspection.json"'),
]
AFTER_RESTART = [
    ("inspect_restarted", "memory inspect user response_style"),
]
FORGET = [
    ("read_revision", READ_REVISION),
    ("forget", 'memory forget user response_style --expected-revision "$controller_revision"'),
    ("profile3", "memory profile"),
    ("inspect3", "memory inspect user response_style"),
    ("replay", 'memory apply --file "$controller_work/create.json"'),
]


@dataclass
class Seed:
    """One controller session: ``work`` is ``$controller_work``, ``options`` the global ones."""

    work: Path
    options: str
    env: dict[str, str]

    def run(self, steps: list[tuple[str, str]]) -> None:
        out = self.work / "out"
        out.mkdir(exist_ok=True)
        lines = ["set -u", f'controller_work="{self.work}"', "umask 077",
                 f"memory() {{\n  {REMEM} {self.options} \"$@\"\n}}"]
        for name, text in steps:
            if "\n" in text and name in ("create_file", "build_correction", "read_revision"):
                lines.append(text)  # a file-building step: run as the seed writes it
                continue
            lines.append(f"{{ {text}\n}} >'{out}/{name}.json' 2>'{out}/{name}.err'; "
                         f"echo $? >'{out}/{name}.rc'")
        script = "\n".join(lines) + "\n"
        subprocess.run(["bash", "-c", script], check=True, env=self.env, timeout=900)

    def rc(self, name: str) -> int:
        return int((self.work / "out" / f"{name}.rc").read_text())

    def json(self, name: str) -> dict:
        return json.loads((self.work / "out" / f"{name}.json").read_text())

    def err(self, name: str) -> str:
        return (self.work / "out" / f"{name}.err").read_text()

    def file(self, name: str) -> dict:
        return json.loads((self.work / name).read_text())


def environment(db: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": SRC, "REMEM_DATABASE_URL": str(db),
           "OMP_NUM_THREADS": "1", "NO_COLOR": "1"}
    for name in ("REMEM_MEMORY", "INSTANTKV_APP_TOKEN", "REMEM_TOKEN"):
        env.pop(name, None)
    return env


def remem(env: dict[str, str], *args: str, input: bytes | None = None,
          check: bool = True) -> subprocess.CompletedProcess:
    """The console script with ``args`` (not through the seed's ``memory`` function)."""
    cmd = [*REMEM.split(" "), *args]
    return subprocess.run(cmd, env=env, input=input, capture_output=True, check=check,
                          timeout=300)


def token(env: dict[str, str], memory_id: str, role: str, subject: str) -> str:
    """A new token of ``memory_id`` (the one line of ``token create`` that holds it)."""
    out = remem(env, "--json", "token", "create", "--memory", memory_id, "--role", role,
                "--subject", subject).stdout
    return json.loads(out)["token"]


def secrets_file(path: Path, token_value: str, name: str = "INSTANTKV_APP_TOKEN") -> Path:
    path.write_text(f"# controller credentials\n{name}={token_value}\n")
    path.chmod(0o600)
    return path
