"""The SQLite vector index reads a candidate's float32 vector back by the rowid it loaded the
row from, and keeps it only while that row still has the expected seq: rowids renumbered under
a cached index (as a VACUUM may do) give the same hits, read by seq."""

from __future__ import annotations

import numpy as np

ALICE = "user:alice"


def test_renumbered_rowids_give_the_same_hits_as_a_fresh_index(mem, rstore) -> None:
    for scope in (ALICE, "user:bob"):  # reversed rowids map alice's rows onto bob's
        for key, value in [("diet", "vegan"), ("employer", "Acme"), ("pet", "a cat"),
                           ("hobby", "chess"), ("home_city", "Paris")]:
            mem.remember(scope, key, value)
    conn, index = rstore.adapter.conn, rstore.adapter.search_index
    query = np.frombuffer(conn.execute("SELECT vec FROM vectors ORDER BY seq LIMIT 1"
                                       ).fetchone()[0], dtype="<f4").copy()
    with index.read("m1") as snap:
        before = snap.vectors(query, [ALICE], 10, -1.0)
    assert len(before) == 5
    view = index.cache.index_for(conn, "m1")
    assert (view.index.rowids_of(np.arange(10)) >= 0).all()  # loaded with their rowids
    n = conn.execute("SELECT max(rowid) FROM vectors").fetchone()[0]
    conn.execute("UPDATE vectors SET rowid = rowid + 1000000")
    conn.execute("UPDATE vectors SET rowid = ? - (rowid - 1000000)", (n + 1,))  # reversed
    with index.read("m1") as snap:
        assert snap.vectors(query, [ALICE], 10, -1.0) == before  # the cached index
    index.cache.invalidate("m1")
    with index.read("m1") as snap:
        assert snap.vectors(query, [ALICE], 10, -1.0) == before  # a fresh one


def test_the_read_back_searches_by_rowid_even_with_many_candidates(mem, rstore) -> None:
    """With a long ``rowid IN (...)`` list SQLite preferred the ``vectors_seq`` index on
    ``memory_id`` (every row of the memory: 27 ms at 100k); the statement must search rowids."""
    mem.remember(ALICE, "diet", "vegan")
    conn, index = rstore.adapter.conn, rstore.adapter.search_index
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    try:
        with index.read("m1") as snap:
            snap.vectors(np.ones(384, dtype=np.float32) / np.sqrt(384), [ALICE], 10, -1.0)
    finally:
        conn.set_trace_callback(None)
    fetch = next(s for s in statements if "WHERE rowid IN" in s)
    head = fetch[:fetch.index("IN (") + 4]
    many = head + ",".join(str(i) for i in range(1, 67)) + fetch[fetch.index(")", len(head)):]
    plan = " ".join(r[3] for r in conn.execute("EXPLAIN QUERY PLAN " + many))
    assert "INTEGER PRIMARY KEY" in plan and "vectors_seq" not in plan, plan
