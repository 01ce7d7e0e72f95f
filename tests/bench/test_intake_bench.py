"""``remem bench intake`` on a few synthetic turns, and the scale bench's pooled bulk load."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import remem
from remem.bench.intake_bench import best, markdown_table, run_intake
from remem.bench.scale_bench import _write, plan_claims, spread
from remem.domain.textindex import item_text


def test_the_intake_bench_measures_every_path_against_the_embedder(tmp_path: Path) -> None:
    doc = run_intake(tmp_path, turns=9, batch_size=4, repeats=1,
                     data=tmp_path / "no-locomo.json", verbose=False)
    paths = [r["path"] for r in doc["rows"]]
    assert paths == ["embedder raw, 4 per call", "embedder raw, 1 per call",
                     "observe, one by one (inline derive)", "observe_many (inline derive)",
                     "capture (inline derive)", "capture (worker derive)"]
    assert max(r["ratio_to_embedder"] for r in doc["rows"][:2]) == 1.0
    # every intake path formed the same claims from the same turns
    assert len({r["claims"] for r in doc["rows"][2:]}) == 1 and doc["rows"][2]["claims"] > 0
    assert doc["settings"]["source"] == "synthetic"
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["rows"] == doc["rows"] and (tmp_path / "intake.png").stat().st_size > 0
    assert "observe_many" in markdown_table(doc)


def test_best_keeps_each_paths_fastest_pass_by_wall_and_by_cpu() -> None:
    def row(path, wall, cpu):
        return {"path": path, "seconds": 1, "cpu_s": 1, "turns_per_s": wall,
                "turns_per_cpu_s": cpu}

    out = best([[row("embedder raw, 8 per call", 10, 40), row("x", 6, 30)],
                [row("embedder raw, 8 per call", 8, 50), row("x", 9, 20)]])
    x = out[1]
    assert (x["turns_per_s"], x["turns_per_cpu_s"]) == (9, 30)
    assert (x["ratio_to_embedder"], x["cpu_ratio_to_embedder"]) == (0.9, 0.6)


def test_spread_keeps_every_claim_and_never_repeats_a_text_in_a_chunk() -> None:
    plan = plan_claims(600, scopes=12, pool=40)
    chunks = spread(plan, 64)
    assert sorted(c for ch in chunks for c in ch) == sorted(plan)
    assert all(len(ch) <= 64 for ch in chunks)
    for ch in chunks:
        texts = [item_text(k, v, None) for _, k, v, _ in ch]
        assert len(texts) == len(set(texts))
    topics = {(k, v) for _, k, v, kind in plan if kind == "preference"}
    assert len(topics) <= 40 < len(plan)


def test_a_pooled_bulk_load_writes_what_one_remember_per_item_writes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plan = plan_claims(150, scopes=4, pool=30)
    store = remem.open(tmp_path / "a.db")
    workdir = tmp_path / "cwd"
    workdir.mkdir()
    monkeypatch.chdir(workdir)  # without a cache dir nothing is written where it runs
    try:
        bulk, single = store.create_memory("bulk"), store.create_memory("single")
        stats = _write(bulk, plan, 10, 32, None, pooled=True)
        assert list(workdir.iterdir()) == []
        order = [c for ch in spread(plan[:-10], 32) for c in ch] + plan[-10:]
        for scope, key, value, kind in order:  # the bulk load's order, one at a time
            single.remember(scope, key, value, kind=kind)

        def items(mem):
            return sorted((i.scope, i.key, str(i.value), i.status, i.revision)
                          for i in mem.items(status=["current", "superseded", "conflict"],
                                            limit=1000).items)

        assert items(bulk) == items(single) and len(items(bulk)) == len(plan)
        assert stats["distinct_texts"] < len(plan)
        for mem in (bulk, single):
            with mem.ctx.embedding.index.read(mem.id) as snap:
                assert sum(1 for d in snap.embedding_docs() if d[1] == "item") == len(plan)
        assert store.verify()["ok"]
    finally:
        store.close()


def test_the_ann_pass_compares_hnsw_with_exact_search_on_postgresql(monkeypatch) -> None:
    from remem.bench.scale_ann import ann_pass as _ann_pass
    from remem.stores.postgres import search as pg_search
    from remem.testing.pgdb import drop_database, shared_server

    from _plugins.backends import migrated_database

    server = shared_server()
    url = migrated_database(server)
    store = remem.open(url)
    try:
        mem = store.create_memory("ann")
        plan = plan_claims(240, scopes=3)
        mem.remember_many([{"scope": s, "key": k, "value": v, "kind": kd}
                           for s, k, v, kd in plan])
        monkeypatch.setattr(pg_search, "EXACT_MAX_ROWS", 60)  # the scope set is above it
        out = _ann_pass(mem, ["hiking near quiet lakes", "old violins in Kyoto",
                              "reading about castles", "sailing to islands"], scopes=3)
        assert out["ann"] == "HNSW above 60 rows"
        assert 0.5 <= out["ann_recall_at_10"] <= 1.0
        assert pg_search.EXACT_MAX_ROWS == 60  # restored after each exact search
    finally:
        store.close()
        drop_database(server, url)
