"""SQLite connection set-up and numbered migrations (one file, WAL, secure_delete)."""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from remem.errors import InvalidInput, StoreUnavailable
from remem.stores.sql.migrate import migration_files

MIGRATIONS_PACKAGE = "remem.stores.sqlite.migrations"


def connect(path: str, *, busy_timeout_ms: int = 30_000) -> sqlite3.Connection:
    """Opens ``path`` with WAL, synchronous=NORMAL (an acknowledged commit survives a killed
    process), secure_delete=ON and foreign keys on; runs pending migrations.

    Raises:
        StoreUnavailable: the file cannot be opened or is not a SQLite database.
    """
    if path != ":memory:":
        parent = Path(path).expanduser().resolve().parent
        if not parent.exists():
            raise StoreUnavailable(f"Directory {parent} does not exist; create it first.",
                                   path=path)
        create_private(path)
    try:
        conn = sqlite3.connect(path, timeout=busy_timeout_ms / 1000, isolation_level=None,
                               check_same_thread=False, factory=TranslatingConnection)
        conn.execute(f"PRAGMA busy_timeout={busy_timeout_ms}")
        _enable_wal(conn, busy_timeout_ms)
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA secure_delete=ON")
        conn.execute("PRAGMA foreign_keys=ON")
        migrate(conn)
    except sqlite3.DatabaseError as exc:
        raise StoreUnavailable(f"Cannot open SQLite database {path!r}: {exc}", path=path) from exc
    return conn


def create_private(path: str) -> None:
    """Creates ``path`` empty with mode 0600 when it does not exist, so the database (every
    memory's text, its claim-id secret, token hashes) is readable by its owner only; SQLite
    gives the ``-wal`` and ``-shm`` files the database file's mode. An existing file keeps
    the mode its owner gave it. Failing here (e.g. a read-only directory) is left to
    ``sqlite3.connect``, which reports it."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
                     0o600)
    except OSError:  # exists already (or cannot be made): SQLite opens or reports it
        return
    os.close(fd)


_WRONG_TYPE = ("An id, cursor or value has the wrong JSON type or is out of range (ids and "
               "cursors are strings, numbers fit 64 bits); check the request.")


class TranslatingConnection(sqlite3.Connection):
    """A connection that translates driver errors caused by input at the adapter boundary.

    A parameter SQLite cannot bind (a list or dict where an id goes, an integer over 64
    bits, text with a lone surrogate) becomes ``InvalidInput``; a lock still held after the
    busy timeout becomes ``SQLiteBusy`` (a retryable ``StoreUnavailable`` that is still a
    ``sqlite3.OperationalError``). No message carries SQL or a path. Other errors pass.
    """

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        try:
            return super().execute(sql, parameters)
        except Exception as exc:
            raise _translated(exc) from exc

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> sqlite3.Cursor:
        try:
            return super().executemany(sql, parameters)
        except Exception as exc:
            raise _translated(exc) from exc


class SQLiteBusy(StoreUnavailable, sqlite3.OperationalError):
    """Another connection held the database lock past the busy timeout; retrying can succeed.
    Also a ``sqlite3.OperationalError``, so code that waits on a busy database still sees
    one."""


def _translated(exc: Exception) -> Exception:
    if isinstance(exc, UnicodeEncodeError):
        return InvalidInput("Text contains a lone UTF-16 surrogate; it cannot be stored as "
                            "UTF-8. Send valid Unicode.", field="text")
    if isinstance(exc, OverflowError) or (
            isinstance(exc, (sqlite3.ProgrammingError, sqlite3.InterfaceError))
            and ("binding parameter" in str(exc) or "not supported" in str(exc))):
        return InvalidInput(_WRONG_TYPE)
    if isinstance(exc, sqlite3.OperationalError) and (
            "database is locked" in str(exc) or "database table is locked" in str(exc)):
        return SQLiteBusy("The SQLite database is locked by another connection (busy past "
                          "the busy timeout); retry.")
    return exc


def _enable_wal(conn: sqlite3.Connection, busy_timeout_ms: int) -> None:
    """Switches to WAL, retrying while another process holds the lock.

    Changing the journal mode of a new file needs an exclusive lock and SQLite reports
    "database is locked" at once instead of calling the busy handler, so processes opening a
    fresh database together would fail; retry with backoff up to the busy timeout.
    """
    deadline = time.monotonic() + busy_timeout_ms / 1000
    delay = 0.001
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL").fetchone()
            return
        except sqlite3.OperationalError as exc:
            busy = "locked" in str(exc) or "busy" in str(exc)
            if not busy or time.monotonic() >= deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.05)


def migrate(conn: sqlite3.Connection) -> list[int]:
    """Applies every migration newer than the recorded version, each in its own transaction.

    Returns:
        The versions applied now.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY,"
                     " name TEXT NOT NULL, applied_at TEXT NOT NULL DEFAULT "
                     "(strftime('%Y-%m-%dT%H:%M:%fZ','now')))")
        done = {r[0] for r in conn.execute("SELECT version FROM schema_migrations")}
        applied = []
        for version, name, sql in migration_files(MIGRATIONS_PACKAGE):
            if version in done:
                continue
            for statement in _split(sql):
                conn.execute(statement)
            conn.execute("INSERT INTO schema_migrations(version, name) VALUES (?, ?)",
                         (version, name))
            applied.append(version)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return applied


def _split(sql: str) -> list[str]:
    """Splits a migration on ';' at line ends (migrations keep one statement per block)."""
    parts, buf = [], []
    for line in sql.splitlines():
        buf.append(line)
        if line.rstrip().endswith(";") and sqlite3.complete_statement("\n".join(buf)):
            parts.append("\n".join(buf))
            buf = []
    if "".join(buf).strip():
        parts.append("\n".join(buf))
    return parts
