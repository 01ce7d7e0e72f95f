"""Every rule of DESIGN.md "Write path" on the pure ``decide`` (no database)."""

from __future__ import annotations

import json

import pytest
from keyledger import KeyLedger, day

from remem.domain import operations as ops
from remem.domain.decision import Judgement
from remem.domain.events import Event, EventType
from remem.domain.model import Authority, Cardinality, OnChange, Outcome, Verdict
from remem.errors import InvalidInput, NotFound, RevisionMismatch

OWNER, ASSERT, AUTO, CORR = (Authority.OWNER, Authority.ASSERT, Authority.AUTOMATIC,
                             Authority.CORRECTION)


def types(decision) -> list[str]:
    return [e.type.value for e in decision.events]


# --- first statement, key declaration ------------------------------------------------------


def test_first_statement_declares_the_key_and_creates_a_current_item():
    led = KeyLedger("home_city")
    d = led.decide("Paris", valid_at=day(1))
    assert d.outcome is Outcome.CREATED
    assert types(d) == ["key.declared", "item.added"]
    assert d.events[0].data["cardinality"] == "single"
    assert d.revision == 1 and d.new_item
    assert led.current_values() == ["Paris"]
    assert led.state().revision == 1


def test_key_is_declared_once_and_keeps_its_cardinality():
    led = KeyLedger("allergies")
    first = led.decide("peanuts")
    assert first.events[0].data["cardinality"] == "multi"
    second = led.decide("shellfish", valid_at=day(1))
    assert "key.declared" not in types(second)
    # a later config saying otherwise does not change a declared key
    led.cardinality = Cardinality.SINGLE
    third = led.decide("gluten", valid_at=day(2))
    assert "key.declared" not in types(third)
    assert third.outcome is Outcome.CREATED
    assert sorted(led.current_values()) == ["gluten", "peanuts", "shellfish"]


def test_config_cardinality_applies_to_a_key_never_declared():
    led = KeyLedger("favourite_colours", cardinality=Cardinality.MULTI)
    d = led.decide("blue")
    assert d.events[0].data["cardinality"] == "multi"
    led.decide("green", valid_at=day(1))
    assert sorted(led.current_values()) == ["blue", "green"]


# --- seen again ----------------------------------------------------------------------------


@pytest.mark.parametrize("authority", [OWNER, ASSERT, AUTO])
def test_same_claim_already_current_is_seen_again_with_provenance(authority):
    led = KeyLedger()
    first = led.decide("Paris", valid_at=day(1))
    before = led.rec(first.item_id)
    again = led.decide("  PARIS ", valid_at=day(2), authority=authority, source_id="src-2")
    assert again.outcome is Outcome.DUPLICATE
    assert again.item_id == first.item_id and not again.new_item
    assert types(again) == ["provenance.added"]
    data = again.events[0].data
    assert data["item_id"] == first.item_id and data["source_id"] == "src-2"
    assert again.revision == first.revision == led.state().revision
    after = led.rec(first.item_id)
    assert after.seen_count == before.seen_count + 1
    assert after.last_confirmed_at > before.last_confirmed_at
    assert len(led.records()) == 1


def test_same_claim_in_history_covering_the_same_world_time_is_seen_again():
    led = KeyLedger()
    paris = led.decide("Paris", valid_at=day(1))
    led.decide("Rome", valid_at=day(10))
    again = led.decide("paris", valid_at=day(5))  # Paris held from day 1 to day 10
    assert again.outcome is Outcome.DUPLICATE and again.item_id == paris.item_id
    assert led.current_values() == ["Rome"]
    assert len(led.records()) == 2


# --- single key: owner supersedes, later valid_at wins ---------------------------------------


def test_owner_remember_supersedes_the_current_value():
    led = KeyLedger()
    paris = led.decide("Paris", valid_at=day(1))
    rome = led.decide("Rome", valid_at=day(2))
    assert rome.outcome is Outcome.SUPERSEDED
    assert types(rome) == ["item.added", "item.superseded"]
    old = led.rec(paris.item_id)
    assert old.status == "superseded"
    assert old.superseded_by == rome.item_id
    assert old.invalid_at == led.rec(rome.item_id).valid_at
    assert led.current_values() == ["Rome"]
    assert rome.revision == 2


@pytest.mark.parametrize("authority", [OWNER, ASSERT, AUTO])
def test_an_older_statement_is_stored_as_stale_history_never_current(authority):
    led = KeyLedger()
    rome = led.decide("Rome", valid_at=day(10))
    old = led.decide("Paris", valid_at=day(1), authority=authority,
                     judgement=Judgement(Verdict.SUPERSEDE))
    assert old.outcome is Outcome.STALE
    assert old.new_item
    rec = led.rec(old.item_id)
    assert rec.status == "superseded"
    assert rec.superseded_by == rome.item_id
    assert rec.valid_at < rec.invalid_at == led.rec(rome.item_id).valid_at
    assert led.current_values() == ["Rome"]
    assert led.state().revision == 2  # history is still a revision of the key


def test_the_later_valid_at_wins_whatever_the_arrival_order():
    forward, backward = KeyLedger(), KeyLedger()
    forward.decide("Paris", valid_at=day(1))
    forward.decide("Rome", valid_at=day(2))
    backward.decide("Rome", valid_at=day(2))
    backward.decide("Paris", valid_at=day(1))
    assert forward.current_values() == backward.current_values() == ["Rome"]


def test_a_restatement_at_a_later_world_time_keeps_newer_truth_current():
    # Paris on day 1, Paris again on day 3, then a report that it was Rome on day 2:
    # the newest observation (day 3) says Paris, so Rome is history.
    led = KeyLedger()
    led.decide("Paris", valid_at=day(1))
    assert led.decide("Paris", valid_at=day(3)).outcome is Outcome.DUPLICATE
    rome = led.decide("Rome", valid_at=day(2))
    assert rome.outcome is Outcome.STALE
    assert led.current_values() == ["Paris"]


# --- multi key -------------------------------------------------------------------------------


@pytest.mark.parametrize("authority", [OWNER, ASSERT, AUTO])
def test_multi_key_adds_every_distinct_value(authority):
    led = KeyLedger("languages")
    outcomes = [led.decide(v, valid_at=day(i), authority=authority).outcome
                for i, v in enumerate(["French", "German", "Basque"])]
    assert outcomes == [Outcome.CREATED] * 3
    assert sorted(led.current_values()) == ["Basque", "French", "German"]
    assert led.state().revision == 3
    assert led.decide("french", valid_at=day(9)).outcome is Outcome.DUPLICATE


# --- conflicts ----------------------------------------------------------------------------


def test_assert_of_a_different_value_records_a_conflict_with_both_items():
    led = KeyLedger()
    paris = led.decide("Paris", valid_at=day(1), authority=ASSERT)
    rome = led.decide("Rome", valid_at=day(2), authority=ASSERT)
    assert rome.outcome is Outcome.CONFLICT
    assert types(rome) == ["item.added", "item.conflicted"]
    data = rome.events[-1].data
    assert data["item_ids"] == [paris.item_id, rome.item_id]
    assert data["group_id"] == rome.conflict_group
    assert {r.status for r in led.records()} == {"conflict"}
    assert {r.conflict_group for r in led.records()} == {rome.conflict_group}
    assert led.current_values() == []


def test_owner_on_a_conflict_policy_key_conflicts_instead_of_superseding():
    led = KeyLedger(on_change=OnChange.CONFLICT)
    led.decide("Paris", valid_at=day(1))
    assert led.decide("Rome", valid_at=day(2)).outcome is Outcome.CONFLICT


def test_a_third_value_joins_the_same_conflict_group():
    led = KeyLedger()
    a = led.decide("Paris", valid_at=day(1), authority=ASSERT)
    b = led.decide("Rome", valid_at=day(2), authority=ASSERT)
    c = led.decide("Oslo", valid_at=day(3), authority=ASSERT)
    assert c.outcome is Outcome.CONFLICT
    assert c.conflict_group == b.conflict_group
    assert c.events[-1].data["item_ids"] == [a.item_id, b.item_id, c.item_id]
    members = led.with_status("conflict")
    assert len(members) == 3 and {m.conflict_group for m in members} == {b.conflict_group}


def test_a_conflicting_value_seen_again_stays_in_the_group():
    led = KeyLedger()
    led.decide("Paris", valid_at=day(1), authority=ASSERT)
    rome = led.decide("Rome", valid_at=day(2), authority=ASSERT)
    again = led.decide("rome", valid_at=day(3), authority=ASSERT)
    assert again.outcome is Outcome.DUPLICATE and again.item_id == rome.item_id
    assert len(led.with_status("conflict")) == 2


def test_an_owner_statement_ends_the_conflict_by_superseding_the_whole_group():
    led = KeyLedger()
    led.decide("Paris", valid_at=day(1), authority=ASSERT)
    group = led.decide("Rome", valid_at=day(2), authority=ASSERT).conflict_group
    oslo = led.decide("Oslo", valid_at=day(3))
    assert oslo.outcome is Outcome.SUPERSEDED
    sup = [e.data for e in oslo.events if e.type is EventType.ITEM_SUPERSEDED]
    assert len(sup) == 2 and all(s["resolved_conflict"] == group for s in sup)
    assert led.current_values() == ["Oslo"] and not led.with_status("conflict")


# --- automatic writes: the judge chooses where the rules leave a choice ---------------------


def test_automatic_supersede_verdict_supersedes():
    led = KeyLedger()
    led.decide("Paris", valid_at=day(1))
    d = led.decide("Rome", valid_at=day(2), authority=AUTO,
                   judgement=Judgement(Verdict.SUPERSEDE))
    assert d.outcome is Outcome.SUPERSEDED and led.current_values() == ["Rome"]


def test_automatic_merge_verdict_folds_the_old_item_into_the_new_one():
    led = KeyLedger()
    paris = led.decide("Paris", valid_at=day(1))
    d = led.decide("Paris, France", valid_at=day(2), authority=AUTO,
                   judgement=Judgement(Verdict.MERGE))
    assert d.outcome is Outcome.MERGED
    assert types(d) == ["item.added", "item.merged"]
    assert d.events[-1].data == {"scope": "user:alice", "key": "home_city", "revision": 2,
                                 "item_ids": [paris.item_id], "into": d.item_id}
    assert led.rec(paris.item_id).status == "superseded"
    assert led.rec(paris.item_id).superseded_by == d.item_id
    assert led.current_values() == ["Paris, France"]


def test_automatic_noop_verdict_records_provenance_only():
    led = KeyLedger()
    paris = led.decide("Paris", valid_at=day(1))
    d = led.decide("Paris (the capital)", valid_at=day(2), authority=AUTO,
                   judgement=Judgement(Verdict.NOOP))
    assert d.outcome is Outcome.DUPLICATE and d.item_id == paris.item_id
    assert types(d) == ["provenance.added"] and not d.new_item
    assert led.current_values() == ["Paris"] and len(led.records()) == 1


def test_automatic_conflict_verdict_records_a_conflict():
    led = KeyLedger()
    led.decide("Paris", valid_at=day(1))
    d = led.decide("Rome", valid_at=day(2), authority=AUTO,
                   judgement=Judgement(Verdict.CONFLICT))
    assert d.outcome is Outcome.CONFLICT and len(led.with_status("conflict")) == 2


@pytest.mark.parametrize(("policy", "outcome"), [(None, Outcome.SUPERSEDED),
                                                 (OnChange.SUPERSEDE, Outcome.SUPERSEDED),
                                                 (OnChange.CONFLICT, Outcome.CONFLICT)])
def test_automatic_without_a_judge_follows_the_keys_on_change_policy(policy, outcome):
    led = KeyLedger(on_change=policy)
    led.decide("Paris", valid_at=day(1), authority=AUTO)
    assert led.decide("Rome", valid_at=day(2), authority=AUTO).outcome is outcome


def test_automatic_on_a_multi_key_follows_a_verdict_that_names_an_item():
    led = KeyLedger("languages")
    fr = led.decide("French", valid_at=day(1))
    de = led.decide("German", valid_at=day(1))
    merged = led.decide("French (fluent)", valid_at=day(2), authority=AUTO,
                        judgement=Judgement(Verdict.MERGE, target=fr.item_id))
    assert merged.outcome is Outcome.MERGED
    assert led.rec(fr.item_id).status == "superseded"
    assert led.rec(de.item_id).status == "current"
    sup = led.decide("Swiss German", valid_at=day(3), authority=AUTO,
                     judgement=Judgement(Verdict.SUPERSEDE, target=de.item_id))
    assert sup.outcome is Outcome.SUPERSEDED
    assert led.rec(de.item_id).superseded_by == sup.item_id
    noop = led.decide("Deutsch (Schweiz)", valid_at=day(4), authority=AUTO,
                      judgement=Judgement(Verdict.NOOP, target=sup.item_id))
    assert noop.outcome is Outcome.DUPLICATE and noop.item_id == sup.item_id
    add = led.decide("Basque", valid_at=day(5), authority=AUTO,
                     judgement=Judgement(Verdict.ADD))
    assert add.outcome is Outcome.CREATED
    assert sorted(led.current_values()) == ["Basque", "French (fluent)", "Swiss German"]


def test_automatic_multi_key_verdict_with_an_unknown_target_adds():
    led = KeyLedger("languages")
    led.decide("French")
    d = led.decide("German", authority=AUTO, judgement=Judgement(Verdict.MERGE, target="nope"))
    assert d.outcome is Outcome.CREATED and len(led.current_values()) == 2


# --- corrections -------------------------------------------------------------------------


def test_correction_with_a_stale_revision_fails_naming_the_current_revision():
    led = KeyLedger()
    led.decide("Paris", valid_at=day(1))
    led.decide("Rome", valid_at=day(2))
    with pytest.raises(RevisionMismatch) as info:
        led.decide("Oslo", authority=CORR, expected_revision=1, apply=False)
    err = info.value
    assert err.details["current_revision"] == 2 and err.details["expected_revision"] == 1
    assert "current revision is 2" in err.message
    assert "home_city" in err.message
    assert led.current_values() == ["Rome"]


def test_correction_needs_an_expected_revision():
    led = KeyLedger()
    led.decide("Paris")
    with pytest.raises(InvalidInput) as info:
        led.decide("Rome", authority=CORR, apply=False)
    assert info.value.details["field"] == "expected_revision"


def test_correction_supersedes_and_takes_over_the_world_interval():
    led = KeyLedger()
    paris = led.decide("Paris", valid_at=day(1))
    d = led.decide("Rome", valid_at=day(30), authority=CORR, expected_revision=1)
    assert d.outcome is Outcome.CORRECTED and d.revision == 2
    old = led.rec(paris.item_id)
    assert old.status == "superseded" and old.correction and old.superseded_by == d.item_id
    assert old.invalid_at == old.valid_at  # the old value was never true
    assert led.rec(d.item_id).valid_at == old.valid_at
    assert led.current_values() == ["Rome"]


def test_correction_resolves_an_open_conflict():
    led = KeyLedger()
    led.decide("Paris", valid_at=day(1), authority=ASSERT)
    led.decide("Rome", valid_at=day(2), authority=ASSERT)
    d = led.decide("Oslo", authority=CORR, expected_revision=2)
    assert d.outcome is Outcome.CORRECTED
    assert led.current_values() == ["Oslo"] and not led.with_status("conflict")


def test_correction_to_one_of_the_conflicting_values_resolves_the_conflict():
    led = KeyLedger()
    led.decide("Paris", valid_at=day(1), authority=ASSERT)
    led.decide("Rome", valid_at=day(2), authority=ASSERT)
    d = led.decide("paris", authority=CORR, expected_revision=2)
    assert d.outcome is Outcome.CORRECTED
    assert led.current_values() == ["paris"]
    assert not led.with_status("conflict")
    assert led.state().revision == 3


def test_correction_of_a_multi_key_names_the_item_it_replaces():
    led = KeyLedger("languages")
    fr = led.decide("French")
    led.decide("German")
    with pytest.raises(InvalidInput) as info:
        led.decide("Dutch", authority=CORR, expected_revision=2, apply=False)
    assert info.value.details["field"] == "replaces"
    with pytest.raises(NotFound):
        led.decide("Dutch", authority=CORR, expected_revision=2, replaces="itm_nope",
                   apply=False)
    d = led.decide("Dutch", authority=CORR, expected_revision=2, replaces=fr.item_id)
    assert d.outcome is Outcome.CORRECTED
    assert sorted(led.current_values()) == ["Dutch", "German"]


# --- tombstones --------------------------------------------------------------------------


def _forgotten_paris() -> KeyLedger:
    led = KeyLedger()
    paris = led.decide("Paris", valid_at=day(1))
    led.operate(ops.forget(led.state(), [paris.item_id]))
    assert led.records() == []
    return led


@pytest.mark.parametrize("authority", [AUTO, ASSERT])
def test_a_forgotten_claim_is_never_learned_again_by_automatic_paths(authority):
    led = _forgotten_paris()
    for variant in ("Paris", " PARIS "):
        d = led.decide(variant, valid_at=day(5), authority=authority,
                       judgement=Judgement(Verdict.ADD))
        assert d.outcome is Outcome.FORGOTTEN
        assert d.events == () and d.item_id is None
    assert led.records() == []


def test_the_owner_may_restate_a_forgotten_claim():
    led = _forgotten_paris()
    d = led.decide("Paris", valid_at=day(5))
    assert d.outcome is Outcome.CREATED and led.current_values() == ["Paris"]


def test_a_tombstone_blocks_only_its_own_claim():
    led = _forgotten_paris()
    assert led.decide("Rome", valid_at=day(5), authority=AUTO).outcome is Outcome.CREATED


# --- events are text-free; decide is pure --------------------------------------------------


def test_no_value_or_quote_text_appears_in_any_event():
    secrets = ["Zanzibarcity", "Quxvillecity", "Florpton", "Wibbleshire"]
    led = KeyLedger()
    led.decide(secrets[0], valid_at=day(1), quote="I live in Zanzibarcity now")
    led.decide(secrets[1], valid_at=day(2), authority=ASSERT, quote="Quxvillecity is home")
    led.decide(secrets[0], valid_at=day(3), authority=ASSERT)
    led.decide(secrets[2], valid_at=day(0), quote="Florpton long ago")
    led.decide({"city": secrets[3], "n": 7}, authority=CORR,
               expected_revision=led.state().revision)
    multi = KeyLedger("likes")
    multi.decide("Wibbleshire tea", quote="I like Wibbleshire tea")
    dumped = json.dumps(led.events + multi.events).casefold()
    for word in secrets:
        assert word.casefold() not in dumped
    assert {e["type"] for e in led.events} >= {
        "key.declared", "item.added", "item.superseded", "item.conflicted",
        "provenance.added"}


def test_an_event_refuses_fields_outside_its_declared_set():
    with pytest.raises(ValueError):
        Event(EventType.ITEM_ADDED, {"item_id": "itm_1", "value": "Paris"})
    with pytest.raises(ValueError):
        Event(EventType.PROVENANCE_ADDED, {"item_id": "itm_1", "quote": "I live in Paris"})


def test_every_stored_event_carries_a_schema_version():
    led = KeyLedger()
    led.decide("Paris", valid_at=day(1))
    led.decide("Rome", valid_at=day(2))
    assert all(isinstance(e["data"]["v"], int) for e in led.events)


def test_decide_is_deterministic_and_does_not_touch_its_inputs():
    led = KeyLedger()
    led.decide("Paris", valid_at=day(1))
    state = led.state()
    cand = led.candidate("Rome", valid_at=day(2))
    from remem.domain.decision import decide

    args = dict(memory_id="m1", claim_secret=b"k" * 32, authority=OWNER, now=day(100), content_hash="c" * 64)
    first = decide(state, cand, **args)
    second = decide(state, cand, **args)
    assert first == second
    assert state == led.state()


def test_the_owner_restating_one_conflicting_value_settles_the_conflict():
    led = KeyLedger()
    led.decide("Paris", valid_at=day(1), authority=ASSERT)
    led.decide("Rome", valid_at=day(2), authority=ASSERT)
    d = led.decide("PARIS", valid_at=day(3))
    assert d.outcome is Outcome.SUPERSEDED
    assert led.current_values() == ["PARIS"] and not led.with_status("conflict")
