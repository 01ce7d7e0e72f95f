"""The ledger chain in the domain: ``chain`` builds what stores insert, ``chain_breaks`` /
``verify_chain`` report every kind of damage as a broken link and never raise. The fixture
``tests/fixtures/ledger_v1.json`` was written by the stores before issue 12 moved hashing
out of them: it must verify unchanged and ``chain`` must reproduce its hashes byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from remem.domain.events import Event, EventType
from remem.domain.ledger import (
    EMPTY,
    ChainBreak,
    chain,
    chain_breaks,
    encode_data,
    event_hash,
    verify_chain,
)
from remem.domain.sourcelog import check_sources, recorded_entries
from remem.errors import HeadMoved

FIXTURE = json.loads((Path(__file__).parents[1] / "fixtures" / "ledger_v1.json").read_text())


def _rows() -> list[dict]:
    """The fixture's ledger rows as a store reads them (data is the stored JSON text)."""
    return [{**r, "memory": r["memory_id"]} for r in FIXTURE["ledger"]]


def _events(n: int = 5) -> list[Event]:
    return [Event(EventType.KEY_DECLARED, {"key": f"k{i}", "cardinality": "single",
                                           "on_change": "supersede"}) for i in range(n)]


def _stored_rows(n: int = 5) -> list[dict]:
    stored = chain(_events(n), EMPTY, memory_id="m1", actor="owner",
                   at="2024-01-01T00:00:00.000000Z")
    return [{**r, "data": encode_data(r["data"])} for r in stored]


# --- compatibility with databases written before the move --------------------------------


def test_a_ledger_written_by_the_old_stores_verifies_unchanged():
    rows = _rows()
    assert len(rows) == 13
    assert verify_chain(rows) is None and chain_breaks(rows) == []


def test_chain_reproduces_the_old_stores_hashes_and_stored_json_byte_for_byte():
    rows = _rows()
    head = EMPTY
    for r in rows:
        data = json.loads(r["data"])
        ev = Event(EventType(r["type"]), {k: v for k, v in data.items() if k != "v"})
        [stored] = chain([ev], head, memory_id=r["memory_id"], actor=r["actor"], at=r["at"])
        assert (stored["seq"], stored["prev_hash"], stored["hash"]) == (
            r["seq"], r["prev_hash"], r["hash"])
        assert encode_data(stored["data"]) == r["data"]
        head = (stored["seq"], stored["hash"])


def test_the_old_source_chain_verifies_unchanged():
    rows = [{**r, "memory": r["memory_id"], "salt": bytes.fromhex(r["salt"])}
            for r in FIXTURE["sources"]]
    recorded = recorded_entries(r["data"] for r in FIXTURE["ledger"]
                                if r["type"] == "source.recorded")
    rep = check_sources(rows, recorded)
    assert rep == {"sources_ok": True, "sources": 2, "sources_broken": None,
                   "sources_breaks": []}


# --- chain ------------------------------------------------------------------------------


def test_chain_numbers_after_the_head_and_links_each_hash_to_the_previous():
    first = chain(_events(2), EMPTY, memory_id="m1", actor="owner", at="t")
    assert [r["seq"] for r in first] == [1, 2]
    assert first[0]["prev_hash"] == "0" * 64 and first[1]["prev_hash"] == first[0]["hash"]
    more = chain(_events(1), (2, first[1]["hash"]), memory_id="m1", actor="owner", at="t",
                 expected_seq=2)
    assert more[0]["seq"] == 3 and more[0]["prev_hash"] == first[1]["hash"]
    assert more[0]["hash"] == event_hash(first[1]["hash"], more[0])


def test_chain_refuses_a_moved_head():
    with pytest.raises(HeadMoved) as exc:
        chain(_events(1), (4, "a" * 64), memory_id="m1", actor="owner", at="t", expected_seq=3)
    assert exc.value.retryable


# --- every kind of damage is a broken link with its position -------------------------------


def test_unparsable_event_json_is_a_broken_link_not_an_exception():
    rows = _stored_rows(4)
    rows[2]["data"] = rows[2]["data"].replace("{", "[", 1)  # one byte: no longer parses
    brk = verify_chain(rows)
    assert brk == ChainBreak(3, "event data is not valid JSON (altered bytes)", 3)


def test_a_deleted_row_names_the_missing_seq():
    rows = _stored_rows(5)
    del rows[1]
    breaks = chain_breaks(rows)
    assert [(b.seq, b.position) for b in breaks] == [(3, 2)]
    assert "seq 2 missing" in breaks[0].reason


def test_swapped_seqs_break_at_the_first_swapped_position():
    rows = _stored_rows(5)
    rows[1]["seq"], rows[2]["seq"] = 3, 2
    rows[1], rows[2] = rows[2], rows[1]  # read back in seq order
    brk = verify_chain(rows)
    assert brk is not None and (brk.seq, brk.position) == (2, 2)


def test_duplicated_and_out_of_order_seqs_are_reported():
    rows = _stored_rows(3)
    dup = rows[:2] + [dict(rows[1])] + rows[2:]
    assert "duplicated or out of order" in verify_chain(dup).reason
    assert verify_chain(dup).position == 3


def test_a_changed_hash_breaks_its_own_link_and_the_next():
    rows = _stored_rows(4)
    rows[1]["hash"] = "f" * 64
    breaks = chain_breaks(rows)
    assert [(b.seq, b.reason) for b in breaks] == [
        (2, "hash does not match the event's content"),
        (3, "prev_hash does not match the previous event's hash")]


def test_independent_damage_further_on_is_reported_too():
    rows = _stored_rows(6)
    rows[1]["data"] = "{not json"
    rows[4]["actor"] = "mallory"
    assert [b.seq for b in chain_breaks(rows)] == [2, 5]


@pytest.mark.parametrize(("field", "value", "reason"), [
    ("seq", "abc", "seq 'abc' is not an integer"),
    ("seq", None, "seq None is not an integer"),
    ("prev_hash", "zz" * 32, "prev_hash does not match the previous event's hash"),
    ("hash", None, "field 'hash' is missing or not text"),
    ("data", "[1, 2]", "event data is not a JSON object"),
    ("data", '{"v": NaN}', "event cannot be hashed (InvalidInput)"),
])
def test_fields_of_the_wrong_type_are_broken_links(field, value, reason):
    rows = _stored_rows(3)
    rows[1][field] = value
    brk = verify_chain(rows)
    assert brk is not None and brk.position == 2 and brk.reason == reason


def test_a_non_hex_prev_hash_on_the_first_row_does_not_raise():
    rows = _stored_rows(2)
    rows[0]["prev_hash"] = "not hex"
    assert verify_chain(rows).reason == "prev_hash does not match the previous event's hash"


def test_the_list_of_breaks_is_capped_but_the_walk_reads_every_row():
    rows = [{**r, "actor": "x"} for r in _stored_rows(30)]
    seen = []

    def walk():
        for r in rows:
            seen.append(r["seq"])
            yield r

    assert len(chain_breaks(walk(), limit=5)) == 5 and len(seen) == 30


@settings(max_examples=200, deadline=None)
@given(st.lists(st.dictionaries(
    st.sampled_from(["memory", "seq", "type", "data", "actor", "at", "prev_hash", "hash"]),
    st.one_of(st.none(), st.integers(), st.text(max_size=8), st.binary(max_size=8),
              st.floats(allow_nan=True), st.lists(st.integers(), max_size=2))),
    max_size=6))
def test_verify_never_raises_whatever_the_rows_hold(rows):
    breaks = chain_breaks(rows)
    assert all(isinstance(b, ChainBreak) for b in breaks)
    assert (verify_chain(rows) is None) == (not breaks)


# --- the source chain --------------------------------------------------------------------


def test_source_rows_of_the_wrong_type_and_unparsable_ledger_data_do_not_raise():
    rows = [{**r, "memory": r["memory_id"], "salt": bytes.fromhex(r["salt"])}
            for r in FIXTURE["sources"]]
    bad = [dict(rows[0], sequence="one"), rows[1]]
    rep = check_sources(bad, {})
    assert rep["sources_ok"] is False and "not an integer" in rep["sources_broken"]["reason"]
    bad = [dict(rows[0], salt="not bytes"), rows[1]]
    assert check_sources(bad, {})["sources_broken"]["reason"] == "text or salt has the wrong type"
    bad = [dict(rows[0], prev_hash="zz"), rows[1]]
    assert check_sources(bad, {})["sources_broken"]["sequence"] == 1
    assert recorded_entries(["{broken", '{"source_id": 3}', None, "[]"]) == {}
    rep = check_sources(rows, recorded_entries(["{broken"]))
    assert rep["sources_broken"]["reason"] == (
        "entry does not match its source.recorded ledger event")


def test_every_broken_source_link_is_listed_each_run_and_each_unmatched_event():
    rows = [{**r, "memory": r["memory_id"], "salt": bytes.fromhex(r["salt"])}
            for r in FIXTURE["sources"]]
    recorded = recorded_entries(r["data"] for r in FIXTURE["ledger"]
                                if r["type"] == "source.recorded")
    other_run = {**rows[1], "run_id": "r2", "source_id": "turn-9", "sequence": 1}
    damaged = [dict(rows[0], text="changed"), rows[1], other_run]
    rep = check_sources(damaged, {**recorded, "ghost": {"run_id": "r3", "sequence": 1}})
    assert [(b["run_id"], b["source_id"], b["reason"]) for b in rep["sources_breaks"]] == [
        ("r1", "turn-1", "text does not match the committed digest"),
        ("r2", "turn-9", "prev_hash does not match the previous entry's hash"),
        ("r3", "ghost", "the ledger records this source but its row is missing")]
    assert rep["sources_broken"] == rep["sources_breaks"][0]
