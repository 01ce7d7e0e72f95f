"""``import remem`` (and the command line's start) does not load the engine: its public names
are imported on first use (PEP 562), so ``remem --help`` and the instantKV drop-in (``--url``)
start in about half the CPU time."""

from __future__ import annotations

import subprocess
import sys

import pytest

import remem


def _modules_after(code: str) -> set[str]:
    probe = code + "\nimport sys\nprint('\\n'.join(sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe],
                         capture_output=True, text=True, check=True, timeout=60).stdout
    return set(out.split())


def test_importing_the_package_or_the_cli_loads_no_engine_module():
    for code in ("import remem", "import remem.cli.main"):
        loaded = _modules_after(code)
        assert "numpy" not in loaded, code
        assert "remem.service.memory" not in loaded, code
        assert "jsonschema" not in loaded, code


def test_every_public_name_resolves_and_an_unknown_one_is_an_attribute_error():
    for name in remem.__all__:
        assert getattr(remem, name) is not None, name
    from remem import Kind, Memory, RememStore

    assert Memory.__module__ == "remem.service.memory"
    assert RememStore.__module__ == "remem.service.store" and Kind.FACT.value == "fact"
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        remem.nope  # noqa: B018
