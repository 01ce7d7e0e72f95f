"""``remem bench render`` prices real recall results and meets issue 13's targets."""

from __future__ import annotations

import json

from remem.bench.render_bench import run_render


def test_bench_render_reports_before_and_after_within_the_targets(tmp_path,
                                                                  local_embedder) -> None:
    doc = run_render(tmp_path)
    for m in doc["tokenizers"].values():
        after, before = m["after"], m["before"]
        assert after["empty_tokens"] <= 30 < before["empty_tokens"]
        assert after["per_fact_tokens"]["max"] <= 25 < before["per_fact_tokens"]["mean"]
        assert after["per_source_tokens_besides_text"]["max"] <= 15
        fits = m["facts_that_fit"]
        assert [f["after"] for f in fits.values()] == sorted(f["after"] for f in fits.values())
        assert fits["300"]["after"] >= 10 and fits["100"]["before"] == 0
    assert json.loads((tmp_path / "results.json").read_text())["tokenizers"]
    assert (tmp_path / "render.png").stat().st_size > 0
