"""`remem serve` in a subprocess on a free loopback port, for tests (one helper for all)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import httpx


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_parent() -> None:
    """Linux: the server gets SIGTERM when the test process dies (no orphans if pytest is
    killed)."""
    try:
        import ctypes
        import signal

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class Server:
    """`remem --db DB serve` (plus ``args``) on 127.0.0.1; ready when ``/healthz`` answers.

    Args:
        db: database path or URL.
        args: extra ``serve`` options (e.g. ``["--providers-file", path]``).
        env: the server's environment (default: the caller's).
        startup_s: how long to wait for ``/healthz``.

    Raises:
        RuntimeError: the server exited or did not answer in time (with its stderr tail).
    """

    def __init__(self, db: str | Path, args: Sequence[str] = (), *,
                 env: Mapping[str, str] | None = None, startup_s: float = 60) -> None:
        self.db = str(db)
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "remem.cli.main", "--db", self.db, "serve", *args,
             "--host", "127.0.0.1", "--port", str(self.port), "--log-level", "warning"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=dict(env) if env else None,
            preexec_fn=_die_with_parent)
        deadline = time.monotonic() + startup_s
        while True:
            try:
                if httpx.get(f"{self.base}/healthz", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self._end()  # then its stderr is complete (stop() closes the pipe)
                why = self.proc.stderr.read().decode(errors="replace")[-2000:]
                self.stop()
                raise RuntimeError(f"remem serve did not start: {why}")
            time.sleep(0.05)

    def stop(self) -> None:
        """Terminates the server (kills it after 10 s)."""
        self._end()
        if self.proc.stderr:
            self.proc.stderr.close()

    def _end(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
