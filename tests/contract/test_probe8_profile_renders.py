"""Round-8 probe: every ``profile(activation_id=...)`` stored a pinned render, and nothing ever
deleted one except a forget naming its items. A *reader* token (``GET /profile?activation_id=``)
could so grow the database without bound, one render per request, and every forget read all
of them (``drop_profile_renders`` scans the memory's renders); an agent host that starts a
``Session`` per conversation grew it too. Now a memory keeps at most
``MAX_PROFILE_RENDERS`` renders (the oldest go first). On PostgreSQL a pruned render's dead
tuple still held item values, so the prune owes a scrub, and a later forget of such a value
leaves no byte of it in the database files. Both backends, real tokens."""

from __future__ import annotations

import sqlite3

import pytest

from remem.service.tokens import Tokens

ALICE = "user:alice"
#: remem.domain.limits.MAX_PROFILE_RENDERS / KEPT_PROFILE_RENDERS (pinned here: the old code
#: had neither).
MAX_PROFILE_RENDERS, KEPT_PROFILE_RENDERS = 1_024, 768


def _renders(backend: str, url: str) -> int:
    sql = "SELECT count(*) FROM profile_renders WHERE memory_id='m1'"
    if backend == "sqlite":
        conn = sqlite3.connect(url)
        try:
            return conn.execute(sql).fetchone()[0]
        finally:
            conn.close()
    import psycopg

    with psycopg.connect(url) as conn:
        return conn.execute(sql).fetchone()[0]


@pytest.fixture
def reader(remem_store, mem):
    mem.remember(ALICE, "diet", "vegan zqxprofilez", kind="preference")
    token, _ = Tokens(remem_store).create("m1", "reader", ALICE)
    return remem_store.memory("m1", principal=Tokens(remem_store).authenticate(token))


def test_a_readers_activations_keep_a_bounded_number_of_renders(backend, store_url, reader):
    first = reader.profile([ALICE], activation_id="act-0")
    for i in range(1, MAX_PROFILE_RENDERS + 40):
        reader.profile([ALICE], activation_id=f"act-{i}")
    assert KEPT_PROFILE_RENDERS <= _renders(backend, store_url) <= MAX_PROFILE_RENDERS
    newest = reader.profile([ALICE], activation_id=f"act-{MAX_PROFILE_RENDERS + 39}")
    assert newest.replayed  # the newest activations keep their bytes
    again = reader.profile([ALICE], activation_id="act-0")  # the oldest was evicted:
    assert not again.replayed and again.text == first.text  # it renders afresh


def test_a_forgotten_value_leaves_no_byte_in_pruned_renders(backend, store_url, mem, reader,
                                                             database_bytes):
    for i in range(50):  # these renders hold the value; the prune deletes them all below
        assert "zqxprofilez" in reader.profile([ALICE], activation_id=f"old-{i}").text
    item_id = mem.inspect(ALICE, "diet").current[0].item_id
    mem.archive(item_id)  # the renders after this one leave the value out
    for i in range(MAX_PROFILE_RENDERS):
        reader.profile([ALICE], activation_id=f"new-{i}")
    assert _renders(backend, store_url) <= MAX_PROFILE_RENDERS
    assert not reader.profile([ALICE], activation_id="old-0").replayed  # pruned
    report = mem.forget(item_id)
    assert report.state == "completed", report.to_dict()
    assert b"zqxprofilez" not in database_bytes()
