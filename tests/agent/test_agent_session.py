"""Session: the pinned block (byte-identical until re-activation) and turn capture."""

from __future__ import annotations

import pytest
from conftest import AGENT, OTHER, USER

from remem.agent import MemoryTools, Session
from remem.errors import InvalidInput


@pytest.fixture
def session(seeded):
    memory, _ = seeded
    s = Session(memory, user_scope=USER, agent_scope=AGENT, conversation_id="c1")
    s.activate()
    return s


def test_the_pinned_block_holds_the_agent_and_the_users_profile(session):
    block = session.prompt()
    for text in ("Botty, a travel assistant", "Answer in two sentences at most.",
                 "Convert miles to kilometres", "Confirm travel dates", '"Paris"',
                 '"vegetarian"', "### Identity", "### Rules", "### Skills", "### Lessons",
                 "### Profile", "### Preferences"):
        assert text in block
    assert block.index(f"## Agent {AGENT}") < block.index(f"## User {USER}")
    assert "Rex" not in block and "Fido" not in block  # facts are recalled per step


def test_the_pinned_block_is_byte_identical_across_steps(session, seeded):
    memory, ids = seeded
    first = session.prompt().encode()
    memory.remember(USER, "seat", "aisle", kind="preference")
    memory.remember(USER, "home_city", "Lyon", kind="profile_slot")
    memory.remember(AGENT, "packing", "Suggest a packing list for hikes.", kind="skill")
    memory.archive(ids[(AGENT, "booking_lesson")])
    for _ in range(3):
        assert session.prompt().encode() == first


def test_the_pinned_block_changes_after_reactivation(session, seeded):
    memory, _ = seeded
    before = session.prompt()
    memory.remember(USER, "home_city", "Lyon", kind="profile_slot")
    memory.remember(AGENT, "packing", "Suggest a packing list for hikes.", kind="skill")
    assert session.prompt() == before
    old = session.activation_id
    assert session.activate() != old
    after = session.prompt()
    assert after != before
    assert '"Lyon"' in after and '"Paris"' not in after and "packing list" in after
    assert session.prompt() == after


def test_reactivation_without_changes_renders_the_same_bytes(session):
    before = session.prompt()
    session.activate()
    assert session.prompt() == before


def test_a_forgotten_item_leaves_the_pinned_block(session, seeded):
    memory, ids = seeded
    before = session.prompt()
    tools = MemoryTools(memory, user_scope=USER, agent_scope=AGENT)
    assert tools.call("ForgetMemory", {"key": "diet"})["ok"]
    memory.forget(ids[(AGENT, "unit_conversion")])  # an owner edit of the agent
    after = session.prompt()
    assert "vegetarian" not in after and "Convert miles" not in after
    assert after != before
    assert "Answer in two sentences" in after


def test_prompt_activates_on_first_use(seeded):
    memory, _ = seeded
    s = Session(memory, user_scope=USER, agent_scope=AGENT)
    assert s.activation_id is None
    block = s.prompt()
    assert s.activation_id and block == s.prompt()


def test_a_session_without_an_agent_pins_the_users_profile(seeded):
    memory, _ = seeded
    block = Session(memory, user_scope=USER).prompt()
    assert '"Paris"' in block and "Botty" not in block


def test_each_turn_is_captured_once_after_it_is_persisted(session, seeded):
    memory, _ = seeded
    out = session.capture_turn("user", "I live in Berlin now.", turn_id="t1")
    assert out["position"] == 1 and [r["source_id"] for r in out["captured"]] == ["t1"]
    out = session.capture_turn("assistant", "Noted, Berlin it is.", turn_id="t2")
    assert out["position"] == 2 and [r["source_id"] for r in out["captured"]] == ["t2"]
    assert out["skipped"] == 1  # the anchor turn, already captured
    out = session.capture_turn("user", "And I am vegan now.")
    assert out["position"] == 3 and len(out["captured"]) == 1
    for turn in session.turns:
        src = memory.store.source(memory.id, turn["id"])
        assert src["text"] == turn["text"] and src["scope"] == USER
        assert src["run_id"] == "chat:c1"
    assert memory.inspect(USER, "home_city").value == "Berlin"  # derived from the user's turn
    assert session.prompt().count("Paris") == 1  # pinned until re-activation


def test_a_new_session_of_the_same_conversation_continues_the_cursor(session, seeded):
    memory, _ = seeded
    session.capture_turn("user", "Hello there.", turn_id="t1")
    again = Session(memory, user_scope=USER, agent_scope=AGENT, conversation_id="c1")
    out = again.capture_turn("user", "Still here.", turn_id="t2")
    assert out["position"] == 2 and [r["source_id"] for r in out["captured"]] == ["t2"]


def test_only_user_and_assistant_turns_are_captured(session):
    with pytest.raises(InvalidInput, match="capture user or assistant"):
        session.capture_turn("tool", '{"ok": true}')
    assert session.turns == []


def test_a_refused_turn_does_not_block_later_turns(session):
    with pytest.raises(InvalidInput):
        session.capture_turn("user", "x" * 20_000)
    assert session.capture_turn("user", "short one")["position"] == 1


def test_the_session_never_pins_another_users_memory(seeded):
    memory, _ = seeded
    memory.remember(OTHER, "diet", "carnivore", kind="preference")
    block = Session(memory, user_scope=USER, agent_scope=AGENT).prompt()
    assert "carnivore" not in block and OTHER not in block
