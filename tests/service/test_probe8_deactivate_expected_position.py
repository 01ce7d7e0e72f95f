"""Round-8 probe: ``deactivate`` with ``expected_position`` but no turns ignored the guard:
a wrong cursor position answered 202 and brought consolidation forward, so a host that
meant to check its conversation's cursor was told nothing. ``expected_position`` guards the
capture of turns; without turns it is now ``invalid_input`` naming it, and nothing is done.
With turns it is checked as before. Both backends."""

from __future__ import annotations

import pytest
from service.kickside_kit import store  # noqa: F401

from remem.errors import CursorMismatch, InvalidInput

ALICE = "user:alice"


@pytest.fixture
def mem(store):
    return store.create_memory("m1")


def test_expected_position_without_turns_is_refused_and_does_nothing(mem):
    before = mem.store.job_scheduled("m1", "consolidate")["run_at"]
    for turns in (None, []):
        with pytest.raises(InvalidInput) as err:
            mem.deactivate(ALICE, "chat", "conv-1", turns, expected_position=7)
        assert err.value.details["field"] == "expected_position"
    assert mem.store.job_scheduled("m1", "consolidate")["run_at"] == before


def test_expected_position_with_turns_is_still_checked(mem):
    turns = [{"id": "t1", "role": "user", "text": "I like jazz."}]
    with pytest.raises(CursorMismatch):
        mem.deactivate(ALICE, "chat", "conv-1", turns, expected_position=5)
    out = mem.deactivate(ALICE, "chat", "conv-1", turns, expected_position=0)
    assert out["captured"]["position"] == 1
