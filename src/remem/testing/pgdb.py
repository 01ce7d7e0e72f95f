"""Test and bench helpers on top of :mod:`remem.testing.pgserver`.

- ``shared_server()``: one throw-away PostgreSQL server per process, started on first use and
  stopped at exit (so pytest-xdist workers get one each, and the contract and postgres test
  directories share it).
- ``fresh_database(server)``: a new, empty database on it; returns its URL.
- ``database_bytes(server, url)``: the concatenated bytes of the database's table and index
  files after a CHECKPOINT, for tests proving erased text left the files.
"""

from __future__ import annotations

import itertools
import os
import threading
from pathlib import Path

from remem.testing.pgserver import PostgresServer, start_postgres

_SERVER: PostgresServer | None = None
_LOCK = threading.Lock()
_COUNTER = itertools.count()


def shared_server() -> PostgresServer:
    """The process's PostgreSQL server (started once; ``pgserver`` stops it at exit)."""
    global _SERVER
    with _LOCK:
        if _SERVER is None or not _SERVER.is_running:
            _SERVER = start_postgres()
        return _SERVER


def fresh_database(server: PostgresServer, prefix: str = "t") -> str:
    """Creates an empty database (extensions vector and pg_trgm present); returns its URL."""
    return server.create_database(f"{prefix}_{os.getpid()}_{next(_COUNTER)}")


def drop_database(server: PostgresServer, url: str) -> None:
    """Drops a database made by ``fresh_database`` (closing its remaining connections)."""
    import psycopg
    from psycopg import sql

    name = url.rsplit("/", 1)[1]
    with psycopg.connect(server.url_for("postgres"), autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
            sql.Identifier(name)))


def database_bytes(server: PostgresServer, url: str) -> bytes:
    """Every relation file of the database (heap, TOAST, indexes, free-space maps) after a
    CHECKPOINT wrote all dirty buffers out. The WAL (``pg_wal``) is not included."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CHECKPOINT")
        oid = conn.execute("SELECT oid FROM pg_database WHERE datname = current_database()"
                           ).fetchone()[0]
    out = bytearray()
    for path in sorted(Path(server.datadir, "base", str(oid)).iterdir()):
        if path.is_file():
            out += path.read_bytes()
    return bytes(out)


def table_rows(url: str) -> dict[str, list[tuple[str, ...]]]:
    """Every row of every table of the database's ``public`` schema (partitions read on their
    own, ``ONLY``), each value as its ``repr``, sorted: two databases that hold the same rows
    compare equal whatever order they were written in."""
    import psycopg

    with psycopg.connect(url) as conn:
        tables = [r[0] for r in conn.execute(
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'public' AND c.relkind = 'r' ORDER BY 1")]
        return {t: sorted((tuple(map(repr, r)) for r in conn.execute(
            f'SELECT * FROM ONLY "{t}"').fetchall()), key=repr) for t in tables}
