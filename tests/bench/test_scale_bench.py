"""``remem bench scale`` on tiny sizes: throughput, latency, size, RSS, growth and the PNG."""

from __future__ import annotations

import json
from pathlib import Path

from remem.bench.scale_bench import growth, markdown_table, plan_claims, run_scale


def test_the_plan_is_distinct_and_spread_over_the_scopes() -> None:
    plan = plan_claims(500, scopes=10)
    assert len(plan) == 500 and len(set(plan)) == 500
    assert {s for s, *_ in plan} == {"agent:bench"} | {f"user:u{i}" for i in range(10)}


def test_growth_is_normalised_per_ten_times_more_items() -> None:
    rows = [{"items": 10_000, "p95_ms": 10.0}, {"items": 100_000, "p95_ms": 25.0},
            {"items": 1_000_000, "p95_ms": 100.0}]
    g = growth(rows)
    assert [(x["per_10x"], x["ok"]) for x in g] == [(2.5, True), (4.0, False)]
    assert growth([{"items": 100, "p95_ms": 1.0}, {"items": 1000, "p95_ms": 2.0}])[0][
        "per_10x"] == 2.0
    stopped = growth([{"items": 1000, "p95_ms": 1.0},  # a size stopped at 10,000 items
                      {"items": 1_000_000, "items_stored": 10_000, "stopped_early": True,
                       "p95_ms": 2.0}])[0]
    assert (stopped["to"], stopped["per_10x"]) == (10_000, 2.0)


def test_two_tiny_sizes_are_measured_and_plotted(tmp_path: Path) -> None:
    doc = run_scale([60, 120], out_dir=tmp_path, scopes=3, queries=10, single_sample=20,
                    batch_size=32, verbose=False)
    rows = doc["rows"]
    assert [r["items"] for r in rows] == [60, 120]
    for r in rows:
        assert r["single_items"] == 20 and r["batched_items"] == r["items"] - 20
        assert r["single_items_per_s"] > 0 and r["batched_items_per_s"] > 0
        assert r["p95_ms"] >= r["p50_ms"] > 0 and r["queries"] == 10
        assert r["hit_rate"] > 0.5
        assert r["db_mb"] > 0 and r["peak_rss_mb"] >= r["rss_mb"] > 0
    assert len(doc["growth"]) == 1
    assert json.loads((tmp_path / "results.json").read_text())["rows"] == rows
    assert (tmp_path / "scale.png").read_bytes()[:4] == b"\x89PNG"
    assert "| 120 |" in markdown_table(doc)


def test_the_text_pool_is_embedded_once_per_run_and_loaded_by_later_sizes(
        tmp_path: Path) -> None:
    doc = run_scale([60, 120], out_dir=tmp_path, scopes=3, queries=5, single_sample=10,
                    batch_size=32, verbose=False, pool=40)
    first, second = doc["rows"]
    assert first["pool_vectors"] == "embedded" and second["pool_vectors"] == "loaded from cache"
    assert len(list(tmp_path.glob("pool-*.npy"))) == 1
    assert second["hit_rate"] > 0.5  # the cached vectors index the right texts


def test_a_stop_file_cuts_a_size_short_and_its_row_says_so(tmp_path: Path) -> None:
    from remem.bench.scale_bench import STOP_FILE, measure_size

    (tmp_path / STOP_FILE).touch()  # before the first chunk: only the single sample is written
    row = measure_size(120, db=None, out_dir=str(tmp_path), scopes=3, queries=5,
                       budget_tokens=400, single_sample=10, batch_size=32, verbose=False)
    assert row["stopped_early"] and row["batched_items"] == 0
    assert row["items_stored"] == 10 and row["hit_rate"] > 0.5  # asked about what was written
    assert json.loads((tmp_path / "row-120.json").read_text()) == row
