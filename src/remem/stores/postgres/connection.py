"""PostgreSQL connections: a lazy psycopg pool, numbered migrations, per-memory partitions,
and the translation of driver errors into remem errors.

Nothing here connects at import or construction time; ``Database.pool`` opens the pool (and
migrates) on first use. Connections run in autocommit; writes use explicit transactions.
Server-side prepared statements are off (``prepare_threshold=None``): every statement is
planned with its parameters, so partition pruning happens at plan time and only the named
memory's partitions are locked (and the store works behind PgBouncer in transaction mode).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

import psycopg
from psycopg import errors as pgerr
from psycopg import IsolationLevel, sql
from psycopg.rows import dict_row, tuple_row
from pgvector.psycopg import register_vector
from psycopg_pool import ConnectionPool, PoolTimeout

from remem.errors import HeadMoved, InvalidInput, StoreUnavailable
from remem.stores.sql.migrate import migration_files

log = logging.getLogger("remem.store")

MIGRATIONS_PACKAGE = "remem.stores.postgres.migrations"
#: Advisory lock key serialising migrations across processes (hashtext('remem.migrations')).
MIGRATION_LOCK = 0x72656D656D  # "remem"


def redacted(url: str) -> str:
    """``host:port/dbname`` of a URL: error messages never carry the password."""
    parts = urlsplit(url)
    return f"{parts.hostname or 'localhost'}:{parts.port or 5432}{parts.path or ''}"


@contextmanager
def translated(url: str) -> Iterator[None]:
    """Translates driver errors at the adapter boundary (``raise ... from exc``).

    No message or detail carries SQL, the host, port, database name or a driver message
    (those go to the ``remem.store`` log only). Retryable only where a retry can succeed:

    - serialization failures and deadlocks become ``HeadMoved`` (retryable: decide again);
    - an exhausted pool, lost or refused connections become ``StoreUnavailable``
      (retryable);
    - input the database refuses (NUL or untranslatable characters, over-long words,
      out-of-range numbers, a parameter of a type the column cannot hold) becomes
      ``InvalidInput`` (not retryable: the same input fails again).

    Other errors are bugs and pass.
    """
    try:
        yield
    except (pgerr.SerializationFailure, pgerr.DeadlockDetected) as exc:
        raise HeadMoved(f"Concurrent writers collided ({exc.sqlstate}); decide again.") from exc
    except PoolTimeout as exc:
        log.warning("no pooled connection to %s: %s", redacted(url), exc)
        raise StoreUnavailable("No PostgreSQL connection became available in time; retry, "
                               "or raise the pool size.") from exc
    except UnicodeEncodeError as exc:  # a lone surrogate psycopg cannot encode as UTF-8
        raise InvalidInput("Text contains a lone UTF-16 surrogate; it cannot be stored as "
                           "UTF-8. Send valid Unicode.", field="text") from exc
    except (pgerr.UntranslatableCharacter, pgerr.CharacterNotInRepertoire) as exc:
        raise InvalidInput("Text contains a character PostgreSQL cannot store (NUL, \\u0000);"
                           " remove it.", field="text") from exc
    except pgerr.ProgramLimitExceeded as exc:  # e.g. a word over 2,047 bytes in a tsquery
        log.info("input over a PostgreSQL limit: %s", exc.sqlstate)
        raise InvalidInput("Input exceeds a storage limit (a word over 2,047 bytes, or a "
                           "value too large to index); shorten it.") from exc
    except psycopg.DataError as exc:
        if "NUL" in str(exc):  # psycopg refuses NUL in text parameters client-side
            raise InvalidInput("Text contains a NUL character (\\x00); remove it.",
                               field="text") from exc
        log.info("input refused by PostgreSQL: %s", exc.sqlstate)
        raise InvalidInput("Input has a value the store cannot hold (out of range or of "
                           "the wrong type); check the request.") from exc
    except pgerr.UndefinedFunction as exc:  # text = integer: a non-string id reached SQL
        if "operator does not exist" not in str(exc):
            raise
        raise InvalidInput(_WRONG_TYPE) from exc
    except psycopg.ProgrammingError as exc:
        if not str(exc).startswith("cannot adapt type"):  # a list/dict where a string goes
            raise
        raise InvalidInput(_WRONG_TYPE) from exc
    except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
        log.warning("PostgreSQL at %s is unavailable: %s", redacted(url), str(exc).strip())
        raise StoreUnavailable("PostgreSQL is unavailable (connection refused, lost or timed "
                               "out); check that the server is running and the database URL "
                               "(REMEM_DATABASE_URL or --db), then retry.") from exc


_WRONG_TYPE = ("An id, cursor or value has the wrong JSON type (ids and cursors are strings); "
               "check the request.")


def migrate(conn: psycopg.Connection) -> list[int]:
    """Applies every migration newer than those recorded in ``schema_migrations`` (same
    table and semantics as SQLite), in one transaction under an advisory lock so concurrent
    first opens from many processes apply each version once. Then makes sure every memory
    has its partition of every partitioned table (a migration may add one).

    Returns:
        The versions applied now.
    """
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        conn.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY,"
                     " name TEXT NOT NULL, applied_at TEXT NOT NULL DEFAULT "
                     "to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'))")
        cur = conn.cursor(row_factory=tuple_row)
        done = {r[0] for r in cur.execute("SELECT version FROM schema_migrations")}
        applied = []
        for version, name, text in migration_files(MIGRATIONS_PACKAGE):
            if version in done:
                continue
            conn.execute(text.encode())  # no parameters: several statements in one call
            conn.execute("INSERT INTO schema_migrations(version, name) VALUES (%s, %s)",
                         (version, name))
            applied.append(version)
        if applied:
            for memory_id, mno in cur.execute("SELECT memory_id, mno FROM memories").fetchall():
                ensure_partitions(conn, memory_id, mno)
    return applied


def partitioned_tables(conn: psycopg.Connection) -> list[str]:
    """Names of the partitioned parents in the current schema, sorted."""
    rows = conn.cursor(row_factory=tuple_row).execute(
        "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE c.relkind = 'p' AND NOT c.relispartition AND n.nspname = current_schema() "
        "ORDER BY c.relname").fetchall()
    return [r[0] for r in rows]


def partition_name(table: str, mno: int) -> str:
    """The memory's partition of ``table`` (memory ids may be longer than identifiers)."""
    return f"{table}_m{mno}"


def ensure_partitions(conn: psycopg.Connection, memory_id: str, mno: int) -> None:
    """Creates the memory's partition of every partitioned table that lacks one.

    ``CREATE TABLE ... (LIKE parent)`` then ``ATTACH PARTITION`` takes only a SHARE UPDATE
    EXCLUSIVE lock on the parent, so creating a memory does not block other memories'
    readers and writers (``CREATE TABLE ... PARTITION OF`` would lock the parent exclusively).
    """
    for table in partitioned_tables(conn):
        name = partition_name(table, mno)
        exists = conn.cursor(row_factory=tuple_row).execute(
            "SELECT to_regclass(%s)", (name,)).fetchone()[0]
        if exists is not None:
            continue
        conn.execute(sql.SQL("CREATE TABLE {} (LIKE {} INCLUDING DEFAULTS INCLUDING "
                             "CONSTRAINTS INCLUDING STORAGE)").format(
            sql.Identifier(name), sql.Identifier(table)))
        conn.execute(sql.SQL("ALTER TABLE {} ATTACH PARTITION {} FOR VALUES IN ({})").format(
            sql.Identifier(table), sql.Identifier(name), sql.Literal(memory_id)))


class Database:
    """A lazily opened connection pool for one PostgreSQL URL.

    Args:
        url: ``postgresql://user:password@host:port/dbname``.
        max_connections: pool size per process.
        connect_timeout_s: how long to wait for a connection before ``StoreUnavailable``.

    Forking: a child process that inherits an open pool gets a fresh one on first use
    (connections are never shared across processes).
    """

    def __init__(self, url: str, *, max_connections: int = 8,
                 connect_timeout_s: float = 10.0) -> None:
        self.url = url
        self.max_connections = max_connections
        self.connect_timeout_s = connect_timeout_s
        self._pool: ConnectionPool | None = None
        self._pid = 0
        self._lock = threading.Lock()

    @property
    def pool(self) -> ConnectionPool:
        if self._pool is None or self._pid != os.getpid():
            with self._lock:
                if self._pool is None or self._pid != os.getpid():
                    self._pool = self._open()
                    self._pid = os.getpid()
        return self._pool

    def _open(self) -> ConnectionPool:
        with translated(self.url):
            with psycopg.connect(self.url, autocommit=True,
                                 connect_timeout=max(1, int(self.connect_timeout_s))) as conn:
                try:
                    migrate(conn)
                except pgerr.InsufficientPrivilege as exc:
                    log.warning("cannot migrate %s: %s", redacted(self.url), exc)
                    raise StoreUnavailable(
                        "Cannot migrate the remem schema: permission denied. Run the first "
                        "open as the schema owner; the extensions vector and pg_trgm must be "
                        "creatable (or created by a superuser).") from exc
            pool = ConnectionPool(
                self.url, min_size=1, max_size=self.max_connections, open=False,
                timeout=self.connect_timeout_s, name="remem", configure=_configure,
                kwargs={"autocommit": True, "row_factory": dict_row, "prepare_threshold": None})
            pool.open(wait=True, timeout=self.connect_timeout_s)
        return pool

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection]:
        """A pooled autocommit connection (errors translated)."""
        with translated(self.url), self.pool.connection() as conn:
            yield conn

    @contextmanager
    def transaction(self) -> Iterator[psycopg.Connection]:
        """One transaction: committed on normal exit, rolled back on any exception."""
        with translated(self.url), self.pool.connection() as conn, conn.transaction():
            yield conn

    @contextmanager
    def snapshot(self) -> Iterator[psycopg.Connection]:
        """A REPEATABLE READ, READ ONLY transaction (one consistent view; BEGIN carries the
        isolation level, so it costs no extra round trip)."""
        with translated(self.url), self.pool.connection() as conn:
            conn.isolation_level, conn.read_only = IsolationLevel.REPEATABLE_READ, True
            try:
                with conn.transaction():
                    yield conn
            finally:
                conn.isolation_level, conn.read_only = None, None

    def fetchall(self, query: Any, args: Any = None) -> list[dict[str, Any]]:
        with self.connection() as conn:
            return conn.execute(query, args).fetchall()

    def fetchone(self, query: Any, args: Any = None) -> dict[str, Any] | None:
        with self.connection() as conn:
            return conn.execute(query, args).fetchone()

    def close(self) -> None:
        with self._lock:
            if self._pool is not None and self._pid == os.getpid():
                self._pool.close()
            self._pool = None


def _configure(conn: psycopg.Connection) -> None:
    register_vector(conn)
