"""The both-backend fixtures, in one place for the whole suite (registered by
tests/conftest.py through ``pytest_plugins``).

- ``pg_server``: the PostgreSQL 18 + pgvector server of this process (one per xdist worker,
  started on first use, stopped at exit; ``remem.testing.pgdb.shared_server``).
- ``backend``: parametrized over ``sqlite`` and ``postgres``.
- ``store_url`` / ``other_url``: an empty remem database of the backend under test (a file
  under ``tmp_path``; a database of its own on the server, dropped after the test).
- ``pg_url``: a PostgreSQL database with nothing in it (not even remem's tables), for tests
  of what the first open does.

An SQLite ``store_url`` (and the root conftest's ``store``/``fixed_store`` file) is a copy of
a file this process migrated once (``sqlite_template``, ``copy_migrated_sqlite``): the
migrations cost a few commits each, about 0.2 s of wall time per test on a busy disk, a copy
a few milliseconds; the copy is byte for byte what a first ``remem.open`` leaves (the
migrations insert nothing random; ``schema_migrations`` keeps the template's times). A test
marked ``unmigrated`` gets a path with no file, for either backend.

A PostgreSQL ``store_url`` is a clone (``CREATE DATABASE .. TEMPLATE``) of a database this
process migrated once: cloning costs about a third of creating a database and running every
migration on it, and the clone holds exactly what a first ``remem.open`` would have left (the
migrations insert nothing random). A test that must see the migrations run on PostgreSQL
marks itself ``@pytest.mark.unmigrated`` and gets an empty database instead.
"""

from __future__ import annotations

import itertools
import os
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

BACKENDS = ["sqlite", "postgres"]

_TEMPLATE: dict[int, str] = {}  # id(server) -> name of its migrated template database
_LOCK = threading.Lock()
_COUNTER = itertools.count()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "unmigrated: store_url starts empty (the test opens it first)")


def _admin(server):
    import psycopg

    return psycopg.connect(server.url_for("postgres"), autocommit=True)


def _template(server) -> str:
    """The migrated template database of ``server`` (made on first use)."""
    with _LOCK:
        name = _TEMPLATE.get(id(server))
        if name is None:
            import psycopg

            from remem.stores.postgres.connection import migrate
            from remem.testing.pgdb import fresh_database

            url = fresh_database(server, prefix="migrated")
            with psycopg.connect(url, autocommit=True) as conn:
                migrate(conn)  # what the first open of a store does, before its pool
            name = _TEMPLATE[id(server)] = url.rsplit("/", 1)[1]
        return name


def migrated_database(server, prefix: str = "m") -> str:
    """A new database holding remem's migrated, empty schema; returns its URL."""
    from psycopg import sql

    template = _template(server)
    name = f"{prefix}_{os.getpid()}_{next(_COUNTER)}"
    with _admin(server) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
            sql.Identifier(name), sql.Identifier(template)))
    return server.url_for(name)


@contextmanager
def pg_database(server=None, *, migrated: bool = True, prefix: str = "m") -> Iterator[str]:
    """A database of its own on ``server`` (default: the process's), dropped on exit."""
    from remem.testing.pgdb import drop_database, fresh_database, shared_server

    server = server or shared_server()
    url = migrated_database(server, prefix) if migrated else fresh_database(server, prefix)
    try:
        yield url
    finally:
        drop_database(server, url)


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An SQLite file holding remem's migrated, empty schema (made once per process)."""
    import remem

    path = tmp_path_factory.mktemp("sqlite-template") / "migrated.db"
    store = remem.open(path)
    try:
        store.list_memories()  # the first use migrates
    finally:
        store.close()
    assert not path.with_name(path.name + "-wal").exists()  # one self-contained file
    return path


def copy_migrated_sqlite(request: pytest.FixtureRequest, path: Path) -> Path:
    """``path``, now a copy of the migrated template (left absent if the test is
    ``unmigrated``: its first open migrates)."""
    if request.node.get_closest_marker("unmigrated") is None:
        shutil.copyfile(request.getfixturevalue("sqlite_template"), path)
    return path


@contextmanager
def database_url(backend: str, request: pytest.FixtureRequest, path: Path) -> Iterator[str]:
    """An empty remem database of ``backend``: ``path`` (SQLite, a copy of the migrated
    template) or a database of its own on the session's server (PostgreSQL); empty of
    tables if the test is ``unmigrated``."""
    if backend == "sqlite":
        yield str(copy_migrated_sqlite(request, path))
        return
    server = request.getfixturevalue("pg_server")
    migrated = request.node.get_closest_marker("unmigrated") is None
    with pg_database(server, migrated=migrated) as url:
        yield url


@pytest.fixture(scope="session")
def pg_server():
    """The PostgreSQL 18 + pgvector server of this process (stopped at exit)."""
    from remem.testing.pgdb import shared_server

    return shared_server()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def store_url(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """URL of an empty remem database of the backend under test."""
    with database_url(backend, request, tmp_path / "remem.db") as url:
        yield url


@pytest.fixture
def other_url(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A second empty database of the same backend (e.g. the target of an import)."""
    with database_url(backend, request, tmp_path / "other.db") as url:
        yield url


@pytest.fixture
def pg_url(pg_server) -> Iterator[str]:
    """URL of a fresh PostgreSQL database with no tables at all."""
    with pg_database(pg_server, migrated=False, prefix="t") as url:
        yield url
