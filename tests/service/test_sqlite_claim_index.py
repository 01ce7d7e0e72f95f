"""A decision on a multi key reads its own claim's items through the claim index, so its cost
does not grow with the key's other values (SQLite migration 016; ``Writer._projection``):
real SQLite files, SQLite's own count of executed VM instructions."""

from __future__ import annotations

from pathlib import Path

import remem


def _values(scope: str, n: int) -> list[dict]:
    return [{"scope": scope, "key": "likes", "value": f"sailing to island {i}",
             "kind": "preference"} for i in range(n)]


def _vm_steps_of_a_new_value(store, mem, scope: str) -> int:
    """SQLite VM instructions run by one remember of a new value of ``likes`` in ``scope``."""
    steps = [0]

    def count() -> int:
        steps[0] += 1
        return 0

    conn = store.adapter.conn
    conn.set_progress_handler(count, 1)
    try:
        result = mem.remember(scope, "likes", "rowing on a quiet lake")
    finally:
        conn.set_progress_handler(None, 1)
    assert result.outcome == "created"
    return steps[0]


def test_a_new_value_of_a_key_with_a_thousand_values_costs_what_it_costs_with_five(
        tmp_path: Path) -> None:
    store = remem.open(tmp_path / "claims.db")
    try:
        mem = store.create_memory("m1")
        mem.remember_many(_values("user:many", 1000))
        mem.remember_many(_values("user:few", 5))
        many = _vm_steps_of_a_new_value(store, mem, "user:many")
        few = _vm_steps_of_a_new_value(store, mem, "user:few")
        # reading the key's 1,000 items to keep one claim's (the plan before migration 016)
        # ran about 5 instructions per item: 6,000+ steps against about 1,250
        assert many < 2 * few, (many, few)
    finally:
        store.close()


def test_the_claim_lookup_of_a_decision_searches_the_claim_index(tmp_path: Path) -> None:
    store = remem.open(tmp_path / "claims.db")
    try:
        store.create_memory("m1")
        plan = store.adapter.conn.execute(
            "EXPLAIN QUERY PLAN SELECT * FROM items WHERE memory_id=? AND claim_id=? AND "
            "scope=? AND key=?", ("m1", "c", "user:a", "likes")).fetchall()
        assert "items_claim (memory_id=? AND claim_id=? AND scope=? AND key=?)" in plan[0][3]
    finally:
        store.close()
