"""PostgreSQL-only tests: one server per test session (per xdist worker), shared with
tests/contract through ``remem.testing.pgdb.shared_server``; a fresh database per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session")
def pg_server():
    from remem.testing.pgdb import shared_server

    return shared_server()


@pytest.fixture
def pg_url(pg_server) -> Iterator[str]:
    """URL of a fresh, empty database."""
    from remem.testing.pgdb import drop_database, fresh_database

    url = fresh_database(pg_server)
    yield url
    drop_database(pg_server, url)
