"""KickSide maintenance and status: runs with failures in status, ``reembed --force``, and
``resummarize`` from Python, the CLI and HTTP (a real ``remem serve``). Both backends."""

from __future__ import annotations

import json
from datetime import timedelta

import httpx
import pytest
from service.kickside_kit import T0, ScriptedJudge, store, with_judge  # noqa: F401

from _plugins.cli_in_process import run_cli
from remem.errors import ExtractionFailed
from remem.testing.served import Server


@pytest.fixture
def mem(store):
    return store.create_memory("m1")


def cli(url: str, *args: str) -> dict:
    out = run_cli(["--db", url, "--memory", "m1", "--json", *args], text=True)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_status_lists_runs_and_keeps_failures_with_their_reason(mem):
    mem.remember("user:alice", "home_city", "Paris", valid_at=T0)

    def down(existing, candidate):
        raise ExtractionFailed("The judge's reply did not parse.", reason="malformed_json")

    with_judge(mem, ScriptedJudge([down]))
    mem.observe("user:alice", "I live in Lyon.", occurred_at=T0 + timedelta(hours=1))
    mem.observe("user:alice", "Nice weather today.", occurred_at=T0 + timedelta(hours=2))
    status = mem.status()
    failed = status["failed_runs"]
    assert [r["kind"] for r in failed] == ["derive"]
    assert "did not parse" in failed[0]["reason"]
    assert {r["status"] for r in status["runs"]} == {"failed", "succeeded"}
    assert all("Lyon" not in json.dumps(r) for r in status["runs"])  # no memory text


def test_reembed_recomputes_only_outdated_vectors_unless_forced(mem):
    mem.remember("user:alice", "home_city", "Paris")
    mem.remember("user:alice", "diet", "vegetarian")
    plain = mem.reembed()
    assert plain["embedded"] == 0 and plain["documents"] >= 2
    forced = mem.reembed(force=True)
    assert forced["embedded"] == forced["documents"] == plain["documents"]
    assert not forced["switched"]
    hit = mem.recall("user:alice", "where does she live", budget_tokens=300)
    assert "Paris" in hit.text


def test_reembed_force_and_resummarize_from_the_cli(store_url, mem):
    mem.remember("user:alice", "allergies", "Peanuts.")
    dup = mem.remember("user:alice", "allergies", "peanuts")
    forced = cli(store_url, "reembed", "--force")
    assert forced["embedded"] == forced["documents"] > 0
    out = cli(store_url, "resummarize", "--run")
    assert [r["kind"] for r in out["ran"]] == ["consolidate"]
    assert mem.get(dup.item_id).status == "superseded"


def test_resummarize_and_status_over_http(store_url, mem):
    admin, _ = mem.create_token("admin", "admin")
    writer, _ = mem.create_token("writer", "user:alice")
    with Server(store_url, startup_s=60) as srv, httpx.Client(base_url=srv.base,
                                                              timeout=30) as http:
        refused = http.post("/memory/m1/resummarize",
                            headers={"Authorization": f"Bearer {writer}"})
        assert refused.status_code == 403
        r = http.post("/memory/m1/resummarize", headers={"Authorization": f"Bearer {admin}"})
        assert r.status_code == 202
        job = r.json()
        assert job["kind"] == "consolidate"
        assert job["job_id"] == mem.store.job_scheduled("m1", "consolidate")["job_id"]
        assert mem.run_jobs()[0]["kind"] == "consolidate"
        status = http.get("/memory/m1/status",
                          headers={"Authorization": f"Bearer {admin}"}).json()
        assert status["runs"][0]["kind"] == "consolidate"
        assert status["failed_runs"] == []


def test_query_returns_current_items_with_node_type_similarity_and_created_at(store, mem):
    from datetime import UTC, datetime

    from remem.errors import PermissionDenied
    from remem.service.tokens import Tokens

    old = mem.remember("user:alice", "home_city", "Paris", valid_at=T0)
    mem.remember("user:alice", "home_city", "Lyon", valid_at=T0 + timedelta(days=1))
    mem.remember("user:alice", "diet", "vegetarian", kind="preference")
    mem.remember("user:bob", "home_city", "Rome")
    hits = mem.query("user:alice", "which city does she live in", limit=5)
    assert [h["value"] for h in hits][0] == "Lyon"
    assert old.item_id not in [h["id"] for h in hits]  # superseded: not current
    assert {h["scope"] for h in hits} == {"user:alice"}
    sims = [h["meta"]["similarity"] for h in hits]
    assert sims == sorted(sims, reverse=True) and 0 < sims[0] <= 1
    assert {h["meta"]["node_type"] for h in hits} == {"fact", "preference"}  # the kinds
    created = datetime.fromisoformat(hits[0]["meta"]["created_at"])
    assert abs((datetime.now(UTC) - created).total_seconds()) < 600
    token, _ = mem.create_token("reader", "user:bob")
    bob = store.memory("m1", principal=Tokens(store).authenticate(token))
    with pytest.raises(PermissionDenied):
        bob.query("user:alice", "city")
