"""Fixtures: the instantKV drop-in commands run in-process on a real SQLite file."""

from __future__ import annotations

from pathlib import Path

import pytest
from ikvkit import Controller

import remem


@pytest.fixture
def ikv(tmp_path: Path) -> Controller:
    store = remem.open(tmp_path / "ikv.db")
    store.create_memory("knowledge")
    store.close()
    return Controller(tmp_path / "ikv.db")
