"""Hypothesis properties of the pure decision, folded with ``domain.fold.Projection``.

1. Deciding the same candidate twice gives NOOP ("duplicate", provenance only) the second time.
2. A single key never has two current items (nor a current item beside an open conflict),
   whatever sequence of writes and owner operations it sees.
3. valid_at order, not arrival order, decides what is current.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from keyledger import KeyLedger, day

from remem.domain import operations as ops
from remem.domain.canonical import normalize_value
from remem.domain.decision import Judgement
from remem.domain.model import Authority, Outcome, Verdict
from remem.errors import RememError

#: REMEM_HYPOTHESIS_EXAMPLES=5000 for a deeper local run; the suite default stays fast.
SETTINGS = settings(max_examples=int(os.environ.get("REMEM_HYPOTHESIS_EXAMPLES", "150")),
                    deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

# "paris" and "PARIS " are the same claim as "Paris": restatements must be recognised.
VALUES = ["Paris", "Rome", "Oslo", "paris", "PARIS "]
AUTHORITIES = [Authority.OWNER, Authority.ASSERT, Authority.AUTOMATIC]
VERDICTS = [None, Verdict.SUPERSEDE, Verdict.MERGE, Verdict.NOOP, Verdict.CONFLICT, Verdict.ADD]


@dataclass(frozen=True)
class Write:
    value: str
    valid_day: int
    authority: Authority
    verdict: Verdict | None

    def judgement(self) -> Judgement | None:
        if self.authority is not Authority.AUTOMATIC or self.verdict is None:
            return None
        return Judgement(self.verdict)


writes = st.builds(Write, st.sampled_from(VALUES), st.integers(0, 12),
                   st.sampled_from(AUTHORITIES), st.sampled_from(VERDICTS))


def _do(led: KeyLedger, w: Write):
    return led.decide(w.value, valid_at=day(w.valid_day), authority=w.authority,
                      judgement=w.judgement())


# --- 1. the same candidate twice -----------------------------------------------------------


@SETTINGS
@given(history=st.lists(writes, max_size=8), again=writes,
       key=st.sampled_from(["home_city", "languages"]))
def test_deciding_the_same_candidate_twice_is_a_noop_the_second_time(history, again, key):
    led = KeyLedger(key)
    for w in history:
        _do(led, w)
    first = _do(led, again)
    items_before = set(led.projection.items)
    revision_before = led.state().revision
    second = _do(led, again)
    assert second.outcome is Outcome.DUPLICATE, (first.outcome, second.outcome)
    assert [e.type.value for e in second.events] == ["provenance.added"]
    assert not second.new_item
    assert set(led.projection.items) == items_before
    assert led.state().revision == revision_before


# --- 2. at most one current item on a single key ---------------------------------------------


@dataclass(frozen=True)
class Step:
    """A write or an owner operation; ``pick`` chooses an item deterministically."""

    op: str
    write: Write
    pick: int


steps = st.builds(Step, st.sampled_from(["write", "write", "write", "correct", "archive",
                                         "restore", "resolve", "forget"]),
                  writes, st.integers(0, 50))


def _run(led: KeyLedger, step: Step) -> None:
    state = led.state()
    items = sorted(state.items, key=lambda i: i.item_id)
    chosen = items[step.pick % len(items)] if items else None
    try:
        if step.op == "write":
            _do(led, step.write)
        elif step.op == "correct":
            led.decide(step.write.value, authority=Authority.CORRECTION,
                       expected_revision=state.revision, valid_at=day(step.write.valid_day))
        elif chosen is None:
            return
        elif step.op == "archive":
            led.operate(ops.archive(state, chosen.item_id))
        elif step.op == "restore":
            led.operate(ops.restore(state, chosen.item_id,
                                    led.rec(chosen.item_id).prior_status))
        elif step.op == "resolve" and chosen.conflict_group:
            led.operate(ops.resolve_conflict(state, chosen.conflict_group, chosen.item_id))
        elif step.op == "forget":
            led.operate(ops.forget(state, [chosen.item_id]))
    except RememError:
        pass  # refused operations (restore of a live item, ...) change nothing


def _check_single_key_invariants(led: KeyLedger) -> None:
    current = led.with_status("current")
    conflict = led.with_status("conflict")
    assert len(current) <= 1, [(r.item_id, r.status) for r in led.records()]
    assert not (current and conflict), "a current item beside an open conflict"
    assert len({r.conflict_group for r in conflict}) <= 1
    assert all(r.conflict_group for r in conflict)


@SETTINGS
@given(st.lists(steps, min_size=1, max_size=25))
def test_a_single_key_never_has_two_current_items(sequence):
    led = KeyLedger("home_city")
    for step in sequence:
        _run(led, step)
        _check_single_key_invariants(led)


@SETTINGS
@given(st.lists(steps, min_size=1, max_size=25))
def test_the_revision_never_goes_backwards_and_each_event_names_a_valid_revision(sequence):
    led = KeyLedger("home_city")
    last = 0
    for step in sequence:
        _run(led, step)
        rev = led.state().revision
        assert rev >= last
        last = rev
    assert all(e["data"].get("revision", 0) <= last for e in led.events)


# --- 3. valid_at order, not arrival order ----------------------------------------------------


@st.composite
def statements_and_order(draw):
    days = draw(st.lists(st.integers(0, 1000), min_size=1, max_size=7, unique=True))
    values = draw(st.lists(st.sampled_from(VALUES), min_size=len(days), max_size=len(days)))
    stmts = list(zip(values, days, strict=True))
    return stmts, draw(st.permutations(stmts))


@SETTINGS
@given(statements_and_order())
def test_valid_at_order_not_arrival_order_decides_what_is_current(data):
    stmts, arrival = data
    led = KeyLedger("home_city")
    for value, d in arrival:
        led.decide(value, valid_at=day(d), authority=Authority.OWNER)
    latest_value = max(stmts, key=lambda s: s[1])[0]
    current = led.current_values()
    assert len(current) == 1
    assert normalize_value(current[0]) == normalize_value(latest_value), arrival


@SETTINGS
@given(statements_and_order())
def test_every_arrival_order_ends_in_the_same_current_claim(data):
    stmts, arrival = data
    a, b = KeyLedger("home_city"), KeyLedger("home_city")
    for value, d in stmts:
        a.decide(value, valid_at=day(d))
    for value, d in arrival:
        b.decide(value, valid_at=day(d))
    claims = [{r.claim_id for r in led.with_status("current")} for led in (a, b)]
    assert claims[0] == claims[1]
