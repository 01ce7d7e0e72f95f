"""``verify`` on a tampered database, the same on SQLite and PostgreSQL: every kind of damage
is a broken link with its position, another memory stays ok, and nothing raises. The damage is
done with plain SQL on the real database, as someone holding the file or the server would."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

import remem

ALICE = "user:alice"


def _history(mem: remem.Memory) -> None:
    for day, city in enumerate(("Paris", "Rome", "Oslo", "Lima"), start=1):
        mem.remember(ALICE, "home_city", city, valid_at=datetime(2024, 1, day, tzinfo=UTC))


def _verify(store_url: str) -> dict:
    fresh = remem.open(store_url)  # another process would see the same
    try:
        return fresh.verify()
    finally:
        fresh.close()


@pytest.fixture
def two_memories(remem_store: remem.RememStore) -> None:
    _history(remem_store.create_memory("m1"))
    remem_store.create_memory("m2").remember(ALICE, "home_city", "Paris")


def _m1(rep: dict) -> dict:
    assert rep["ok"] is False and rep["memories"]["m2"]["ok"] is True
    return rep["memories"]["m1"]


def test_an_intact_store_reports_no_break(two_memories, store_url):
    rep = _verify(store_url)
    assert rep["ok"] and rep["memories"]["m1"]["breaks"] == []
    assert rep["memories"]["m1"]["events"] == 8 and rep["memories"]["m2"]["events"] == 2


def test_one_byte_that_makes_event_json_unparsable_is_reported_not_raised(
        two_memories, raw_sql, store_url):
    assert raw_sql("UPDATE ledger SET data = '[' || substr(data, 2) "
                   "WHERE memory_id='m1' AND seq=3") == 1
    m1 = _m1(_verify(store_url))
    assert m1["broken"] == {"seq": 3, "position": 3,
                            "reason": "event data is not valid JSON (altered bytes)"}
    assert m1["events"] == 8


def test_a_deleted_event_names_the_missing_seq(two_memories, raw_sql, store_url):
    assert raw_sql("DELETE FROM ledger WHERE memory_id='m1' AND seq=4") == 1
    m1 = _m1(_verify(store_url))
    assert (m1["broken"]["seq"], m1["broken"]["position"]) == (5, 4)
    assert "seq 4 missing" in m1["broken"]["reason"]
    assert len(m1["breaks"]) == 1 and m1["events"] == 7


def test_swapped_seqs_are_reported_at_the_first_swapped_position(two_memories, raw_sql,
                                                                 store_url):
    for stmt in ("UPDATE ledger SET seq=1000 WHERE memory_id='m1' AND seq=2",
                 "UPDATE ledger SET seq=2 WHERE memory_id='m1' AND seq=3",
                 "UPDATE ledger SET seq=3 WHERE memory_id='m1' AND seq=1000"):
        assert raw_sql(stmt) == 1
    m1 = _m1(_verify(store_url))
    assert (m1["broken"]["seq"], m1["broken"]["position"]) == (2, 2)


def test_a_changed_hash_breaks_its_link_and_the_next(two_memories, raw_sql, store_url):
    assert raw_sql("UPDATE ledger SET hash = CASE WHEN substr(hash, 1, 1) = '0' THEN '1' "
                   "ELSE '0' END || substr(hash, 2) WHERE memory_id='m1' AND seq=5") == 1
    m1 = _m1(_verify(store_url))
    assert [(b["seq"], b["position"]) for b in m1["breaks"]] == [(5, 5), (6, 6)]
    assert "hash does not match" in m1["breaks"][0]["reason"]
    assert "prev_hash" in m1["breaks"][1]["reason"]


def test_an_altered_source_row_and_unparsable_source_event_are_reported(
        remem_store, raw_sql, store_url):
    mem = remem_store.create_memory("m1")
    remem_store.create_memory("m2").remember(ALICE, "home_city", "Paris")
    for i in (1, 2, 3):
        mem.observe(ALICE, f"turn number {i}", source_id=f"turn-{i}", run_id="r")
    assert raw_sql("UPDATE sources SET text='I moved to Porto' WHERE memory_id='m1' AND "
                   "source_id='turn-2'") == 1
    m1 = _m1(_verify(store_url))
    assert m1["breaks"] == [] and m1["sources_ok"] is False
    # schema log entries (issue 16): sequence from 0; the text must equal the payload's
    assert m1["sources_broken"] == {"run_id": "r", "sequence": 1, "source_id": "turn-2",
                                    "reason": "text does not match the payload"}
    assert raw_sql("UPDATE sources SET text='turn number 2' WHERE memory_id='m1' AND "
                   "source_id='turn-2'") == 1
    assert _verify(store_url)["ok"]
    assert raw_sql("UPDATE ledger SET data = substr(data, 2) WHERE memory_id='m1' AND "
                   "type='source.recorded' AND data LIKE '%turn-3%'") == 1
    m1 = _m1(_verify(store_url))
    assert m1["broken"]["reason"] == "event data is not valid JSON (altered bytes)"
    assert m1["sources_broken"]["source_id"] == "turn-3"


def test_a_seq_that_is_not_a_number_is_reported_on_sqlite(two_memories, raw_sql, store_url,
                                                          backend):
    if backend != "sqlite":
        pytest.skip("PostgreSQL's bigint column cannot hold text")
    assert raw_sql("UPDATE ledger SET seq='abc' WHERE memory_id='m1' AND seq=8") == 1
    m1 = _m1(_verify(store_url))
    assert m1["broken"] == {"seq": None, "position": 8, "reason": "seq 'abc' is not an integer"}
