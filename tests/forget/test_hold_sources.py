"""A legal hold keeps the evidence of the held fact: forgetting another user's equal value
(which redacts every covered source containing it) leaves the held fact's source text, and the
report says so (``partial``, sources ``blocked``, with the reason), on SQLite and PostgreSQL.
Found by the round-5 probe (tests/security/test_probe5_hold_sources.py)."""

from __future__ import annotations

import pytest

from tests.contract.conftest import mem, remem_store  # noqa: F401 - fixtures for both backends


def _bob_held(mem):  # noqa: F811
    mem.observe("user:bob", "I live in Lyon.", source_id="b1")
    [item] = [i for i in mem.items(scope="user:bob").items if i.key == "home_city"]
    mem.set_legal_hold(item.item_id, True)
    return item


def test_forgetting_an_equal_value_keeps_the_held_facts_source(mem):  # noqa: F811
    held = _bob_held(mem)
    alice = mem.remember("user:alice", "home_city", "Lyon")
    report = mem.forget(alice.item_id).to_dict()
    assert report["state"] == "partial"
    assert report["surfaces"]["sources"]["state"] == "blocked"
    assert "legal hold" in report["reason"]
    assert held.source_id not in report["sources"]
    assert mem.store.source(mem.id, held.source_id)["text"] == "I live in Lyon."
    assert [i.value for i in mem.items(scope="user:bob").items] == ["Lyon"]


def test_after_the_hold_is_released_the_source_is_erased(mem):  # noqa: F811
    held = _bob_held(mem)
    mem.set_legal_hold(held.item_id, False)
    alice = mem.remember("user:alice", "home_city", "Lyon")
    report = mem.forget(alice.item_id).to_dict()
    assert report["state"] == "completed"
    assert held.source_id in report["sources"]
