"""KickSide ``deactivate`` and ``queryable`` beyond Python: a session's end brings
consolidation forward from the CLI, over HTTP (a real ``remem serve``) and when an agent
``Session`` closes; ``query`` (items with ``meta.node_type``, ``meta.similarity``,
``meta.created_at``) over HTTP and the CLI. Principals are checked by the service: a reader or
another user's writer is refused and moves nothing. Both backends."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from service.kickside_kit import T0, store  # noqa: F401

from _plugins.cli_in_process import run_cli
from remem.agent.session import Session
from remem.domain.timefmt import to_iso
from remem.testing.served import Server

ALICE, BOB = "user:alice", "user:bob"


@pytest.fixture
def mem(store):
    return store.create_memory("m1")


def cli(url: str, *args: str) -> dict:
    out = run_cli(["--db", url, "--memory", "m1", "--json", *args], text=True)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def consolidation_due(mem) -> str:
    return mem.store.job_scheduled("m1", "consolidate")["run_at"]


def say(mem, conv: str, turn_id: str, text: str, hours: int) -> None:
    mem.capture(ALICE, "chat", conv, [{"id": turn_id, "role": "user", "text": text,
                                       "occurred_at": (T0 + timedelta(hours=hours)).isoformat()}])


def test_deactivate_over_http_captures_the_tail_and_brings_consolidation_forward(store_url,
                                                                                 mem):
    armed = consolidation_due(mem)
    assert armed > to_iso(datetime.now(UTC) + timedelta(hours=23))  # armed a day ahead
    tokens = {name: mem.create_token(role, subject)[0] for name, (role, subject) in {
        "alice": ("writer", ALICE), "alice_reader": ("reader", ALICE),
        "bob": ("writer", BOB)}.items()}
    body = {"scope": ALICE, "host_id": "s1", "turns": [
        {"id": "t1", "role": "user", "text": "I live in Lyon.",
         "occurred_at": T0.isoformat()}]}
    with Server(store_url, startup_s=60) as srv, httpx.Client(base_url=srv.base,
                                                              timeout=30) as http:
        def post(who: str, payload: dict) -> httpx.Response:
            return http.post("/memory/m1/deactivate", json=payload,
                             headers={"Authorization": f"Bearer {tokens[who]}"})

        assert post("bob", body).status_code == 403  # not bob's scope
        assert post("alice_reader", body).status_code == 403
        assert post("alice", {**body, "surprise": 1}).status_code == 422  # typed, closed
        assert consolidation_due(mem) == armed and mem.items(scope=ALICE).total == 0
        r = post("alice", body)
        assert r.status_code == 202, r.text
        out = r.json()
        assert [c["source_id"] for c in out["captured"]["captured"]] == ["user:alice/t1"]
        assert out["consolidation"]["kind"] == "consolidate"
        assert out["consolidation"]["run_at"] == consolidation_due(mem) < armed
        assert out["consolidation"]["run_at"] <= to_iso(datetime.now(UTC))
        again = post("alice", body).json()  # the same tail again captures nothing new
        assert again["captured"]["captured"] == [] and again["captured"]["skipped"] == 1
    assert mem.inspect(ALICE, "home_city").value == "Lyon"
    assert [j["kind"] for j in mem.run_jobs()] == ["consolidate"]


def test_deactivate_from_the_cli_brings_consolidation_forward(store_url, mem):
    armed = consolidation_due(mem)
    out = cli(store_url, "deactivate", "--scope", ALICE, "--session", "s7")
    assert out["captured"] is None
    assert out["consolidation"]["run_at"] == consolidation_due(mem) < armed
    assert [j["kind"] for j in mem.run_jobs()] == ["consolidate"]


def test_closing_an_agent_session_deactivates_it(mem):
    armed = consolidation_due(mem)
    with Session(mem, user_scope=ALICE, agent_scope="agent:bot",
                 conversation_id="conv9") as session:
        session.capture_turn("user", "I live in Lyon.", turn_id="m1")
        assert consolidation_due(mem) == armed  # not before the session ends
    assert session.closed and consolidation_due(mem) < armed
    assert session.close() is None  # closing again does nothing
    assert [j["kind"] for j in mem.run_jobs()] == ["consolidate"]


def test_query_over_http_and_cli_returns_each_current_claim_once_with_meta(store_url, mem):
    say(mem, "c1", "t1", "I live in Lyon.", 1)
    say(mem, "c2", "t2", "I live in Lyon.", 3)  # an occurrence of the same claim
    mem.remember(ALICE, "diet", "vegetarian", kind="preference")
    mem.remember(BOB, "home_city", "Rome")
    assert len(mem.items(scope=ALICE, key="home_city").items) == 2
    reader, _ = mem.create_token("reader", ALICE)
    with Server(store_url, startup_s=60) as srv, httpx.Client(
            base_url=srv.base, timeout=30,
            headers={"Authorization": f"Bearer {reader}"}) as http:
        r = http.post("/memory/m1/query", json={"scopes": [ALICE],
                                                "text": "which city does she live in"})
        assert r.status_code == 200, r.text
        hits = r.json()["results"]
        assert [h["value"] for h in hits].count("Lyon") == 1
        assert {h["scope"] for h in hits} == {ALICE}
        sims = [h["meta"]["similarity"] for h in hits]
        assert sims == sorted(sims, reverse=True) and 0 < sims[0] <= 1
        assert {h["meta"]["node_type"] for h in hits} == {"profile_slot", "preference"}
        created = datetime.fromisoformat(hits[0]["meta"]["created_at"])
        assert abs((datetime.now(UTC) - created).total_seconds()) < 600
        assert http.post("/memory/m1/query", json={"scopes": [BOB], "text": "city"}
                         ).status_code == 403
        assert http.post("/memory/m1/query", json={"scopes": [ALICE], "text": "city",
                                                   "limit": 0}).status_code == 422
    out = cli(store_url, "query", "where does alice live", "--scope", ALICE, "--limit", "1")
    assert [(h["key"], h["value"]) for h in out["results"]] == [("home_city", "Lyon")]
    assert set(out["results"][0]["meta"]) == {"node_type", "similarity", "created_at"}
