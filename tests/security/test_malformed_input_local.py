"""Malformed input below the HTTP layer: the Python API, the CLI, stored tokens and the
SQLite adapter refuse the same inputs as the server (``test_malformed_input.py``), with typed
errors and no tracebacks; a busy database is the one retryable case."""

from __future__ import annotations

import subprocess
import sys

import pytest

from .test_malformed_input import BAD_SCOPES, DEEP, _cli


def test_scope_parse_and_token_creation_refuse_wildcards_in_the_python_api(tmp_path):
    import remem
    from remem.domain.model import Scope
    from remem.errors import InvalidInput
    from remem.service.tokens import Tokens

    for bad in BAD_SCOPES:
        with pytest.raises(InvalidInput):
            Scope.parse(bad)
    for good in ("user:alice", "user:Alice", "agent:bot-1.x@y", "thread:t_1", "user:é"):
        assert str(Scope.parse(good)) == good  # ids are exact (case-sensitive) handles
    store = remem.open(tmp_path / "t.db")
    try:
        tokens = Tokens(store)
        for bad in BAD_SCOPES:
            with pytest.raises(InvalidInput) as info:
                tokens.create("m1", "reader", bad)
            assert info.value.details["field"] == "subject"
        assert tokens.list("m1") == []
    finally:
        store.close()


# --- the Python API refuses the same values before anything recursive or any SQL -----------
def test_the_python_api_refuses_deep_surrogate_and_non_finite_values(tmp_path):
    import remem
    from remem.errors import InvalidInput

    store = remem.open(tmp_path / "p.db")
    try:
        memory = store.create_memory("m1")
        deep: list = []
        node = deep
        for _ in range(50_000):  # far past the interpreter's recursion limit
            node.append([])
            node = node[0]
        cases = [(deep, "nests"), ("\ud800", "surrogate"), ({"a\udc00": 1}, "surrogate"),
                 ([float("nan")], "not finite"), ({"x": float("inf")}, "not finite")]
        for value, words in cases:
            with pytest.raises(InvalidInput) as info:
                memory.remember("user:alice", "some_key", value)
            assert words in info.value.message
        with pytest.raises(InvalidInput):
            memory.remember("user:\ud800", "k", "v")
        assert store.adapter.head_seq("m1") == 0
    finally:
        store.close()


def test_the_python_api_refuses_a_surrogate_in_observed_text(tmp_path):
    import remem
    from remem.errors import InvalidInput

    store = remem.open(tmp_path / "o.db")
    try:
        memory = store.create_memory("m1")
        with pytest.raises(InvalidInput):
            memory.observe("user:alice", "hello \ud800")
    finally:
        store.close()


# --- the CLI reads caller JSON with the same strict parser ---------------------------------
def test_the_cli_refuses_deep_and_duplicate_json_files_without_a_traceback(tmp_path):
    db = str(tmp_path / "cli.db")
    _cli(db, "memory", "create", "m1")
    deep = tmp_path / "deep.json"
    deep.write_text("[" * DEEP + "]" * DEEP)
    dup = tmp_path / "dup.json"
    dup.write_text('{"kip_memory": "2.0", "kip_memory": "2.0"}')
    for args in (["apply", "--file", str(deep)], ["kip", "--file", str(deep)],
                 ["kip", "--file", str(dup)], ["remember", "user:alice", "k",
                                               "[" * 100 + "]" * 100, "--json-value"]):
        out = subprocess.run([sys.executable, "-m", "remem.cli.main", "--db", db,
                              "--memory", "m1", "--json", *args],
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 1, (args, out.stdout, out.stderr)
        said = out.stdout + out.stderr
        assert "Traceback" not in said and "RecursionError" not in said, said[-2000:]
        assert "invalid_input" in said, said[-2000:]


def test_a_stored_token_with_a_wildcard_subject_no_longer_authenticates(tmp_path):
    """Tokens made before subjects had to be scope handles (``user:*``) are refused (401),
    while a token with a canonical subject of the same store still works."""
    import hashlib

    import remem
    from remem.errors import Unauthenticated
    from remem.service.tokens import Tokens

    store = remem.open(tmp_path / "legacy.db")
    try:
        store.create_memory("m1")
        tokens = Tokens(store)
        good, _ = tokens.create("m1", "reader", "user:alice")
        assert tokens.authenticate(good).subject == "user:alice"
        for n, subject in enumerate(["user:*", "*", "User:alice", "user:alice "]):
            token = f"rmm_{n:016x}_" + "s" * 43
            store.adapter.create_token({
                "token_id": f"{n:016x}", "memory_id": "m1", "role": "reader",
                "subject": subject, "secret_hash": hashlib.sha256(token.encode()).hexdigest(),
                "label": None, "created_at": "2024-01-01T00:00:00Z"})
            with pytest.raises(Unauthenticated):
                tokens.authenticate(token)
    finally:
        store.close()


def test_a_lock_held_past_the_busy_timeout_is_retryable_and_clean(tmp_path):
    """Only what a retry can fix is retryable: a busy SQLite database is (503
    store_unavailable, no SQL or path); it stays an OperationalError for code that waits."""
    import sqlite3

    from remem.errors import StoreUnavailable
    from remem.stores.sqlite.connection import connect

    path = str(tmp_path / "busy.db")
    holder = connect(path)
    waiter = connect(path, busy_timeout_ms=50)
    try:
        holder.execute("BEGIN IMMEDIATE")
        with pytest.raises(StoreUnavailable) as info:
            waiter.execute("BEGIN IMMEDIATE")
        assert info.value.retryable and info.value.http_status == 503
        assert isinstance(info.value, sqlite3.OperationalError)
        assert path not in info.value.message and "BEGIN" not in info.value.message
        holder.execute("ROLLBACK")
        waiter.execute("BEGIN IMMEDIATE")  # free again: the retry succeeds
        waiter.execute("ROLLBACK")
    finally:
        holder.close()
        waiter.close()
