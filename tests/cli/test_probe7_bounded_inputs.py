"""Round-7 probe: the CLI read every file argument to its end before any limit applied
(``apply --file``, ``kip --file``, ``kip stage --file``, ``observe-many --file``,
``fact put --content-file``, ``memory create --config``, each also as ``-`` for stdin):
``remem apply --file /dev/zero`` grew until memory ran out, and a pipe that never closed
hung the command, although ``apply`` takes at most 65,536 bytes. Each now reads at most its
limit plus one byte and refuses the rest with ``invalid_input`` naming the option and the
limit. The inputs here are a pipe (``-``) and a FIFO (a path) that send one byte more than
the limit and stay open: the old code waited for an end that never came (the subprocess
timeout is the failure, not a measurement). Real subprocesses, a real SQLite file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import pytest

import remem

KIB = 1024
#: (argv after `--db DB -m m1 --json`, the file option's name, the limit in bytes)
CASES = {
    "apply": (["apply", "--file", "{f}"], "file", 64 * KIB),
    "kip": (["kip", "--file", "{f}"], "file", 64 * KIB),
    "kip-stage": (["kip", "stage", "user:maya", "s1", "--file", "{f}"], "file", 64 * KIB),
    "observe-many": (["observe-many", "user:maya", "--file", "{f}"], "file", 1024 * KIB),
    "fact-put": (["fact", "put", "user:maya", "report", "--text", "--content-file", "{f}"],
                 "content_file", 64 * 1024 * KIB),
    "memory-create": (["memory", "create", "m2", "--config", "{f}"], "config", 64 * KIB),
}
WAIT_S = 120  # far above a refusal; only the old code (waiting for EOF) reaches it


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("bounded") / "b.db")
    store = remem.open(path)
    store.create_memory("m1")
    store.close()
    return path


def _feed(stream, size: int, done: threading.Event) -> None:
    """Writes ``size`` bytes (no newline), then holds the stream open until ``done``."""
    try:
        chunk = b" " * (64 * KIB)
        left = size
        while left > 0:
            stream.write(chunk[:min(left, len(chunk))])
            left -= min(left, len(chunk))
        stream.flush()
        done.wait(WAIT_S + 30)
    except (BrokenPipeError, ValueError, OSError):
        pass  # the command stopped reading (refused): what we want


def _run(db: str, argv: list[str], source: str, size: int, tmp_path
         ) -> subprocess.CompletedProcess:
    done = threading.Event()
    cmd = [sys.executable, "-m", "remem.cli.main", "--db", db, "-m", "m1", "--json"]
    out_path, err_path = tmp_path / "out", tmp_path / "err"
    fifo = tmp_path / "in.fifo"
    with out_path.open("wb") as out, err_path.open("wb") as err:
        if source == "stdin":
            proc = subprocess.Popen(cmd + [a.replace("{f}", "-") for a in argv],
                                    stdin=subprocess.PIPE, stdout=out, stderr=err)
            feeder = threading.Thread(target=_feed, args=(proc.stdin, size, done), daemon=True)
        else:
            os.mkfifo(fifo)
            proc = subprocess.Popen(cmd + [a.replace("{f}", str(fifo)) for a in argv],
                                    stdout=out, stderr=err)

            def open_and_feed():
                with open(fifo, "wb") as w:
                    _feed(w, size, done)
            feeder = threading.Thread(target=open_and_feed, daemon=True)
    feeder.start()
    try:
        proc.wait(timeout=WAIT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise AssertionError("the command kept reading past its limit, waiting for an end "
                             "of input that never came") from None
    finally:
        done.set()
        if proc.stdin:
            try:
                proc.stdin.close()
            except OSError:
                pass
    return subprocess.CompletedProcess(proc.args, proc.returncode, out_path.read_text(),
                                       err_path.read_text())


@pytest.mark.parametrize("source", ["stdin", "fifo"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_file_argument_over_its_limit_is_refused_without_reading_to_the_end(
        db, case, source, tmp_path):
    argv, option, limit = CASES[case]
    done = _run(db, argv, source, limit + 1, tmp_path)
    assert done.returncode == 1, (done.returncode, done.stdout, done.stderr[-500:])
    err = json.loads(done.stdout)["error"]
    assert err["code"] == "invalid_input", err
    assert err["details"]["field"] == option and err["details"]["limit"] == limit, err
    assert f"{limit:,}" in err["message"], err


def test_a_file_within_the_limit_still_works(db, tmp_path):
    f = tmp_path / "apply.json"
    f.write_text(json.dumps({"entity": "user:maya", "attribute": "home_city",
                             "value": "Lyon", "kind": "profile_slot",
                             "operation": "assert"}) + " " * (60 * KIB))
    done = subprocess.run([sys.executable, "-m", "remem.cli.main", "--db", db, "-m", "m1",
                           "--json", "apply", "--file", str(f)], capture_output=True,
                          text=True, timeout=WAIT_S)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["results"][0]["receipt"]["status"] == "created"


@pytest.mark.parametrize("source", ["fifo"])
def test_a_providers_file_over_a_mebibyte_is_refused_without_reading_to_the_end(
        db, source, tmp_path):
    limit = 1024 * KIB
    done = _run(db, ["--providers-file", "{f}", "memory", "list"], source, limit + 1,
                tmp_path)
    assert done.returncode == 1, (done.returncode, done.stdout, done.stderr[-500:])
    err = json.loads(done.stdout)["error"]
    assert err["code"] == "config_invalid", err
    assert err["details"]["path"] == "providers_file" and err["details"]["limit"] == limit, err
