"""``remem bench scale`` on PostgreSQL: a size's batches run as a bulk load (the memory's HNSW
index built once after them, ``bench/scale_pg.py``), and the size is still measured whole."""

from __future__ import annotations

from pathlib import Path

import psycopg

from remem.bench.scale_bench import measure_size


def test_a_postgres_size_is_bulk_loaded_and_left_with_a_valid_hnsw_index(
        pg_url: str, tmp_path: Path) -> None:
    row = measure_size(150, db=pg_url, out_dir=str(tmp_path), scopes=3, queries=5,
                       budget_tokens=400, single_sample=10, batch_size=40, verbose=False)
    assert row["backend"] == "postgres" and row["items_stored"] == 150
    assert row["batched_items"] == 140 and row["index_build_s"] > 0
    assert row["hit_rate"] > 0.5 and row["ann_recall_at_10"] == 1.0
    with psycopg.connect(pg_url) as conn:
        valid = conn.execute(
            "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "JOIN pg_am a ON a.oid = c.relam WHERE a.amname = 'hnsw'").fetchall()
    assert valid == [(True,)]
