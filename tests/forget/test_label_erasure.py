"""A forgotten slot leaves no raw identity labels (issue 15), on SQLite and PostgreSQL.

A memory's ledger names scopes and keys by keyed refs (``lbl_`` + HMAC with the memory's
secret, data version 2); the raw labels sit in the erasable ``labels`` table, which forget
erases once no live item uses the label. Checked as raw bytes of the SQLite files, and on both
backends as a scan of every text column of every row of the memory.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import remem
from remem.domain.fold import Projection, key_state
from remem.domain.labels import LabelKeys
from remem.domain.model import Authority
from tests.contract.conftest import (  # noqa: F401 - fixtures for both backends
    database_bytes,
    mem,
    raw_sql,
    remem_store,
)

SCOPE = "user:quokka7731"
KEY = "hideout_zq"
OTHER_KEY = "pet_name_zq"
LABELS = (SCOPE, KEY)


def _rows(backend: str, url: str, memory_id: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """(table, row) for every row of the memory in every table that has a memory_id."""
    if backend == "sqlite":
        import sqlite3

        con = sqlite3.connect(url)
        con.row_factory = sqlite3.Row
        try:
            tables = [r[0] for r in con.execute(
                "SELECT name FROM sqlite_master WHERE type='table' AND sql LIKE '%memory_id%'")]
            for t in tables:
                for r in con.execute(f"SELECT * FROM {t} WHERE memory_id=?", (memory_id,)):
                    yield t, dict(r)
        finally:
            con.close()
        return
    import psycopg
    from psycopg import sql
    from psycopg.rows import dict_row

    with psycopg.connect(url, row_factory=dict_row) as con:
        tables = [r["table_name"] for r in con.execute(
            "SELECT c.table_name FROM information_schema.columns c JOIN pg_class p ON "
            "p.relname = c.table_name WHERE c.table_schema = current_schema() AND "
            "c.column_name = 'memory_id' AND NOT p.relispartition")]
        for t in tables:
            for r in con.execute(sql.SQL("SELECT * FROM {} WHERE memory_id=%s").format(
                    sql.Identifier(t)), (memory_id,)):
                yield t, r


def _holding(backend: str, url: str, needle: str, memory_id: str = "m1") -> list[str]:
    """'table.column' of every value of the memory's rows that contains ``needle``."""
    out = []
    for table, row in _rows(backend, url, memory_id):
        for col, value in row.items():
            text = value.decode("latin-1") if isinstance(value, (bytes, memoryview)) \
                else value if isinstance(value, str) else json.dumps(value, default=str)
            if needle in text:
                out.append(f"{table}.{col}")
    return sorted(set(out))


@pytest.fixture
def held(backend: str, store_url: str) -> Callable[[str], list[str]]:
    return lambda needle: _holding(backend, store_url, needle)


@pytest.fixture
def labels_held(backend: str, store_url: str) -> Callable[[], set[tuple[str, str]]]:
    """(field, label) rows of m1's labels table."""
    def read() -> set[tuple[str, str]]:
        return {(r["field"], r["label"]) for t, r in _rows(backend, store_url, "m1")
                if t == "labels"}
    return read


def test_a_forgotten_slot_leaves_its_labels_in_no_row_and_no_file_byte(
        mem, remem_store, held, backend, database_bytes):
    r = mem.remember(SCOPE, KEY, "Zanzibar", idempotency_key="req-1",
                     source={"id": "t1", "text": "Hide at Zanzibar.", "role": "user"})
    mem.correct(SCOPE, KEY, "Quokka Bay", expected_revision=1)
    assert held(SCOPE) and held(KEY)  # live: the items and the labels table name them
    assert "ledger.data" not in held(SCOPE) + held(KEY)  # the ledger never does

    rep = mem.forget(scope=SCOPE, key=KEY, expected_revision=2)

    assert rep.state == "completed" and r.item_id in rep.items
    for label in LABELS:
        assert held(label) == [], label
    if backend == "sqlite":  # every file: main, WAL, free pages
        raw = database_bytes()
        for label in LABELS:
            assert label.encode() not in raw, label
    # the tombstone still refuses the claim, and the replay still answers "forgotten"
    again = mem.remember(SCOPE, KEY, "zanzibar", authority=Authority.AUTOMATIC,
                         source={"id": "t9", "role": "user"})
    assert again.outcome == "forgotten"
    replay = mem.remember(SCOPE, KEY, "Zanzibar", idempotency_key="req-1",
                          source={"id": "t1", "text": "Hide at Zanzibar.", "role": "user"})
    assert (replay.outcome, replay.replayed, replay.scope, replay.key) == (
        "forgotten", True, SCOPE, KEY)
    inspected = mem.inspect(SCOPE, KEY)
    assert (inspected.state, inspected.revision) == ("forgotten", 3)  # the counter stays
    assert remem_store.verify()["ok"]


def test_a_label_another_live_item_uses_stays_and_reads_by_it_still_work(
        mem, remem_store, held, labels_held):
    mem.remember(SCOPE, KEY, "Zanzibar")
    mem.remember(SCOPE, OTHER_KEY, "Whiskers")  # same scope, another key
    mem.remember("user:someone_else", KEY, "Elsewhere")  # same key, another scope

    mem.forget(scope=SCOPE, key=KEY, expected_revision=1)

    assert labels_held() >= {("scope", SCOPE), ("key", KEY), ("key", OTHER_KEY)}
    assert [i.value for i in mem.items(scope=SCOPE).items] == ["Whiskers"]
    assert [i.scope for i in mem.items(key=KEY).items] == ["user:someone_else"]
    assert mem.inspect(SCOPE, KEY).state == "forgotten"

    mem.forget(scope="user:someone_else", key=KEY, expected_revision=1)  # its last user
    assert ("key", KEY) not in labels_held() and held(KEY) == []
    assert ("scope", SCOPE) in labels_held()  # still used by pet_name_zq
    before = remem_store.adapter.dump("m1")
    remem_store.rebuild("m1")
    assert remem_store.adapter.dump("m1") == before
    assert mem.inspect(SCOPE, OTHER_KEY).value == "Whiskers"


def test_sealed_events_carry_refs_and_rebuild_joins_the_labels_back(mem, remem_store):
    mem.remember(SCOPE, KEY, "Zanzibar")
    mem.correct(SCOPE, KEY, "Quokka Bay", expected_revision=1)
    rows = list(remem_store.adapter.ledger_rows("m1"))
    datas = [json.loads(r["data"]) for r in rows]
    added = next(d for d, r in zip(datas, rows) if r["type"] == "item.added")
    assert added["v"] == 2 and "scope" not in added and "key" not in added
    keys = remem_store.adapter.label_keys("m1")
    assert added["scope_ref"] == keys.ref("scope", SCOPE) != SCOPE
    assert added["key_ref"].startswith("lbl_") and len(added["key_ref"]) == 68
    assert not any(SCOPE in r["data"] or KEY in r["data"] for r in rows)
    # history (store.events) reads the labels back while they are held
    assert {e["data"].get("key") for e in remem_store.adapter.events("m1")} >= {KEY}
    before = remem_store.adapter.dump("m1")
    remem_store.rebuild("m1")
    assert remem_store.adapter.dump("m1") == before
    assert mem.inspect(SCOPE, KEY).value == "Quokka Bay"
    assert remem_store.verify()["ok"]


def test_a_legacy_memory_keeps_schema_1_events_and_still_verifies_and_forgets(
        store_url, raw_sql):
    s = remem.open(store_url)
    try:
        old = s.create_memory("old")
        assert raw_sql("DELETE FROM memory_secrets WHERE memory_id='old'") == 1
    finally:
        s.close()
    s = remem.open(store_url)  # a memory from before keyed ids and labels
    try:
        old = s.memory("old")
        old.remember(SCOPE, KEY, "Zanzibar", idempotency_key="req-1")
        datas = [json.loads(r["data"]) for r in s.adapter.ledger_rows("old")]
        assert all(d["v"] == 1 for d in datas)
        assert any(d.get("scope") == SCOPE and d.get("key") == KEY for d in datas)
        old.forget(scope=SCOPE, key=KEY, expected_revision=1)
        assert old.remember(SCOPE, KEY, "zanzibar", authority=Authority.AUTOMATIC,
                            source={"id": "t9", "role": "user"}).outcome == "forgotten"
        replay = old.remember(SCOPE, KEY, "Zanzibar", idempotency_key="req-1")
        assert (replay.outcome, replay.replayed) == ("forgotten", True)
        before = s.adapter.dump("old")
        s.rebuild("old")
        assert s.adapter.dump("old") == before
        assert s.verify()["ok"]
    finally:
        s.close()


def test_the_fold_reads_schema_1_and_schema_2_data_of_one_key_alike():
    """A ledger may mix both formats; refs are computed from raw labels, labels joined
    back from refs, so either spelling of the same events gives the same projection."""
    keys = LabelKeys("m1", b"k" * 32)
    sref, kref = keys.ref("scope", SCOPE), keys.ref("key", KEY)
    base = {"item_id": "itm_1", "claim_id": "c1", "kind": "fact", "cardinality": "single",
            "valid_at": "2024-01-01T00:00:00.000000Z", "payload_id": "pl_1",
            "content_hash": "h", "authority": "owner", "revision": 1}
    v1 = [{"seq": 1, "type": "key.declared", "at": "t", "data": {
               "v": 1, "key": KEY, "cardinality": "single", "on_change": "supersede"}},
          {"seq": 2, "type": "item.added", "at": "t", "data": {
               "v": 1, "scope": SCOPE, "key": KEY, **base}},
          {"seq": 3, "type": "item.forgotten", "at": "t", "data": {
               "v": 1, "scope": SCOPE, "key": KEY, "item_id": "itm_1", "claim_id": "c1",
               "revision": 1}}]
    v2 = [{**e, "data": keys.seal(e["data"])[0]} for e in v1]
    assert all(e["data"]["v"] == 2 and "scope" not in e["data"] for e in v2[1:])
    folded = []
    for events in (v1, v2):
        p = Projection(label_keys=keys)
        p.apply_all(events)
        folded.append((p.tombstones, p.keys, p.cardinality, key_state(p, SCOPE, KEY)))
    assert folded[0] == folded[1]
    assert folded[0][0] == {(sref, kref, "c1")}
    assert folded[0][3].tombstones == frozenset({"c1"}) and folded[0][3].revision == 1
