"""Agent-integration fixtures: a memory seeded with an agent and two users."""

from __future__ import annotations

import pytest

USER, OTHER, AGENT = "user:alice", "user:bob", "agent:bot"


@pytest.fixture
def seeded(memory):
    """Memory ``m1``: the agent's identity, rule, skill and lesson; Alice's profile slot,
    preference and facts; one fact of Bob's. Returns ``(memory, ids)`` with ids by key."""
    ids = {}
    for scope, key, value, kind in [
        (AGENT, "persona", "Botty, a travel assistant", "identity"),
        (AGENT, "tone", "Answer in two sentences at most.", "rule"),
        (AGENT, "unit_conversion", "Convert miles to kilometres by multiplying by 1.609.",
         "skill"),
        (AGENT, "booking_lesson", "Confirm travel dates before booking anything.", "lesson"),
        (USER, "home_city", "Paris", "profile_slot"),
        (USER, "diet", "vegetarian", "preference"),
        (USER, "dog_name", "Rex", "fact"),
        (USER, "favourite_hike", "Tour du Mont Blanc", "fact"),
        (OTHER, "dog_name", "Fido", "fact"),
    ]:
        ids[(scope, key)] = memory.remember(scope, key, value, kind=kind).item_id
    return memory, ids
