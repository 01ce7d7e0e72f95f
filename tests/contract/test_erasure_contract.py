"""Erasure truth on every backend (issue 12): forget covers scopes explicitly (the whole
memory for an owner, the listed scopes for a scoped caller, named in the report), and claim
ids are keyed with a per-memory secret, so a tombstone or ledger event cannot confirm a
guessed forgotten value; legacy memories (no secret) keep plain sha256 ids and still work."""

from __future__ import annotations

import hashlib
import hmac

import pytest

import remem
from remem.domain.canonical import canonical_json, normalize_value
from remem.domain.model import Authority
from remem.errors import NotFound, NotFoundOrNotVisible

SECRET = "Zanzibar-Quokka-7731"
QUOTE = "my secret hideout is Zanzibar-Quokka-7731, tell no one"
GOSSIP = "alice told me her hideout is zanzibar-quokka-7731, keep it quiet"


def _plain(memory: str, scope: str, key: str, value) -> str:
    """The pre-keyed claim id: anyone can compute it for a guessed value."""
    return hashlib.sha256(canonical_json([memory, scope, key, normalize_value(value)])
                          ).hexdigest()


def _gossip(mem: remem.Memory) -> None:
    """The value in another scope's conversation text, plus unrelated text beside it."""
    mem.observe("thread:x", GOSSIP, source_id="x1", derive=False)
    mem.observe("thread:x", "the weather is fine today", source_id="x2", derive=False)


def _thread_sources(mem: remem.Memory) -> list[str]:
    return [s.id for s in mem.recall("thread:x", "zanzibar quokka hideout",
                                     budget_tokens=1500).sources]


# --- scopes --------------------------------------------------------------------------------
def test_an_owner_forget_erases_the_value_from_every_scopes_source_text(mem, database_bytes):
    _gossip(mem)
    r = mem.remember("user:alice", "hideout", SECRET,
                     source={"id": "t1", "text": QUOTE, "role": "user"})
    assert "x1" in _thread_sources(mem)
    assert SECRET.lower().encode() in database_bytes()

    rep = mem.forget(r.item_id)

    assert rep.state == "completed" and rep.scopes == "all"
    assert "x1" in rep.sources and "x2" not in rep.sources  # the report names it
    assert rep.surfaces["sources"]["state"] == "erased"
    assert mem.store.source(mem.id, "x1")["text"] is None
    assert mem.store.source(mem.id, "x2")["text"] == "the weather is fine today"
    assert "x1" not in _thread_sources(mem)
    raw = database_bytes()
    assert SECRET.encode() not in raw and SECRET.lower().encode() not in raw
    assert b"keep it quiet" not in raw


def test_a_scoped_forget_covers_only_its_scopes_and_says_which(mem):
    _gossip(mem)
    r = mem.remember("user:alice", "hideout", SECRET)
    theirs = mem.remember("thread:x", "hideout", "Elsewhere-42")

    rep = mem.forget(r.item_id, scopes=["user:alice"])

    assert rep.state == "completed" and rep.scopes == ["user:alice"]
    assert rep.sources == [] and rep.to_dict()["scopes"] == ["user:alice"]
    assert mem.store.source(mem.id, "x1")["text"] == GOSSIP  # not covered, not touched
    assert "x1" in _thread_sources(mem)
    # outside the covered scopes: the same answer as an id that does not exist
    with pytest.raises(NotFound) as hidden:
        mem.forget(theirs.item_id, scopes=["user:alice"])
    with pytest.raises(NotFound) as missing:
        mem.forget("itm_nope", scopes=["user:alice"])
    assert (hidden.value.message.replace(theirs.item_id, "ID")
            == missing.value.message.replace("itm_nope", "ID"))
    assert mem.get(theirs.item_id).value == "Elsewhere-42"
    with pytest.raises(NotFoundOrNotVisible):
        mem.forget_source("x1", scopes=["user:alice"])

    out = mem.forget_source("x1", scopes=["thread:x"])

    assert out["state"] == "completed" and out["scopes"] == ["thread:x"]
    assert "x1" not in _thread_sources(mem)


def test_a_scoped_forget_by_key_outside_its_scopes_finds_nothing(mem):
    mem.remember("user:bob", "diet", "vegan")
    with pytest.raises(NotFound):
        mem.forget(scope="user:bob", key="diet", expected_revision=1, scopes=["user:alice"])
    assert mem.inspect("user:bob", "diet").value == "vegan"


# --- keyed claim ids -----------------------------------------------------------------------
def test_a_forgotten_values_claim_id_cannot_be_recomputed_without_the_secret(
        remem_store, database_bytes):
    mem = remem_store.create_memory("m1")
    r = mem.remember("user:alice", "hideout", SECRET, idempotency_key="req-1")
    plain = _plain("m1", "user:alice", "hideout", SECRET)
    key = remem_store.adapter.claim_secret("m1")
    assert key is not None and len(key) == 32
    body = canonical_json(["m1", "user:alice", "hideout", normalize_value(SECRET)])
    assert r.claim_id == hmac.new(key, body, hashlib.sha256).hexdigest() != plain

    mem.forget(r.item_id)

    raw = database_bytes()
    assert r.claim_id.encode() in raw  # the tombstone and the event keep the keyed id ...
    assert plain.encode() not in raw and bytes.fromhex(plain) not in raw  # ... never this
    assert mem.status()["claim_ids"] == "keyed"
    again = mem.remember("user:alice", "hideout", "  zanzibar-QUOKKA-7731 ",
                         authority=Authority.AUTOMATIC, source={"id": "t9", "role": "user"})
    assert again.outcome == "forgotten"  # the tombstone still matches under the key
    assert remem_store.verify()["ok"]


def test_each_memory_has_its_own_secret_and_it_is_erased_with_the_memory(
        remem_store, database_bytes):
    a, b = remem_store.create_memory("a"), remem_store.create_memory("b")
    ka = remem_store.adapter.claim_secret("a")
    assert ka != remem_store.adapter.claim_secret("b")
    ra = a.remember("user:alice", "diet", "vegan")
    rb = b.remember("user:alice", "diet", "vegan")
    assert ra.claim_id != rb.claim_id  # same claim text, different memories and keys
    assert ka in database_bytes()

    remem_store.delete_memory("a")

    assert remem_store.adapter.claim_secret("a") is None
    assert ka not in database_bytes()
    assert remem_store.pending_erasures() == 0
    assert b.get(rb.item_id).value == "vegan"


def test_a_legacy_memory_without_a_secret_keeps_plain_ids_and_verifies(store_url, raw_sql):
    s = remem.open(store_url)
    s.create_memory("old")
    s.close()
    # a memory created before keyed claim ids: migration 006 found it without a secret
    assert raw_sql("DELETE FROM memory_secrets WHERE memory_id='old'") == 1
    s = remem.open(store_url)
    try:
        mem = s.memory("old")
        r = mem.remember("user:alice", "hideout", SECRET)
        assert r.claim_id == _plain("old", "user:alice", "hideout", SECRET)
        assert mem.status()["claim_ids"] == "legacy"
        new = s.create_memory("new")  # a new memory beside it is always keyed
        assert new.remember("user:alice", "hideout", SECRET).claim_id != _plain(
            "new", "user:alice", "hideout", SECRET)
        rev = mem.inspect("user:alice", "hideout").revision
        rep = mem.forget(scope="user:alice", key="hideout", value=SECRET.upper(),
                         expected_revision=rev)
        assert rep.state == "completed" and rep.items == [r.item_id]
        auto = mem.remember("user:alice", "hideout", SECRET, authority=Authority.AUTOMATIC,
                            source={"id": "t2", "role": "user"})
        assert auto.outcome == "forgotten"
        assert s.verify()["ok"]
        before = mem.items(status="all").items
        s.rebuild("old")
        assert mem.items(status="all").items == before
    finally:
        s.close()
