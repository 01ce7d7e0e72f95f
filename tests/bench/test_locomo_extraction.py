"""``remem bench locomo`` with a chat model as derive's Extractor (``--extraction-url``).

The model is the loopback stand-in of tests/llm/llm_standin.py (a real OpenAI-compatible HTTP
server; only the model is scripted, since no model good enough runs here): it answers one claim
for the turn that says "I run every morning" and no claims for any other turn, and records
every request, so the tests see what the bench sends and what recall then returns.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import remem
from remem.bench.locomo_bench import MEMORY_ID, run_locomo
from remem.bench.locomo_extraction import PROVIDER, ModelExtraction
from remem.cli.main import app
from tests.llm.llm_standin import Reply, ScriptedModelService

QUOTE = "I run every morning"


def _reply(request: dict[str, Any]) -> Reply:
    said = request["messages"][-1]["content"]
    claims = [{"key": "routine", "kind": "fact", "value": "runs every morning",
               "quote": QUOTE, "operation": "assert", "negated": False,
               "valid_at": None}] if QUOTE in said else []
    return Reply(content=json.dumps({"claims": claims}))


@pytest.fixture
def model() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    service = ScriptedModelService(answer=_reply)
    yield service.base_url, service.requests
    service.close()


def test_derive_asks_the_model_per_turn_and_recall_returns_its_fact(model, locomo_file: Path,
                                                                      tmp_path: Path) -> None:
    url, requests = model
    extraction = ModelExtraction(url, "standin")
    out = tmp_path / "out"
    doc = run_locomo(locomo_file, ks=(3,), out_dir=out, limit_conversations=1, keep_db=True,
                     extraction=extraction)
    assert doc["memory_config"]["extraction"] == {"provider": PROVIDER, "model": "standin",
                                                  "max_tokens": 384, "max_retries": 0}
    assert doc["ingest"]["items_derived"] == 1
    # one request per turn, each with that turn's text and nothing of the annotations
    assert len(requests) == 7 and all(r["max_tokens"] == 384 for r in requests)
    sent = json.dumps(requests)
    assert "adopted a kitten" in sent and "not read" not in sent and "unused" not in sent
    store = remem.open(out / "db" / "conv-a.db", providers=extraction.providers())
    try:
        got = store.memory(MEMORY_ID).recall(["thread:conv-a"], "What does Ann do every "
                                             "morning?", budget_tokens=2000, limit=5)
        assert [(i.value, tuple(i.sources)) for i in got.items] == [
            ("runs every morning", ("D2:3",))]
    finally:
        store.close()
    # the kept memory is reused only by a run with the same extractor
    again = run_locomo(locomo_file, ks=(3,), out_dir=out, limit_conversations=1,
                       reuse_db=True, extraction=extraction)
    assert again["ingest"]["per_conversation"][0]["reused_db"] and len(requests) == 7
    rules = run_locomo(locomo_file, ks=(3,), out_dir=out, limit_conversations=1, reuse_db=True)
    assert not rules["ingest"]["per_conversation"][0]["reused_db"]
    assert rules["ingest"]["items_derived"] == 0 and "extraction" not in rules["memory_config"]


def test_the_cli_passes_the_model_and_refuses_half_of_it(model, locomo_file: Path,
                                                          tmp_path: Path) -> None:
    url, requests = model
    res = CliRunner().invoke(app, ["--json", "bench", "locomo", "--data", str(locomo_file),
                                   "--k", "3", "--out", str(tmp_path / "cli"),
                                   "--limit-conversations", "1", "--extraction-url", url,
                                   "--extraction-model", "standin"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["ingest"]["items_derived"] == 1 and len(requests) == 7
    res = CliRunner().invoke(app, ["bench", "locomo", "--data", str(locomo_file),
                                   "--out", str(tmp_path / "half"), "--extraction-url", url])
    assert res.exit_code == 1
    assert "--extraction-url and --extraction-model go together" in res.output
    with pytest.raises(remem.InvalidInput):
        ModelExtraction("127.0.0.1:8080", "m")
