"""``remem bench everyday`` measures real recall: its hit rate is what recall returns."""

from __future__ import annotations

import json

import remem
from remem.bench import everyday_bench as eb


def test_the_everyday_hit_rate_is_computed_from_real_recall(tmp_path, local_embedder) -> None:
    doc = eb.run_everyday(tmp_path, limit_queries=6)
    records = doc["records"]
    assert [r["query"] for r in records] == [q for q, _ in eb.QUERIES[:6]]
    assert doc["held_out"]["queries"] == 0
    store = remem.open(tmp_path / "everyday.db")  # ask the bench's own memory again
    try:
        mem = store.memory(eb.MEMORY)
        for rec in records:
            r = mem.recall([eb.SCOPE], rec["query"], budget_tokens=eb.BUDGET_TOKENS)
            assert rec["keys"] == [i.key for i in r.items] and rec["keys"]
            expected_rank = rec["keys"].index(rec["expected"]) + 1 \
                if rec["expected"] in rec["keys"] else None
            assert rec["rank"] == expected_rank
    finally:
        store.close()
    top3 = sum(1 for r in records if r["rank"] and r["rank"] <= 3) / len(records)
    assert doc["hit_rate"]["top3"] == round(top3, 4)
    assert doc["misses"] == [r for r in records if r["rank"] is None or r["rank"] > 3]
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["hit_rate"] == doc["hit_rate"] and (tmp_path / "everyday.png").stat().st_size


def test_the_profile_and_queries_are_the_documented_size() -> None:
    assert 15 <= len(eb.PROFILE) <= 25 and len(eb.QUERIES) >= 40
    keys = {k for k, _, _ in eb.PROFILE}
    assert {k for _, k in eb.QUERIES + eb.HELD_OUT} <= keys
    assert not {q for q, _ in eb.QUERIES} & {q for q, _ in eb.HELD_OUT}
