"""Recall's key channel reads the covering index of SQLite migration 017 alone (no item
rows), and finds the same items, newest first."""

from __future__ import annotations

from remem.service.recall import candidate_keys


def test_the_key_channel_is_answered_from_the_covering_index(mem, rstore):
    for i in range(3):
        mem.remember("user:a", "home_city", f"city {i}")
    mem.remember("user:b", "home_city", "Oslo")
    keys, scopes = candidate_keys("where is my home city"), ["user:a", "agent:x"]
    with mem.ctx.embedding.index.read(mem.ctx.id) as snap:
        got = snap.key_items(keys, scopes, 50)
        plan = " ".join(str(tuple(r)) for r in snap.conn.execute(
            f"EXPLAIN QUERY PLAN SELECT item_id, scope FROM items WHERE memory_id=? AND key "
            f"IN ({','.join('?' * len(keys))}) AND scope IN (?,?) ORDER BY valid_at DESC, "
            f"item_id LIMIT ?", (mem.ctx.id, *keys, *scopes, 50)))
        newest = [r[0] for r in snap.conn.execute(
            "SELECT item_id FROM items WHERE memory_id=? AND scope='user:a' "
            "ORDER BY valid_at DESC, item_id", (mem.ctx.id,))]
    assert "COVERING INDEX items_key" in plan
    assert [d for d, _ in got] == newest and {s for _, s in got} == {"user:a"}
