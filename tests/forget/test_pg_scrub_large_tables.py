"""PostgreSQL keeps a deleted or updated row's old version in the table file until the table
is rewritten. A forget rewrites the memory's vector partition and the items table (they hold
the erased text's embedding and the raw scope and key labels) right away only while they are
small: rewriting the vectors rebuilds their HNSW index (~12 s at 10k rows here). A larger one
leaves the report ``pending`` with the reason, and the worker's catch-up scrub (``remem worker``
or ``--once``) rewrites it; then no copy is left in the files. Real PostgreSQL."""

from __future__ import annotations

import json

import numpy as np
import pytest

import remem
from remem.testing.pgdb import database_bytes, drop_database

KEY = "qzv_private_topic"
VALUE = "Quokkaberry"


@pytest.fixture
def pg_store(pg_server):
    from _plugins.backends import migrated_database

    url = migrated_database(pg_server, prefix="scrub")
    store = remem.open(url)
    yield store, url
    store.close()
    drop_database(pg_server, url)


def _vector_bytes(mem, item_id) -> bytes:
    with mem.store.db.connection() as c:
        text = c.execute("SELECT vec::text AS t FROM vectors WHERE memory_id=%s AND doc_id=%s",
                         (mem.id, item_id)).fetchone()["t"]
    return np.array(json.loads(text), dtype="<f4").tobytes()[:64]  # as the heap stores it


def test_a_large_table_leaves_the_forget_pending_until_the_worker_rewrites_it(pg_store,
                                                                             pg_server):
    store, url = pg_store
    mem = store.create_memory("m1")
    item = mem.remember("user:alice", KEY, VALUE)
    vec = _vector_bytes(mem, item.item_id)
    assert vec in database_bytes(pg_server, url)
    store.adapter.scrub_inline_max_bytes = 0  # every vector partition and items table is "large"

    report = mem.forget(item.item_id).to_dict()

    assert report["state"] == "pending"
    assert "remem worker" in report["reason"] and "too large" in report["reason"]
    assert report["surfaces"]["vectors"]["state"] == "pending"
    data = database_bytes(pg_server, url)
    assert KEY.encode() in data and vec in data  # old row versions: the report was honest
    assert VALUE.encode() not in data  # the small text partitions were rewritten inline

    finished = store.finish_erasures()

    assert finished["state"] == "completed", finished
    assert store.adapter.pending_erasures(None) == 0
    data = database_bytes(pg_server, url)
    assert KEY.encode() not in data and vec not in data and VALUE.encode() not in data


def test_a_small_memory_is_rewritten_during_the_forget(pg_store, pg_server):
    store, url = pg_store
    mem = store.create_memory("m1")
    item = mem.remember("user:alice", KEY, VALUE)
    vec = _vector_bytes(mem, item.item_id)

    report = mem.forget(item.item_id).to_dict()

    assert report["state"] == "completed", report
    assert store.adapter.pending_erasures(None) == 0
    data = database_bytes(pg_server, url)
    assert KEY.encode() not in data and vec not in data and VALUE.encode() not in data
