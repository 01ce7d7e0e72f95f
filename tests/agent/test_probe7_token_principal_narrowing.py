"""Round-7 probe: ``Memory.as_principal`` accepted any principal, and the agent integration
(``MemoryTools``, ``MemoryProvider``, ``Session``) rebinds its memory to a writer of the
``user_scope`` it is given through it. A host that opened the memory with a token's
principal (``store.memory("m1", principal=tokens.authenticate(token))``, the documented way
to act for a token) and built tools for a scope got a writer of that scope whatever the
token allowed: alice's *reader* token wrote and read bob's memory. Now a token principal can
only be narrowed (same memory, tenant and token; no higher role; a scoped subject keeps its
scope), the agent integration keeps the token (and its role, at most writer), and a scope
the token does not own is refused (``permission_denied``). The owner is unchanged. Real
SQLite file, real tokens."""

from __future__ import annotations

import pytest

from remem.agent import MemoryProvider, MemoryTools, Session
from remem.domain.access import Principal, Role
from remem.errors import PermissionDenied
from remem.service.tokens import Tokens


@pytest.fixture
def world(store):
    mem = store.create_memory("m1")
    mem.remember("user:bob", "home_city", "Oslo zbobz", kind="profile_slot")
    tokens = Tokens(store)
    made = {name: tokens.create("m1", role, subject)[0] for name, role, subject in (
        ("alice_reader", "reader", "user:alice"), ("alice_writer", "writer", "user:alice"),
        ("root", "admin", "admin"))}
    return store, mem, {n: store.memory("m1", principal=tokens.authenticate(t))
                        for n, t in made.items()}


def _bob_values(mem):
    return sorted(str(v.value) for v in mem.items(scope="user:bob", status="all").items)


@pytest.mark.parametrize("who", ["alice_reader", "alice_writer"])
@pytest.mark.parametrize("build", [MemoryTools, MemoryProvider, Session])
def test_agent_tools_for_another_scope_are_refused_to_a_scoped_token(world, who, build):
    _, owner, as_token = world
    with pytest.raises(PermissionDenied):
        build(as_token[who], user_scope="user:bob", agent_scope="agent:helper")
    assert _bob_values(owner) == ["Oslo zbobz"]


def test_a_reader_tokens_tools_cannot_write_even_its_own_scope(world):
    _, owner, as_token = world
    tools = MemoryTools(as_token["alice_reader"], user_scope="user:alice")
    out = tools.call("Remember", {"key": "home_city", "value": "Paris"})
    assert out["ok"] is False and out["error"]["code"] == "permission_denied", out
    assert owner.items(scope="user:alice", status="all").items == []


def test_a_writer_tokens_tools_write_its_scope_as_that_token(world):
    _, owner, as_token = world
    token_mem = as_token["alice_writer"]
    tools = MemoryTools(token_mem, user_scope="user:alice")
    out = tools.call("Remember", {"key": "home_city", "value": "Paris"})
    assert out["ok"] is True, out
    item = owner.items(scope="user:alice").items[0]
    events = owner.history(item.item_id)["events"]
    assert {e["actor"] for e in events} == {token_mem.principal.actor}


def test_an_admin_subject_token_may_bind_tools_to_any_scope_as_itself(world):
    _, owner, as_token = world
    tools = MemoryTools(as_token["root"], user_scope="user:bob")
    found = tools.call("SearchMemory", {"query": "where does bob live"})
    assert found["ok"] is True and "zbobz" in str(found), found
    assert tools.memory.principal.token_id == as_token["root"].principal.token_id


@pytest.mark.parametrize("wider", [
    Principal("m1", Role.ADMIN, "admin"),            # memory-wide admin
    Principal("m1", Role.WRITER, "user:alice"),      # a role above reader, no token
    Principal(None, Role.ADMIN, "owner"),            # the owner itself
    Principal("m1", Role.READER, "user:bob"),        # another scope
])
def test_a_reader_token_cannot_become_a_wider_principal(world, wider):
    _, _, as_token = world
    with pytest.raises(PermissionDenied):
        as_token["alice_reader"].as_principal(wider)


def test_the_owner_may_still_act_as_any_principal(world):
    _, owner, _ = world
    bob = owner.as_principal(Principal("m1", Role.WRITER, "user:bob"))
    assert bob.principal.scope == "user:bob"
