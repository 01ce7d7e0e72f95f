"""A batch (``remember_many``) writes exactly what the same statements written one at a time
write: the same ledger events and hashes, the same payloads, read-model rows, idempotency
results, full-text rows and vectors, byte for byte, on SQLite and PostgreSQL.

Two fresh databases of the backend under test each get memory ``m1`` with the same secret
(``os.urandom`` is made deterministic), the same fixed clock and the same statements; one
database takes them one ``remember`` at a time, the other in ``remember_many`` chunks whose
items repeat keys, restate claims and supersede single keys inside one batch.
"""

from __future__ import annotations

import hashlib
import itertools
import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import remem
from remem.service.clock import FixedClock
from remem.service.writer import Writer
from remem.testing.pgdb import table_rows

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def statements() -> list[dict[str, Any]]:
    """Single keys superseded inside a batch, multi keys, restated claims (seen again),
    metadata, explicit idempotency keys, several scopes and kinds."""
    out: list[dict[str, Any]] = []
    for i in range(40):
        scope = f"user:u{i % 3}"
        out.append({"scope": scope, "key": "likes", "value": f"hiking near lake {i % 11}",
                    "kind": "preference"})
        if i % 4 == 0:
            out.append({"scope": scope, "key": "home_city",
                        "value": ["Lisbon", "Oslo", "Kyoto"][i % 3 if i % 8 else (i + 1) % 3],
                        "kind": "profile_slot",
                        "valid_at": T0 + timedelta(days=i)})
        if i % 5 == 0:
            out.append({"scope": "agent:bot", "key": f"rule_{i % 2}",
                        "value": f"answer in {i % 3} bullets", "kind": "rule",
                        "metadata": {"team": f"t{i % 2}"}})
        if i % 7 == 0:
            out.append({"scope": scope, "key": "diet", "value": "vegan", "kind": "fact",
                        "idempotency_key": f"diet-{i % 2}"})
    return out


def _urandom_from(seed: bytes):
    counter = itertools.count()

    def fake(n: int) -> bytes:
        out = b""
        while len(out) < n:
            out += hashlib.sha256(seed + str(next(counter)).encode()).digest()
        return out[:n]
    return fake


def _whole_key(self: Writer, uow: Any, req: Any, scope: str, key: str, cid: str) -> Any:
    """The reference read: every item of the key, for every decision."""
    return uow.projection_for(scope, key)


def _load(url: str, batch: int | None, monkeypatch: pytest.MonkeyPatch) -> None:
    """One at a time (``batch=None``) reads the whole key for every decision, as the write
    path did before bulk loads read only the candidate's claim of a multi key."""
    monkeypatch.setattr(os, "urandom", _urandom_from(b"bulk"))
    if batch is None:
        monkeypatch.setattr(Writer, "_projection", _whole_key)
    else:
        monkeypatch.undo()
        monkeypatch.setattr(os, "urandom", _urandom_from(b"bulk"))
    clock = FixedClock(T0)
    store = remem.open(url, clock=clock)
    try:
        mem = store.create_memory("m1", {"keys": {"likes": {"cardinality": "multi"}}})
        todo = statements()
        if batch is None:
            for st in todo:
                mem.remember(st.pop("scope"), st.pop("key"), st.pop("value"), **st)
        else:
            for start in range(0, len(todo), batch):
                mem.remember_many(todo[start:start + batch])
    finally:
        store.close()


def _dump_sqlite(url: str) -> dict[str, list[tuple]]:
    import sqlite3

    conn = sqlite3.connect(url)
    try:
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' "
            "AND sql NOT LIKE 'CREATE VIRTUAL TABLE%' ORDER BY name")]
        return {t: sorted(conn.execute(f'SELECT * FROM "{t}"').fetchall(), key=repr)
                for t in tables}
    finally:
        conn.close()


@pytest.fixture
def two_urls(backend: str, request, tmp_path: Path) -> Iterator[tuple[str, str]]:
    if backend == "sqlite":
        yield str(tmp_path / "one.db"), str(tmp_path / "many.db")
        return
    from remem.testing.pgdb import drop_database, fresh_database

    server = request.getfixturevalue("pg_server")
    urls = fresh_database(server), fresh_database(server)
    yield urls
    for u in urls:
        drop_database(server, u)


@pytest.mark.parametrize("batch", [1, 7, 500])
def test_a_batch_writes_the_same_bytes_as_one_at_a_time(
        backend: str, two_urls: tuple[str, str], batch: int,
        monkeypatch: pytest.MonkeyPatch) -> None:
    one, many = two_urls
    _load(one, None, monkeypatch)
    _load(many, batch, monkeypatch)
    dump = _dump_sqlite if backend == "sqlite" else table_rows
    a, b = dump(one), dump(many)
    assert a.keys() == b.keys()
    assert len(a["ledger"]) > 60 and len(a["items"]) > 30
    types = {str(r[2]).strip("'") for r in a["ledger"]}
    assert {"item.added", "item.superseded", "provenance.added"} <= types, types
    for dumped in (a, b):  # a job's id is random (uuid4); its kind, state and times count
        dumped["jobs"] = sorted((r[1:] for r in dumped["jobs"]), key=repr)
    del a["schema_migrations"], b["schema_migrations"]  # when each database was migrated
    assert [t for t in a if a[t] != b[t]] == []
