"""observe: immutable sources, hash-chained per run, idempotent by source id, verified."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from remem.errors import IdempotencyConflict, InvalidInput
from remem.stores.sqlite.erasure import redact_sources

ALICE = "user:alice"
AT = datetime(2024, 3, 1, 9, 30, tzinfo=UTC)


def test_the_same_source_id_and_bytes_give_the_same_record(mem) -> None:
    a = mem.observe(ALICE, "I moved to Lisbon", source_id="turn-1", run_id="chat-1",
                    occurred_at=AT)
    head = mem.status()["head_seq"]  # source.recorded + what derive formed from it
    b = mem.observe(ALICE, "I moved to Lisbon", source_id="turn-1", run_id="chat-1",
                    occurred_at=AT)
    assert not a.replayed and b.replayed
    assert (a.entry_hash, a.sequence, a.accepted_seq) == (b.entry_hash, b.sequence,
                                                          b.accepted_seq)
    assert mem.status()["head_seq"] == head  # the replay wrote nothing, extracted nothing


def test_the_same_source_id_with_different_bytes_is_an_idempotency_conflict(mem) -> None:
    mem.observe(ALICE, "I moved to Lisbon", source_id="turn-1")
    with pytest.raises(IdempotencyConflict):
        mem.observe(ALICE, "I moved to Porto", source_id="turn-1")
    with pytest.raises(IdempotencyConflict):
        mem.observe(ALICE, "I moved to Lisbon", source_id="turn-1", role="assistant")


def test_an_idempotency_key_names_the_source_when_no_id_is_given(mem) -> None:
    a = mem.observe(ALICE, "hello", idempotency_key="k1")
    assert mem.observe(ALICE, "hello", idempotency_key="k1").source_id == a.source_id
    with pytest.raises(IdempotencyConflict):
        mem.observe(ALICE, "bye", idempotency_key="k1")
    assert mem.observe(ALICE, "hello").source_id != a.source_id


def test_sources_chain_per_run_with_the_zero_hash_first(mem, rstore) -> None:
    r1 = mem.observe(ALICE, "one", run_id="a")
    r2 = mem.observe(ALICE, "two", run_id="a")
    r3 = mem.observe(ALICE, "uno", run_id="b")
    assert (r1.sequence, r2.sequence, r3.sequence) == (0, 1, 0)  # schema LogEntry: from 0
    rows = {r["source_id"]: r for r in rstore.adapter.conn.execute("SELECT * FROM sources")}
    assert rows[r1.source_id]["prev_hash"] == "sha256:" + "0" * 64
    assert rows[r2.source_id]["prev_hash"] == r1.entry_hash
    assert rows[r3.source_id]["prev_hash"] == "sha256:" + "0" * 64
    assert rstore.verify()["memories"]["m1"]["sources_ok"]


@pytest.mark.parametrize("tamper", [
    "UPDATE sources SET text='I moved to Porto' WHERE source_id='turn-2'",
    "UPDATE sources SET role='assistant' WHERE source_id='turn-2'",
    "DELETE FROM sources WHERE source_id='turn-3'",
])
def test_verify_catches_a_tampered_source_row(mem, rstore, tamper: str) -> None:
    for i in (1, 2, 3):
        mem.observe(ALICE, f"turn number {i}", source_id=f"turn-{i}", run_id="r")
    rstore.adapter.conn.execute(tamper)
    rep = rstore.verify()
    entry = rep["memories"]["m1"]
    assert not rep["ok"] and not entry["sources_ok"]
    assert entry["sources_broken"]["run_id"] == "r"


def test_a_redacted_source_still_verifies_and_is_never_stored_again(mem, rstore) -> None:
    mem.observe(ALICE, "my PIN is 1234", source_id="secret")
    conn = rstore.adapter.conn
    conn.execute("BEGIN")
    redact_sources(conn, "m1", ["secret"], "2024-01-02T00:00:00.000000Z")
    conn.execute("COMMIT")
    assert rstore.verify()["ok"]
    again = mem.observe(ALICE, "my PIN is 1234", source_id="secret")
    assert again.replayed and again.redacted
    assert conn.execute("SELECT text FROM sources").fetchone()[0] is None


def test_bad_observations_write_nothing(mem) -> None:
    for kwargs in ({"role": "robot"}, {"kind": "User Message"}, {"run_id": "a b"},
                   {"source_id": " "}, {"source_id": "itm_0001"}):
        with pytest.raises(InvalidInput):
            mem.observe(ALICE, "hi", **kwargs)
    with pytest.raises(InvalidInput):
        mem.observe(ALICE, "x" * 20_000)
    with pytest.raises(InvalidInput):
        mem.observe("nobody", "hi")
    with pytest.raises(InvalidInput):
        mem.observe(ALICE, "hi", occurred_at=datetime(2024, 1, 1))
    assert mem.status()["head_seq"] == 0
