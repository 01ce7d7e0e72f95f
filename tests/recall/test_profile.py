"""The pinned profile: deterministic, byte-identical per activation, budgeted."""

from __future__ import annotations

import pytest

from remem import Authority
from remem.errors import InvalidInput, ResultLimitExceeded
from remem.providers.tokenizers import get_tokenizer

ALICE, BOT = "user:alice", "agent:bot"


def _seed(mem) -> None:
    mem.remember(BOT, "name", "Remy", kind="identity")
    mem.remember(BOT, "response_style", "Answer in short bullets", kind="rule")
    mem.remember(ALICE, "home_city", "Paris", kind="profile_slot")
    mem.remember(ALICE, "diet", "vegetarian", kind="preference")
    mem.remember(ALICE, "trip", "Went to Rome last May", kind="fact")  # not pinned


def test_profile_holds_identity_rules_slots_and_preferences_in_a_fixed_order(mem) -> None:
    _seed(mem)
    p = mem.profile([ALICE, BOT])
    assert [(i["kind"], i["key"]) for i in p.items] == [
        ("identity", "name"), ("rule", "response_style"), ("profile_slot", "home_city"),
        ("preference", "diet")]
    assert p.text.splitlines()[0] == "# Pinned profile (user:alice, agent:bot)"
    assert "Rome" not in p.to_json() and not p.truncated


def test_the_same_activation_is_byte_identical_and_a_new_one_re_renders(mem, rclock) -> None:
    _seed(mem)
    first = mem.profile([ALICE, BOT], activation_id="act-1")
    mem.remember(ALICE, "diet", "vegan", kind="preference")
    rclock.advance(seconds=5)
    again = mem.profile([ALICE, BOT], activation_id="act-1")
    assert again.to_json() == first.to_json() and again.replayed
    assert "vegetarian" in again.text
    fresh = mem.profile([ALICE, BOT], activation_id="act-2")
    assert "vegan" in fresh.text and "vegetarian" not in fresh.text
    assert mem.profile([ALICE, BOT]).to_json() == mem.profile([ALICE, BOT]).to_json()


def test_profile_excludes_conflicts_expired_and_foreign_scopes(mem, rclock) -> None:
    from datetime import timedelta

    mem.remember(ALICE, "editor", "vim", kind="preference")
    mem.remember(ALICE, "editor", "emacs", kind="preference", authority=Authority.ASSERT)
    mem.remember(ALICE, "mood", "tired", kind="preference",
                 valid_until=rclock.now() + timedelta(hours=1))
    mem.remember("user:bob", "diet", "vegan", kind="preference")
    assert [i["key"] for i in mem.profile(ALICE).items] == ["mood"]
    rclock.advance(hours=2)
    assert mem.profile(ALICE).items == []


def test_profile_budgets_in_bytes_or_tokens(mem) -> None:
    _seed(mem)
    for i in range(30):
        mem.remember(ALICE, f"likes_{i}", f"likes thing number {i}", kind="preference")
    small = mem.profile([ALICE, BOT], max_bytes=1024)
    assert len(small.to_json().encode()) <= 1024 and small.truncated
    assert small.items[1]["kind"] == "rule"
    tok = get_tokenizer("o200k_base")
    t = mem.profile([ALICE, BOT], budget_tokens=300)
    assert tok.count(t.to_json()) <= 300 and t.truncated
    with pytest.raises(InvalidInput):
        mem.profile(ALICE, budget_tokens=300, max_bytes=1000)
    with pytest.raises(ResultLimitExceeded):
        mem.profile([ALICE, BOT], budget_tokens=60)
