"""``remem bench locomo`` on a two-conversation synthetic slice: every system, every output."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from typer.testing import CliRunner

from remem.bench.locomo_bench import SYSTEMS, markdown_table, ranked_dia_ids, run_locomo
from remem.cli.main import app


def test_the_bench_scores_three_systems_and_writes_every_output(locomo_file: Path,
                                                               tmp_path: Path) -> None:
    out = tmp_path / "out"
    seen: list[tuple[str, int, int]] = []
    doc = run_locomo(locomo_file, ks=(1, 3), out_dir=out,
                     progress=lambda label, done, total: seen.append((label, done, total)))
    assert set(doc["systems"]) == set(SYSTEMS)
    assert doc["data"]["turns"] == 14 and doc["data"]["questions_scored"] == 6
    assert doc["data"]["questions_skipped"] == 2  # the adversarial ones
    assert doc["data"]["evidence"]["normalised"] == 2  # "D:2:1" in each conversation
    assert doc["ingest"]["turns"] == 14 and doc["ingest"]["turns_per_s"] > 0
    assert seen[-1] == ("conv-b", 7, 7)
    for s in doc["systems"].values():
        for k in ("R@1", "R@3"):
            score = s["recall"]["overall"][k]
            assert score["n"] == 6 and 0 <= score["all"] <= score["any"] <= 1
        assert s["latency_ms"]["p95"] >= s["latency_ms"]["p50"] >= 0
    # single-hop questions name the animal: every system finds them at k=3
    assert doc["systems"]["remem"]["recall"]["by_category"]["4"]["R@3"]["all"] == 1.0
    assert doc["systems"]["bm25"]["recall"]["by_category"]["4"]["R@3"]["all"] == 1.0
    saved = json.loads((out / "results.json").read_text())
    assert saved["systems"].keys() == doc["systems"].keys()
    lines = (out / "per_question.jsonl").read_text().splitlines()
    assert len(lines) == 3 * 6
    assert (out / "recall.png").read_bytes()[:4] == b"\x89PNG"
    assert not (out / "db").exists()
    assert "| remem | R@3 |" in markdown_table(doc)


def test_items_map_to_turns_through_their_provenance() -> None:
    result = SimpleNamespace(
        items=[SimpleNamespace(score=0.5, sources=["D1:2", "D3:1"])],
        sources=[SimpleNamespace(score=0.9, id="D2:2"), SimpleNamespace(score=0.1, id="D1:2")])
    assert ranked_dia_ids(result) == ["D2:2", "D1:2", "D3:1", "D1:2"]


def test_the_cli_prints_json_for_one_conversation(locomo_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "cli"
    res = CliRunner().invoke(app, ["--json", "bench", "locomo", "--data", str(locomo_file),
                                   "--k", "2", "--out", str(out), "--limit-conversations", "1"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["data"]["conversations"] == ["conv-a"]
    assert doc["settings"]["ks"] == [2]


def test_the_cli_rejects_a_bad_k(locomo_file: Path, tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["bench", "locomo", "--data", str(locomo_file), "--k", "0",
                                   "--out", str(tmp_path)])
    assert res.exit_code == 1
    assert "--k takes positive integers" in res.output


def _remem_rows(out: Path) -> list[tuple[str, list[str]]]:
    rows = [json.loads(line) for line in (out / "per_question.jsonl").read_text().splitlines()]
    return [(r["qid"], r["retrieved"]) for r in rows if r["system"] == "remem"]


def test_reuse_db_recalls_over_the_kept_memories_without_ingesting(locomo_file: Path,
                                                                    tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = run_locomo(locomo_file, ks=(3,), out_dir=out, keep_db=True)
    assert first["ingest"]["seconds"] > 0
    rows = _remem_rows(out)
    again = run_locomo(locomo_file, ks=(3,), out_dir=out, reuse_db=True)
    assert again["ingest"]["seconds"] == 0
    assert all(c["reused_db"] for c in again["ingest"]["per_conversation"])
    assert again["systems"]["remem"]["recall"] == first["systems"]["remem"]["recall"]
    assert _remem_rows(out) == rows and (out / "db" / "conv-a.db").is_file()
    # memories kept with digests are not reused for a run without them: built again
    other = run_locomo(locomo_file, ks=(3,), out_dir=out, reuse_db=True, digests=False)
    assert other["ingest"]["seconds"] > 0
    assert not any(c["reused_db"] for c in other["ingest"]["per_conversation"])
