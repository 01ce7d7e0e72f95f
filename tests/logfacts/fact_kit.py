"""Shared bits of the Fact tests: both backends, a hand-moved clock, the shared schema."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import remem
from remem.service.clock import FixedClock

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
#: The shared schema; the copy shipped in the package (``remem/specs/kindgi``) when present.
SHARED_SCHEMA = Path("/work/shared/specs/kindgi/memory.schema.json")
PACKAGED_SCHEMA = Path(remem.__file__).parent / "specs" / "kindgi" / "memory.schema.json"
ALICE = "user:alice"
MARK = "zanzibarquokka"  # a word that appears nowhere else


def big_text(n_bytes: int, head: str = MARK) -> str:
    """``head`` then filler words up to about ``n_bytes``, ending in ``tailmarkerword``."""
    words, size, i = [head], len(head), 0
    while size < n_bytes - 20:
        w = f"w{i}"
        words.append(w)
        size += len(w) + 1
        i += 1
    return " ".join(words) + " tailmarkerword"


def fact_schema() -> dict[str, Any]:
    """The shared schema rooted at ``$defs/Fact``."""
    path = PACKAGED_SCHEMA if PACKAGED_SCHEMA.exists() else SHARED_SCHEMA
    schema = json.loads(path.read_text())
    return {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": "#/$defs/Fact"}


def assert_valid_fact(record: dict[str, Any]) -> None:
    """Raises when ``record`` is not valid against ``$defs/Fact`` (formats checked too)."""
    jsonschema.validate(record, fact_schema(),
                        format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)


@pytest.fixture
def blob_dir(tmp_path: Path) -> Path:
    """Where blobs go: beside the SQLite file; a named directory for PostgreSQL."""
    return tmp_path / "blobs"


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(T0)


@pytest.fixture
def store(store_url: str, backend: str, blob_dir: Path, clock: FixedClock
          ) -> Iterator[remem.RememStore]:
    """A store whose clock the test moves; SQLite keeps blobs in its data dir
    (``<file>.blobs``), PostgreSQL in ``blob_dir``."""
    s = remem.open(store_url, clock=clock,
                   **({"blob_dir": blob_dir} if backend == "postgres" else {}))
    yield s
    s.close()


@pytest.fixture
def mem(store: remem.RememStore) -> remem.Memory:
    return store.create_memory("m1")


def blob_files(store: remem.RememStore) -> list[Path]:
    """Every file under the store's blob root."""
    root = store.blobs.root
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


def run_sql(backend: str, store_url: str, statement: str) -> int:
    """Runs one SQL statement directly on the database (damage and mixed states in tests);
    returns the rows it changed (``log_kit.raw_sql``, which tells the backend by the URL)."""
    from logfacts.log_kit import raw_sql

    return raw_sql(store_url, statement)
