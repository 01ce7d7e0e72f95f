"""Shared fixtures: a real SQLite file per test, a fixed clock, and a fresh memory."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

import remem
from remem.service.clock import FixedClock

T0 = datetime(2024, 1, 1, 12, 0, tzinfo=UTC)

#: pg_server, backend, store_url, other_url, pg_url: one definition for every directory;
#: the slowest test files first (for ``--dist loadfile``).
pytest_plugins = ["_plugins.backends", "_plugins.order"]


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """Path of a not-yet-created SQLite database file."""
    return tmp_path / "remem.db"


@pytest.fixture
def store(db_path: Path, request):
    """A store on a real SQLite file (a copy of the migrated template: tests/_plugins/
    backends.py) with the system clock."""
    from _plugins.backends import copy_migrated_sqlite  # registered below, imported late

    s = remem.open(copy_migrated_sqlite(request, db_path))
    yield s
    s.close()


@pytest.fixture
def clock() -> FixedClock:
    """A clock at T0 that tests move by hand (``clock.advance(days=1)``)."""
    return FixedClock(T0)


@pytest.fixture
def fixed_store(db_path: Path, clock: FixedClock, request):
    """A store on a real SQLite file (a migrated copy) whose clock the test moves by hand."""
    from _plugins.backends import copy_migrated_sqlite

    s = remem.open(copy_migrated_sqlite(request, db_path), clock=clock)
    yield s
    s.close()


@pytest.fixture
def memory(store):
    """A fresh memory ``m1`` with the default config."""
    return store.create_memory("m1")


@pytest.fixture(autouse=True, scope="session")
def _every_kip_exchange_is_schema_valid():
    """Every KIP response remem returns in process, in any test of the suite, and every
    request it accepts validate against the KIP schema (``remem/specs/kip``); HTTP tests
    validate what they receive (tests/kip/kit.py, tests/security/kit.py)."""
    from remem.service import kip as kip_module
    from remem.service.kip_schema import errors

    original = kip_module.KipBinding.handle

    def checked(self, document):
        out = original(self, document)
        problems = errors(out, "Response")
        assert not problems, f"schema-invalid KIP response {problems[:3]}: {str(out)[:500]}"
        if out["status"] != "failed":
            problems = errors(document, "Request")
            assert not problems, f"accepted a schema-invalid KIP request {problems[:3]}"
        return out

    mp = pytest.MonkeyPatch()
    mp.setattr(kip_module.KipBinding, "handle", checked)
    yield
    mp.undo()
