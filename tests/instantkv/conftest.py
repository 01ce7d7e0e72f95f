"""Fixtures: the instantKV drop-in commands run in-process on a real SQLite file."""

from __future__ import annotations

from pathlib import Path

import pytest
from ikvkit import Controller

import remem
from _plugins.backends import copy_migrated_sqlite


@pytest.fixture
def ikv(tmp_path: Path, request) -> Controller:
    store = remem.open(copy_migrated_sqlite(request, tmp_path / "ikv.db"))
    store.create_memory("knowledge")
    store.close()
    return Controller(tmp_path / "ikv.db")
