"""Tokens: stored hashed, compared in constant time, bound to a memory, role and subject."""

from __future__ import annotations

import hashlib
import re

import pytest

from remem.errors import InvalidInput, NotFoundOrNotVisible, Unauthenticated
from remem.service import tokens as tokens_mod
from remem.domain.access import Operation, Principal, Role, can_read, can_write, may
from remem.service.tokens import Tokens


def test_a_token_is_shown_once_and_only_its_sha256_is_stored(store, db_path):
    token, info = Tokens(store).create("m1", "writer", "user:alice", label="app")
    assert re.fullmatch(r"rmm_[0-9a-f]{16}_[A-Za-z0-9_-]{43}", token)
    assert token.split("_")[1] == info.token_id
    store.close()
    raw = b"".join(p.read_bytes() for p in db_path.parent.iterdir()
                   if p.name.startswith(db_path.name))
    secret = token.split("_", 2)[2].encode()
    assert secret not in raw and token.encode() not in raw
    assert hashlib.sha256(token.encode()).hexdigest().encode() in raw


def test_authenticate_compares_digests_in_constant_time(store, monkeypatch):
    tokens = Tokens(store)
    token, info = tokens.create("m1", "reader", "user:alice")
    calls = []
    real = tokens_mod.hmac.compare_digest
    monkeypatch.setattr(tokens_mod.hmac, "compare_digest",
                        lambda a, b: calls.append((a, b)) or real(a, b))
    assert tokens.authenticate(token) == Principal("m1", Role.READER, "user:alice",
                                                   info.token_id, "default")  # its tenant
    with pytest.raises(Unauthenticated):
        tokens.authenticate("rmm_ffffffffffffffff_" + "x" * 43)  # unknown id: still compared
    assert len(calls) == 2


@pytest.mark.parametrize("bad", [None, "", "rmm", "rmm_x", "xyz_a_b", "rmm__", "rmm_\udcff_x"])
def test_malformed_tokens_are_unauthenticated(store, bad):
    with pytest.raises(Unauthenticated):
        Tokens(store).authenticate(bad)


def test_a_revoked_token_and_a_wrong_secret_are_unauthenticated(store):
    tokens = Tokens(store)
    token, info = tokens.create("m1", "admin", "admin")
    with pytest.raises(Unauthenticated):
        tokens.authenticate(token[:-1] + ("A" if token[-1] != "A" else "B"))
    assert tokens.revoke(info.token_id).revoked_at is not None
    with pytest.raises(Unauthenticated):
        tokens.authenticate(token)
    with pytest.raises(NotFoundOrNotVisible):
        tokens.revoke(info.token_id, memory_id="m2")


@pytest.mark.parametrize(("memory", "role", "subject"), [
    ("bad id!", "reader", "admin"), ("m1", "owner", "admin"), ("m1", "reader", "alice"),
    ("m1", "reader", "user:"), ("m1", "reader", "planet:x"),
])
def test_create_rejects_bad_fields(store, memory, role, subject):
    with pytest.raises(InvalidInput):
        Tokens(store).create(memory, role, subject)


def test_tokens_are_listed_without_secrets(store):
    tokens = Tokens(store)
    tokens.create("m1", "reader", "user:a")
    tokens.create("m2", "reader", "user:b")
    assert [t.subject for t in tokens.list("m1")] == ["user:a"]
    assert len(tokens.list()) == 2
    assert all("hash" not in str(t.to_dict()) for t in tokens.list())


ALICE = Principal("m1", Role.WRITER, "user:alice", "t")
ADMIN = Principal("m1", Role.WRITER, "admin", "t")
READER = Principal("m1", Role.READER, "user:alice", "t")


@pytest.mark.parametrize(("principal", "scope", "read", "write"), [
    (ALICE, "user:alice", True, True),
    (ALICE, "user:bob", False, False),
    (ALICE, "agent:bot", True, False),
    (ALICE, "thread:t1", False, False),
    (ADMIN, "user:bob", True, True),
    (ADMIN, "agent:bot", True, True),
    (READER, "user:alice", True, False),
    (Principal("m1", Role.ADMIN, "agent:bot", "t"), "agent:bot", True, True),
    (Principal("m1", Role.ADMIN, "agent:bot", "t"), "user:alice", False, False),
])
def test_scope_rules(principal, scope, read, write):
    assert can_read(principal, scope) is read
    assert can_write(principal, scope) is write
    assert may(principal, Operation.READ, [scope]) is read


def test_memory_admin_needs_role_and_subject_admin():
    assert may(Principal("m1", Role.ADMIN, "admin", "t"), Operation.MANAGE)
    for p in (ADMIN, Principal("m1", Role.ADMIN, "user:alice", "t")):
        assert not may(p, Operation.MANAGE)
