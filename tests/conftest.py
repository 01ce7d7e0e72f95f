"""Shared fixtures: a real SQLite file per test, a fixed clock, and a fresh memory."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

import remem
from remem.service.clock import FixedClock

T0 = datetime(2024, 1, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """Path of a not-yet-created SQLite database file."""
    return tmp_path / "remem.db"


@pytest.fixture
def store(db_path: Path):
    """A store on a real SQLite file with the system clock."""
    s = remem.open(db_path)
    yield s
    s.close()


@pytest.fixture
def clock() -> FixedClock:
    """A clock at T0 that tests move by hand (``clock.advance(days=1)``)."""
    return FixedClock(T0)


@pytest.fixture
def fixed_store(db_path: Path, clock: FixedClock):
    """A store on a real SQLite file whose clock the test moves by hand."""
    s = remem.open(db_path, clock=clock)
    yield s
    s.close()


@pytest.fixture
def memory(store):
    """A fresh memory ``m1`` with the default config."""
    return store.create_memory("m1")
