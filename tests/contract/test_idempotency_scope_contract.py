"""Idempotency per scope (issue 13.6), on SQLite and PostgreSQL: the same idempotency key or
source id in two scopes is two requests; in one scope it replays or conflicts as before."""

from __future__ import annotations

import pytest

from remem.domain.access import Principal, Role
from remem.errors import IdempotencyConflict


def test_same_remember_key_in_two_scopes_is_two_writes(mem):
    a = mem.remember("user:a", "home_city", "Lyon", idempotency_key="k1")
    b = mem.remember("user:b", "home_city", "Paris", idempotency_key="k1")
    assert (a.outcome, b.outcome) == ("created", "created")
    assert not b.replayed and a.item_id != b.item_id
    assert mem.get(b.item_id).value == "Paris"


def test_same_scope_same_key_replays_and_different_content_conflicts(mem):
    a = mem.remember("user:a", "home_city", "Lyon", idempotency_key="k1")
    again = mem.remember("user:a", "home_city", "Lyon", idempotency_key="k1")
    assert again.replayed and again.item_id == a.item_id
    with pytest.raises(IdempotencyConflict):
        mem.remember("user:a", "home_city", "Paris", idempotency_key="k1")
    assert mem.get(a.item_id).value == "Lyon" and mem.get(a.item_id).status == "current"


def test_same_observe_key_in_two_scopes_gives_two_receipts(mem):
    a = mem.observe("user:a", "I live in Lyon.", idempotency_key="turn-1", derive=False)
    b = mem.observe("user:b", "I live in Paris.", idempotency_key="turn-1", derive=False)
    assert a.receipt_id != b.receipt_id and not b.replayed
    assert (a.scope, b.scope) == ("user:a", "user:b")
    again = mem.observe("user:b", "I live in Paris.", idempotency_key="turn-1", derive=False)
    assert again.replayed and again.receipt_id == b.receipt_id
    with pytest.raises(IdempotencyConflict):
        mem.observe("user:b", "I live in Rome.", idempotency_key="turn-1", derive=False)


def test_same_source_id_in_two_scopes_is_two_sources(mem):
    a = mem.observe("user:a", "I live in Lyon.", source_id="t1", derive=False)
    b = mem.observe("user:b", "I live in Paris.", source_id="t1", derive=False)
    assert not b.replayed and a.source_id == "t1" and b.source_id == "user:b/t1"
    assert mem.store.source(mem.id, "t1")["text"] == "I live in Lyon."
    assert mem.store.source(mem.id, "user:b/t1")["text"] == "I live in Paris."
    again = mem.observe("user:b", "I live in Paris.", source_id="t1", derive=False)
    assert again.replayed and again.receipt_id == b.receipt_id
    with pytest.raises(IdempotencyConflict):
        mem.observe("user:b", "I live in Rome.", source_id="t1", derive=False)


def test_scoped_tokens_keep_their_namespaces(mem):
    def token(subject: str):
        return mem.as_principal(Principal("m1", Role.WRITER, subject, token_id="tok_" + subject[5:]))

    alice, bob = token("user:alice"), token("user:bob")
    ra = alice.observe("user:alice", "I like tea.", source_id="s1", derive=False)
    rb = bob.observe("user:bob", "I like coffee.", source_id="s1", derive=False)
    assert (ra.source_id, rb.source_id) == ("user:alice/s1", "user:bob/s1")
    wa = alice.remember("user:alice", "drink", "tea", idempotency_key="k")
    wb = bob.remember("user:bob", "drink", "coffee", idempotency_key="k")
    assert not wb.replayed and wa.item_id != wb.item_id
    assert alice.remember("user:alice", "drink", "tea", idempotency_key="k").replayed


def test_feedback_key_in_two_scopes_is_two_feedbacks(mem):
    a = mem.feedback("user:a", "That was useful.", idempotency_key="f1")
    b = mem.feedback("user:b", "That was wrong.", idempotency_key="f1")
    assert a["feedback_id"] != b["feedback_id"] and not b["replayed"]
    assert mem.feedback("user:a", "That was useful.", idempotency_key="f1")["replayed"]


def _sql(backend: str, url: str, statements: list[str]) -> None:
    if backend == "sqlite":
        import sqlite3

        with sqlite3.connect(url) as conn:
            for s in statements:
                conn.execute(s)
        return
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        for s in statements:
            conn.execute(s)


def test_migration_binds_keys_stored_before_to_their_scope(backend, store_url):
    import remem

    s = remem.open(store_url)
    mem = s.create_memory("m1")
    w = mem.remember("user:a", "home_city", "Lyon", idempotency_key="k1")
    r = mem.observe("user:a", "I live in Lyon.", idempotency_key="o1", derive=False)
    s.close()
    # the rows as the previous version stored them: keys without their scope
    _sql(backend, store_url, [
        "UPDATE idempotency SET idem_key='k1' WHERE idem_key='user:a/k1'",
        "UPDATE receipts SET idem_key='o1' WHERE idem_key='user:a/o1'",
        "DELETE FROM schema_migrations WHERE version=9"])
    s = remem.open(store_url)
    try:
        mem = s.memory("m1")
        assert mem.remember("user:a", "home_city", "Lyon", idempotency_key="k1").item_id \
            == w.item_id
        assert mem.observe("user:a", "I live in Lyon.", idempotency_key="o1",
                           derive=False).receipt_id == r.receipt_id
        with pytest.raises(IdempotencyConflict):
            mem.remember("user:a", "home_city", "Paris", idempotency_key="k1")
        assert not mem.remember("user:b", "home_city", "Rome", idempotency_key="k1").replayed
    finally:
        s.close()
