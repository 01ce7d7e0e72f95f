"""Round-6 probe: on PostgreSQL (``remem serve --db postgresql://...``) a forget reports
``completed`` while the forgotten item's **key label** is still in the database files: the
``items`` table (not partitioned per memory, so the forget's ``VACUUM FULL`` of the memory's
text partitions does not rewrite it) keeps the pre-forget row version as a dead tuple, and
the ``items_key`` / ``items_key_label`` indexes keep the key; the scope label stays too, in
``items`` and in the memory's own ``vectors`` partition and its scope index. The live rows hold only the
label ref (``lbl_...``), as the README promises ("the labels were erased with the value"),
and SQLite's ``secure_delete`` leaves no copy; PostgreSQL does. A key is a topic name that
can itself be the secret (``hiv_status``, ``pregnancy_due``). Worse, the erased item's
**embedding** stays too: the ``vectors`` partition is deliberately not rewritten (the code
says its dead tuples "hold floats, not text"), yet an embedding can be inverted to an
approximation of the forgotten text, and DESIGN says erasure deletes vectors. Real server on loopback, real
PostgreSQL from the test plugin, real SQLite file for the comparison.
Fixed: the scrub after a forget now also rewrites the memory's vector partition and the
``items`` table (``stores/postgres/erasure.py``; see tests/forget/test_pg_scrub_large_tables.py
for tables too large to rewrite during the request)."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import psycopg
import pytest

from remem.testing.pgdb import database_bytes, drop_database
from security.probe4_kit import Probe
from security.probe6_kit import UrlProbe, sqlite_bytes

KEY = "zqx_secret_topic"
VALUE = "Zanzibarvalue"
SCOPE = "user:zqxperson"


def _write_and_forget(p: Probe) -> dict:
    p.ok("root", "POST", "/memory/m1/items", json={"scope": SCOPE, "key": KEY, "value": VALUE})
    report = p.ok("root", "POST", "/memory/m1/forget-scope", json={"scope": SCOPE})
    assert report["state"] == "completed"
    return report


@pytest.fixture
def pg_probe(pg_server):
    from _plugins.backends import migrated_database

    url = migrated_database(pg_server, prefix="probe6")
    p = UrlProbe(url)
    yield p, url
    p.close()
    drop_database(pg_server, url)


def test_sqlite_forget_leaves_neither_value_nor_key_label_in_the_files(tmp_path):
    p = Probe(tmp_path)
    try:
        _write_and_forget(p)
        data = sqlite_bytes(p.db)
    finally:
        p.close()
    assert VALUE.encode() not in data
    assert KEY.encode() not in data
    assert SCOPE.encode() not in data


def test_postgres_live_rows_hold_neither_value_nor_key_label(pg_probe):
    p, url = pg_probe
    _write_and_forget(p)
    with psycopg.connect(url) as conn:
        tables = [r[0] for r in conn.execute(
            "SELECT relname FROM pg_class WHERE relkind = 'r'"
            " AND relnamespace = 'public'::regnamespace")]
        for table in tables:
            rows = conn.execute(f'SELECT t::text FROM "{table}" t').fetchall()
            assert not [r for (r,) in rows if KEY in r or VALUE in r or SCOPE in r], table


def test_postgres_completed_forget_leaves_no_key_label_in_the_files(pg_probe, pg_server):
    p, url = pg_probe
    _write_and_forget(p)
    data = database_bytes(pg_server, url)
    assert VALUE.encode() not in data  # the value did leave (payload partition rewritten)
    assert KEY.encode() not in data


def test_postgres_completed_forget_leaves_no_scope_label_in_the_files(pg_probe, pg_server):
    p, url = pg_probe
    _write_and_forget(p)
    assert SCOPE.encode() not in database_bytes(pg_server, url)


def _vector_prefix_sqlite(db: str) -> bytes:
    with sqlite3.connect(db) as conn:
        cols = [r[1] for r in conn.execute("PRAGMA table_info(vectors)")]
        blob_col = next(c for c in ("vec", "vector", "embedding") if c in cols)
        (blob,) = conn.execute(f"SELECT {blob_col} FROM vectors WHERE scope = ?",
                               (SCOPE,)).fetchone()
    return bytes(blob)[:64]


def test_sqlite_completed_forget_leaves_no_copy_of_the_items_vector(tmp_path):
    p = Probe(tmp_path)
    try:
        p.ok("root", "POST", "/memory/m1/items", json={"scope": SCOPE, "key": KEY,
                                                       "value": VALUE})
        needle = _vector_prefix_sqlite(p.db)
        assert needle in sqlite_bytes(p.db)
        report = p.ok("root", "POST", "/memory/m1/forget-scope", json={"scope": SCOPE})
        assert report["state"] == "completed"
        assert needle not in sqlite_bytes(p.db)
    finally:
        p.close()


def test_postgres_completed_forget_leaves_no_copy_of_the_items_vector(pg_probe, pg_server):
    p, url = pg_probe
    p.ok("root", "POST", "/memory/m1/items", json={"scope": SCOPE, "key": KEY, "value": VALUE})
    with psycopg.connect(url) as conn:
        (text,) = conn.execute("SELECT vec::text FROM vectors WHERE scope = %s",
                               (SCOPE,)).fetchone()
    needle = np.array(json.loads(text), dtype="<f4").tobytes()[:64]
    assert needle in database_bytes(pg_server, url)
    report = p.ok("root", "POST", "/memory/m1/forget-scope", json={"scope": SCOPE})
    assert report["state"] == "completed"
    assert needle not in database_bytes(pg_server, url)
