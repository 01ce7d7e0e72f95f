"""No stored or echoed control character reaches the terminal raw (issue 12, "The CLI escapes
control characters in every output").

Values, source texts, token labels and command-line input hold every class of
control character; each command that prints them runs as the ``remem`` console script, and
its stdout and stderr bytes are checked: valid UTF-8, no C0 (but the line breaks between
output lines), DEL, C1, bidi control or line separator. Human output shows them as visible
escapes; ``--json`` output decodes back to exactly what was stored.

The many cases run the console script's ``main()`` in this process
(tests/_plugins/cli_in_process.py: its own argv, environment, stdin, byte-captured output);
real ``remem`` processes set up the token label, take the argv that is not UTF-8 (only a real
interpreter decodes it) and, in ``test_a_real_process_prints_the_same_bytes``, print exactly
what the in-process runs print for a sample of commands of each kind.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

import remem
from _plugins.cli_in_process import run_cli
from remem.cli.output import escape_controls, json_text

# Every class: CSI and OSC sequences, BEL, CR, BS, DEL, C1 (NEL, CSI), bidi overrides and
# isolates, the line separator, a tab and a newline (which must not forge a line).
NASTY = ("<\x1b[2J\x1b]0;pwned\x07|\r|\x08|\x7f|\x85\x9b31m|\u202eevil|\u2066iso\u2069|"
         "\u2028|\u061c\u200f|\t|\nforged: line|end>")
VALUE = "\x00" + NASTY  # values may hold NUL; source texts may not (refused with a message)
BIDI_SCOPE = "user:bidi"  # scopes themselves refuse control and format characters
C1_SCOPE = "user:c1"
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e"
                 "\u2066-\u2069]")


def _env(db) -> dict[str, str]:
    env = {**os.environ, "REMEM_DATABASE_URL": str(db), "COLUMNS": "400"}
    env.pop("REMEM_MEMORY", None)
    return env


def remem_cmd(db, *args: str | bytes, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    """``remem ARGS`` on ``db``, in this process."""
    return run_cli(args, env=_env(db), stdin=stdin)


def real_remem(db, *args: str | bytes, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    """``remem ARGS`` on ``db`` as a real process."""
    return subprocess.run([sys.executable, "-m", "remem.cli.main", *args], env=_env(db),
                          input=stdin, capture_output=True, timeout=120)


def safe_text(proc: subprocess.CompletedProcess) -> tuple[str, str]:
    """stdout and stderr as text, after checking that no raw control character is in them."""
    out, err = proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")  # strict: no surrogates
    for stream in (out, err):
        assert not RAW.search(stream), (proc.args, RAW.search(stream), stream)
        assert "Traceback" not in stream, stream
    return out, err


def strings(doc) -> list[str]:
    """Every string in a JSON document (keys and values)."""
    if isinstance(doc, str):
        return [doc]
    if isinstance(doc, dict):
        return [s for k, v in doc.items() for s in (k, *strings(v))]
    if isinstance(doc, list):
        return [s for v in doc for s in strings(v)]
    return []


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    """A memory ``m`` holding NASTY in values, scopes, a source text and a conflict group."""
    path = tmp_path_factory.mktemp("ctl") / "c.db"
    store = remem.open(path)
    m = store.create_memory("m", {"keys": {"dog_name": {"on_change": "conflict"}}})
    ids = {
        "note": m.remember(BIDI_SCOPE, "note", VALUE).item_id,
        "c1": m.remember(C1_SCOPE, "note", {"nested": NASTY}).item_id,
        "diet": m.remember(BIDI_SCOPE, "diet", "vegan " + NASTY, kind="preference").item_id,
    }
    m.remember(BIDI_SCOPE, "note", "plain now")  # a superseded NASTY version for history
    m.remember(BIDI_SCOPE, "dog_name", "Rex " + NASTY)
    m.remember(BIDI_SCOPE, "dog_name", "Max " + NASTY)  # a conflict group
    ids["receipt"] = m.observe(BIDI_SCOPE, "I said bidi " + NASTY.replace("\x00", ""),
                               source_id="src-1").receipt_id
    store.close()
    label = real_remem(path, "token", "create", "--memory", "m", "--role", "reader",
                      "--subject", BIDI_SCOPE, "--label", "lab " + NASTY)
    safe_text(label)
    assert label.returncode == 0
    return path, ids


def test_escape_controls_makes_every_class_visible():
    assert escape_controls("a\x1b[1m\x07\x00\r\t\x7f\x85\u202e\u2066\u2028\udc80b") == (
        "a\\x1b[1m\\x07\\x00\\r\\t\\x7f\\x85\\u202e\\u2066\\u2028\\udc80b")
    assert escape_controls("one\ntwo") == "one\\ntwo"
    assert escape_controls("one\ntwo\x1b", keep_newlines=True) == "one\ntwo\\x1b"
    assert escape_controls("Zürich, 東京, emoji 👍, C:\\path") == "Zürich, 東京, emoji 👍, C:\\path"
    text = json_text({"v": NASTY + "\udc80"})
    assert not RAW.search(text) and json.loads(text) == {"v": NASTY + "\udc80"}
    assert "Zürich" in json_text("Zürich")  # readable: only unsafe characters are escaped


@pytest.mark.parametrize("args", [
    ("inspect", BIDI_SCOPE, "note"),
    ("items", "--status", "all"),
    ("recall", "bidi vegan", "--scope", BIDI_SCOPE, "--scope", C1_SCOPE),
    ("context", "vegan", "--scope", BIDI_SCOPE),
    ("profile", "--scope", BIDI_SCOPE),
    ("conflicts",),
    ("token", "list"),
])
def test_commands_that_print_stored_text_escape_it(db, args):
    path, _ = db
    out, _ = safe_text(human := remem_cmd(path, "-m", "m", *args))
    assert human.returncode == 0, human.stderr
    # shown, visibly (recall and profile lines quote values as JSON: \u001b there)
    assert ("\\x1b[2J" in out or "\\u001b[2J" in out) and "\\u202e" in out, out
    assert "\\x9b31m" in out
    assert "forged: line" in out
    for line in out.splitlines():  # a stored newline never starts a line of its own
        assert not line.lstrip("│ ").startswith("forged: line"), line
    jout, _ = safe_text(as_json := remem_cmd(path, "--json", "-m", "m", *args))
    assert as_json.returncode == 0
    assert any("\x1b[2J" in s and "\u202e" in s and "\x9b" in s
               for s in strings(json.loads(jout)))  # lossless


def test_inspect_json_round_trips_the_stored_value_exactly(db):
    path, _ = db
    m_json = remem_cmd(path, "--json", "-m", "m", "inspect", BIDI_SCOPE, "note")
    out, _ = safe_text(m_json)
    doc = json.loads(out)
    assert doc["scope"] == BIDI_SCOPE and doc["history"][0]["value"] == VALUE
    human, _ = safe_text(remem_cmd(path, "-m", "m", "inspect", BIDI_SCOPE, "note"))
    history = [ln for ln in human.splitlines() if "history:" in ln]
    assert len(history) == 1 and history[0].count("\\n") == 1  # one line, newline escaped
    assert "\\x00<\\x1b[2J\\x1b]0;pwned\\x07|\\r|\\x08|\\x7f|\\x85\\x9b31m|\\u202eevil|" \
           "\\u2066iso\\u2069|\\u2028|\\u061c\\u200f|\\t|\\nforged: line|end>" in history[0]


def test_history_and_items_of_nested_values_are_escaped(db):
    path, ids = db
    for args in (("history", ids["c1"]), ("items", "--scope", C1_SCOPE)):
        out, _ = safe_text(proc := remem_cmd(path, "-m", "m", *args))
        assert proc.returncode == 0 and C1_SCOPE in out, args
        assert '{"nested": "<\\u001b[2J' in out and "|\\x85\\x9b31m|\\u202eevil" in out
    out, _ = safe_text(remem_cmd(path, "--json", "-m", "m", "history", ids["c1"]))
    assert json.loads(out)["item"]["value"] == {"nested": NASTY}


def test_kip_and_receipt_output_is_escaped(db, tmp_path):
    path, ids = db
    req = tmp_path / "kip.json"
    req.write_text(json.dumps({"kip_memory": "2.0", "operation": "recall",
                               "scope": {"task_ref": BIDI_SCOPE}, "input": {"query": "bidi"}}))
    out, _ = safe_text(proc := remem_cmd(path, "-m", "m", "kip", "--file", str(req)))
    assert proc.returncode == 0 and "\\u001b[2J" in out and "\\u202e" in out
    assert any("\x1b[2J" in s for s in strings(json.loads(out)))  # the text is valid JSON
    out, _ = safe_text(proc := remem_cmd(path, "-m", "m", "receipt", ids["receipt"]))
    assert proc.returncode == 0 and ids["receipt"] in out


def test_observe_refuses_control_characters_in_ids_and_says_so_escaped(db):
    path, _ = db
    proc = remem_cmd(path, "-m", "m", "observe", BIDI_SCOPE, "-", "--source-id", "s\u202e2",
                     "--run-id", "run\x9b1", stdin=("said " + NASTY.replace("\x00", "")).encode())
    out, err = safe_text(proc)
    assert proc.returncode != 0 and "invalid_input" in out + err  # ids are printable only
    proc = remem_cmd(path, "-m", "m", "observe", BIDI_SCOPE, "-", "--source-id", "s-2",
                     stdin=("said " + NASTY.replace("\x00", "")).encode())
    out, _ = safe_text(proc)
    assert proc.returncode == 0 and "s-2" in out


@pytest.mark.parametrize("args, words", [
    (("-m", "no\x1b[31mpe\u202e", "inspect", "user:a", "note"), "no\\x1b[31mpe\\u202e"),
    (("-m", "m", "remember", "user:a\x1b[1m", "note", "v"), "invalid_input"),
    (("-m", "m", "remember", "user:a", "no\x9bte", "v"), "invalid_input"),
    (("-m", "m", "receipt", "rcp_\x1b]0;x\x07"), "not_found"),
    (("-m", "m", "history", "itm_\u2066\x1b[2J"), "not_found"),
    (("no-such-\x1b[31mcommand\u202e",), "no-such-\\x1b[31mcommand\\u202e"),
    (("-m", "m", "inspect", "user:a\x1b[2J"), "Missing argument"),
    (("-m", "m", "items", "--limit", "x\x1b[2J\x85"), "Invalid value for '--limit'"),
    (("-m", "m", "observe", "user:a", "x", "--occurred-at", "2026\x1b[2J"), "2026\\x1b[2J"),
])
def test_error_messages_quoting_input_are_escaped(db, args, words):
    path, _ = db
    out, err = safe_text(proc := remem_cmd(path, *args))
    assert proc.returncode in (1, 2) and words in err, (proc.returncode, out, err)
    jout, jerr = safe_text(as_json := remem_cmd(path, "--json", *args))
    assert as_json.returncode in (1, 2)
    if as_json.returncode == 1:  # a RememError: one JSON error object on stdout
        assert json.loads(jout)["error"]["code"]


def test_invalid_utf8_in_the_command_line_is_refused_escaped_not_a_crash(db):
    path, _ = db
    proc = real_remem(path, "-m", b"no\xff\xfepe", "inspect", "user:a", "note")
    _, err = safe_text(proc)
    assert proc.returncode == 1 and "invalid_input" in err and "\\udcff\\udcfe" in err
    out, _ = safe_text(proc := real_remem(path, "--json", "items", "--scope", b"user:\x9b"))
    assert proc.returncode == 1 and json.loads(out)["error"]["details"]["field"] == "argv"


@pytest.mark.parametrize("args", [
    ("-m", "m", "inspect", BIDI_SCOPE, "note"),  # stored text, human
    ("--json", "-m", "m", "items", "--status", "all"),  # stored text, JSON
    ("-m", "m", "receipt", "rcp_\x1b]0;x\x07"),  # a RememError quoting input
    ("--json", "-m", "m", "receipt", "rcp_\x1b]0;x\x07"),  # the same, as a JSON error
    ("no-such-\x1b[31mcommand\u202e",),  # a usage error quoting input
    ("-m", "m", "items", "--limit", "x\x1b[2J\x85"),  # a bad option value
])
def test_a_real_process_prints_the_same_bytes(db, args):
    """The in-process runs of this file stand for real ``remem`` processes: a real process
    gives the same exit code and the same stdout and stderr bytes."""
    path, _ = db
    real, here = real_remem(path, *args), remem_cmd(path, *args)
    safe_text(real)
    assert (real.returncode, real.stdout, real.stderr) == (
        here.returncode, here.stdout, here.stderr)
