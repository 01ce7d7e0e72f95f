"""The vector-index micro-bench and the scale bench's tie-aware ANN overlap."""

from __future__ import annotations

from pathlib import Path

import pytest

from remem.bench import vecindex_bench
from remem.bench.scale_ann import tie_aware_overlap as _tie_aware_overlap
from remem.stores.sqlite import vecindex


def test_tie_aware_overlap_counts_a_hit_scoring_the_exact_kth_score_as_found():
    exact = [("a", 0.9, "s"), ("b", 0.8, "s"), ("c", 0.7, "s")]
    assert _tie_aware_overlap([("a", 0.9, "s"), ("b", 0.8, "s"), ("z", 0.7, "s")], exact) == 1
    assert _tie_aware_overlap([("a", 0.9, "s"), ("b", 0.8, "s"), ("z", 0.6, "s")], exact) \
        == pytest.approx(2 / 3)
    assert _tie_aware_overlap([], []) == 1.0


def test_the_micro_bench_measures_exact_and_ann_paths_on_a_small_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(vecindex, "EXACT_MAX_ROWS", 1500)  # one scope (~1,000) exact; all: ANN
    path = tmp_path / "v.db"
    assert vecindex_bench.fill(path, 3000, scopes=3) > 0
    row = vecindex_bench.measure(str(path), 3000, 3, 8, "int8")
    assert row["scope_recall_at_10"] == 1.0
    assert row["all_recall_at_10"] >= 0.9
    assert row["ann_build_s"] is not None and row["ann_lists"] >= 32
    assert 0 < row["index_mb"] < 3000 * 500 / 2**20
