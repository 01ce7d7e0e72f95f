"""The ``remem`` console script run in this process: ``remem.cli.main.main()`` with its own
argv, environment, stdin and byte-captured stdout/stderr, answered as a
``subprocess.CompletedProcess`` (a helper module, not a pytest plugin).

A real ``remem`` process costs about 1.3 s of CPU to start (imports); this costs the command
alone, so tests that run one command per case (control characters, malformed input) run
the many cases here and keep a few real processes to show that the entry point behaves the
same (tests/cli/test_cli_control_chars.py, tests/cli/test_cli.py).

What a real process would do is kept: argv given as bytes is decoded as the interpreter
decodes it (``os.fsdecode``: undecodable bytes become lone surrogates); stdout is strict
UTF-8 and stderr ``backslashreplace`` UTF-8, as for a pipe; ``sys.exit`` becomes the return
code; the program is named ``python -m remem.cli.main``; an exception that escapes ``main``
is printed as a traceback on stderr (a real process would die with one), so ``"Traceback"
not in stderr`` still catches it; every store the command opened is closed afterwards (a
process would have exited), and the CLI's global options start at their defaults and its
consoles at the size a new process gives them (an earlier test may have fixed it).
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import traceback
import types
from collections.abc import Mapping, Sequence
from unittest import mock


def run_cli(args: Sequence[str | bytes], *, env: Mapping[str, str] | None = None,
            stdin: bytes | str | None = None, text: bool = False,
            cwd: str | os.PathLike | None = None) -> subprocess.CompletedProcess:
    """Runs ``remem ARGS`` in process.

    Args:
        args: the command line after ``remem`` (bytes are decoded like a real argv).
        env: the whole environment of the command (default: this process's).
        stdin: bytes (or text, encoded as UTF-8) on standard input; none: empty.
        text: stdout and stderr as ``str`` (decoded UTF-8) instead of bytes.
        cwd: the working directory during the command (default: unchanged).

    Returns:
        CompletedProcess(args, returncode, stdout, stderr).
    """
    import remem
    from remem.cli import instantkv, output
    from remem.cli import main as cli

    # as ``python -m remem.cli.main`` (click names the program after argv[0] and __main__)
    argv = [cli.__file__, *(os.fsdecode(a) if isinstance(a, bytes) else a for a in args)]
    data = stdin.encode("utf-8") if isinstance(stdin, str) else (stdin or b"")
    out, err = io.BytesIO(), io.BytesIO()
    streams = {
        "stdin": io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"),
        "stdout": io.TextIOWrapper(out, encoding="utf-8", errors="strict", write_through=True),
        "stderr": io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace",
                                   write_through=True),
    }
    opened: list = []
    real_open = remem.open

    def recording_open(*a, **kw):
        store = real_open(*a, **kw)
        opened.append(store)
        return store

    for options in (cli.STATE, instantkv.OPTIONS):  # a new process starts with the defaults
        vars(options).clear()
    env = dict(os.environ if env is None else env)
    consoles = [(c, c._width, c._height) for c in (output.console, output.err_console)]
    for c, _, _ in consoles:  # sized as rich sizes a new Console: by COLUMNS/LINES, if set
        c._width, c._height = (int(env[n]) if env.get(n, "").isdigit() else None
                               for n in ("COLUMNS", "LINES"))
    code = 0
    real_main, real_cwd = sys.modules["__main__"], os.getcwd()
    patches = (mock.patch.dict(os.environ, env, clear=True),
               mock.patch.object(sys, "argv", argv), mock.patch.multiple(sys, **streams),
               mock.patch.object(remem, "open", recording_open))
    try:
        sys.modules["__main__"] = types.SimpleNamespace(__package__="remem.cli")
        if cwd is not None:
            os.chdir(cwd)
        with patches[0], patches[1], patches[2], patches[3]:
            try:
                cli.main()
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
            except Exception:  # noqa: BLE001 - what a real process would print, and die of
                traceback.print_exc(file=sys.stderr)
                code = 1
    finally:
        sys.modules["__main__"] = real_main
        os.chdir(real_cwd)
        for c, width, height in consoles:
            c._width, c._height = width, height
        for store in opened:
            store.close()
    stdout, stderr = out.getvalue(), err.getvalue()
    if text:
        stdout, stderr = stdout.decode("utf-8"), stderr.decode("utf-8")
    return subprocess.CompletedProcess(argv, code, stdout, stderr)
