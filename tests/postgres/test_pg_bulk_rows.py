"""A batch on PostgreSQL reads its candidates' claim projections in one statement
(``PostgresUnitOfWork.prefetch_claims``) and writes its item, key-revision, provenance and
payload rows in one statement per table (``stores/postgres/bulk_rows.py``); the outcomes and
every stored row are those of the same statements written one at a time, including keys
repeated, restated claims and single keys superseded inside one batch."""

from __future__ import annotations

import hashlib
import itertools
import os
from collections.abc import Iterator
from datetime import UTC, datetime

import psycopg
import pytest

import remem
import remem.stores.postgres.bulk_rows as bulk_rows
import remem.stores.postgres.uow as pguow
from remem.service.clock import FixedClock
from remem.service.writer import Writer
from remem.testing.pgdb import table_rows

CONFIG = {"keys": {"likes": {"cardinality": "multi"}}}


def statements() -> list[dict]:
    """60 new keys, then restatements, a superseded single key and repeats of one key."""
    out = [{"scope": f"user:u{i % 5}", "key": f"topic_{i}", "value": f"value {i}"}
           for i in range(60)]
    out += [{"scope": "user:u1", "key": "likes", "value": f"thing {i % 4}"} for i in range(12)]
    out += [{"scope": "user:u2", "key": "home_city", "value": c}
            for c in ("Lisbon", "Oslo", "Lisbon", "Kyoto")]
    out += [{"scope": f"user:u{i % 5}", "key": f"topic_{i}", "value": f"value {i}"}
            for i in range(0, 60, 7)]  # restated: seen again
    return out


def _whole_key(self, uow, req, scope, key, cid):
    return uow.projection_for(scope, key)


def _load(url: str, batch: bool, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    counter = itertools.count()

    def fake(n: int) -> bytes:
        return hashlib.sha256(b"rows" + str(next(counter)).encode()).digest()[:n].ljust(n, b"0")
    monkeypatch.setattr(os, "urandom", fake)
    store = remem.open(url, clock=FixedClock(datetime(2026, 3, 1, 9, 0, tzinfo=UTC)))
    try:
        mem = store.create_memory("m1", CONFIG)
        if batch:
            return [r.outcome for r in mem.remember_many(statements())]
        with monkeypatch.context() as m:
            m.setattr(Writer, "_projection", _whole_key)  # the reference: whole key, no batch
            return [mem.remember(s["scope"], s["key"], s["value"]).outcome
                    for s in statements()]
    finally:
        store.close()


@pytest.fixture
def two_urls(pg_server) -> Iterator[tuple[str, str]]:
    from remem.testing.pgdb import drop_database, fresh_database

    urls = fresh_database(pg_server), fresh_database(pg_server)
    yield urls
    for u in urls:
        drop_database(pg_server, u)


def test_a_batch_uses_one_statement_per_table_and_writes_the_same_rows(
        two_urls, monkeypatch: pytest.MonkeyPatch) -> None:
    one, many = two_urls
    single = _load(one, False, monkeypatch)
    calls: dict[str, int] = {"json_rows": 0, "copy_provenance": 0, "by_claim": 0, "prefetched": 0}
    real_json_rows = bulk_rows.insert_json_rows
    real_prefetch = pguow.PostgresUnitOfWork.prefetch_claims
    real_execute = psycopg.Connection.execute

    def json_rows(conn, table, columns, rows, conflict):
        calls["json_rows"] += 1
        return real_json_rows(conn, table, columns, rows, conflict)

    def prefetch(self, wanted):
        real_prefetch(self, wanted)
        calls["prefetched"] += sum(len(claims) for claims in self._prefetched.values())

    def execute(self, query, params=None, **kw):
        if query is pguow._BY_CLAIM:
            calls["by_claim"] += 1
        if isinstance(query, str) and query.startswith("COPY provenance"):
            calls["copy_provenance"] += 1
        return real_execute(self, query, params, **kw)
    monkeypatch.setattr(bulk_rows, "insert_json_rows", json_rows)
    monkeypatch.setattr(pguow.PostgresUnitOfWork, "prefetch_claims", prefetch)
    monkeypatch.setattr(psycopg.Connection, "execute", execute)
    batched = _load(many, True, monkeypatch)
    monkeypatch.undo()
    assert batched == single
    assert {"created", "duplicate", "superseded"} <= set(batched)  # each decision path ran
    assert calls["json_rows"] >= 2  # items and payloads (and revisions) as single statements
    assert calls["prefetched"] == len(set(
        (s["scope"], s["key"], s["value"]) for s in statements()))
    # 60 new keys came from the prefetch; only keys written earlier in the batch read again
    assert 0 < calls["by_claim"] < len(statements()) - 60
    a, b = table_rows(one), table_rows(many)
    for dumped in (a, b):  # a job's id is random (uuid4); when each database was migrated
        dumped["jobs"] = sorted((r[1:] for r in dumped["jobs"]), key=repr)
        del dumped["schema_migrations"]
    assert len(a["items"]) > 60
    assert [t for t in a if a[t] != b[t]] == []


def test_write_rows_bulk_matches_the_per_row_statements(two_urls) -> None:
    """The same read-model rows through ``write_rows_bulk`` (one statement per table) and
    ``write_rows`` (per row), twice (the second round replaces: upserts), store the same."""
    from remem.stores.postgres.connection import migrate
    from remem.stores.sql.dialect import POSTGRES
    from remem.domain.fold import ItemRecord
    from remem.stores.sql.rows import item_to_row
    from remem.stores.sql.uow import write_rows

    def rows(rev: int) -> tuple[list, list, list]:
        items = [item_to_row("m", ItemRecord(
            f"i{i}", "c", "s", f"k{i}", "fact", "single", "active", rev, "t0", f"p{i}", "h",
            "owner", rev, rev, "t0", "t0", correction=rev == 2, priority=i if rev == 2 else None),
            POSTGRES) for i in range(20)]
        revisions = [("m", "s", f"k{i}", rev) for i in range(20)]
        provenance = [("m", f"i{i}", rev * 100 + i, "src", "user", "t0") for i in range(20)]
        return items, revisions, provenance

    dumps = []
    for url, fn in zip(two_urls, (write_rows, bulk_rows.write_rows_bulk), strict=True):
        with psycopg.connect(url) as conn:
            migrate(conn)
        with psycopg.connect(url) as conn, conn.transaction():
            for rev in (1, 2):
                items, revisions, provenance = rows(rev)
                fn(conn, POSTGRES, [], items, [], revisions, [], [], provenance)
        dumps.append({t: v for t, v in table_rows(url).items()
                      if t in ("items", "key_revisions", "provenance")})
    assert dumps[0] == dumps[1]
    assert len(dumps[0]["items"]) == 20 and len(dumps[0]["provenance"]) == 40


def _two_batches(url: str, batch: bool, monkeypatch: pytest.MonkeyPatch,
                 whole_reads: list[int] | None = None) -> list[str]:
    """Single keys written by one call, then restated, superseded and repeated by a second
    (their cardinality is stored by then), which also adds 20 claims to one multi key;
    ``whole_reads`` gets the second call's whole-key and claim reads (``_WHOLE_KEY``,
    ``_BY_CLAIM`` statements) and how often it wrote its held read-model rows."""
    counter = itertools.count()

    def fake(n: int) -> bytes:
        return hashlib.sha256(b"rows" + str(next(counter)).encode()).digest()[:n].ljust(n, b"0")
    monkeypatch.setattr(os, "urandom", fake)
    first = [{"scope": f"user:u{i}", "key": k, "value": f"{k} {i}"}
             for i in range(5) for k in ("home_city", "diet")]
    first.append({"scope": "user:u0", "key": "likes", "value": "thing 0"})
    second = [{"scope": f"user:u{i}", "key": k, "value": f"{k} {i + (i % 2)}"}
              for i in range(5) for k in ("home_city", "diet")]
    second += [{"scope": "user:u1", "key": "home_city", "value": v} for v in ("Oslo", "Kyoto")]
    second += [{"scope": "user:u3", "key": "likes", "value": f"thing {i}"} for i in range(20)]
    store = remem.open(url, clock=FixedClock(datetime(2026, 3, 1, 9, 0, tzinfo=UTC)))
    try:
        mem = store.create_memory("m1", CONFIG)
        if not batch:
            with monkeypatch.context() as m:
                m.setattr(Writer, "_projection", _whole_key)
                return [mem.remember(s["scope"], s["key"], s["value"]).outcome
                        for s in first + second]
        out = [r.outcome for r in mem.remember_many(first)]
        real_execute = psycopg.Connection.execute
        real_held = pguow.PostgresUnitOfWork._write_held_rows
        reads = [0, 0, 0]

        def execute(self, query, params=None, **kw):
            reads[0] += query is pguow._WHOLE_KEY
            reads[1] += query is pguow._BY_CLAIM
            return real_execute(self, query, params, **kw)

        def held_rows(self, *args):
            reads[2] += 1
            return real_held(self, *args)
        with monkeypatch.context() as m:
            m.setattr(psycopg.Connection, "execute", execute)
            m.setattr(pguow.PostgresUnitOfWork, "_write_held_rows", held_rows)
            out += [r.outcome for r in mem.remember_many(second)]
        if whole_reads is not None:
            whole_reads.extend(reads)
        return out
    finally:
        store.close()


def test_a_batch_reads_single_keys_whole_and_keeps_other_claims_in_the_prefetch(
        two_urls, monkeypatch: pytest.MonkeyPatch) -> None:
    """A decision on a single key reads the whole key after its claim; for keys declared
    single before the batch those reads come from the batch's one prefetch statement (a key
    written again in the batch reads again). A claim added to a multi key leaves the other
    claims' prefetched projections usable (the key's revision patched in). Every row is the
    one-at-a-time rows."""
    one, many = two_urls
    single = _two_batches(one, False, monkeypatch)
    reads: list[int] = []
    batched = _two_batches(many, True, monkeypatch, reads)
    monkeypatch.undo()
    assert batched == single
    assert {"created", "superseded", "duplicate"} <= set(batched)
    # whole-key reads: the two repeats of user:u1's home_city, written earlier in the batch;
    # claim reads: none, the 19 other claims of user:u3's likes keep their prefetched items;
    # held rows written: before each of the 2 reads of a key they hold, and at the end (a
    # superseding item reads its predecessor's metadata without writing them first)
    assert reads == [2, 0, 3]
    a, b = table_rows(one), table_rows(many)
    for dumped in (a, b):
        dumped["jobs"] = sorted((r[1:] for r in dumped["jobs"]), key=repr)
        del dumped["schema_migrations"]
    assert [t for t in a if a[t] != b[t]] == []
