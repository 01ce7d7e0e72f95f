"""KickSide write path: the judge is asked at a ledger head and its verdict commits only there.

Both backends. A judge stand-in writes to the memory before it answers, so a write racing
the derive job is deterministic: the first verdict was formed on a state that no longer holds,
the writer refuses it, and the job asks again on the new state.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from service.kickside_kit import T0, ScriptedJudge, with_judge  # noqa: F401

import remem
from remem.domain.decision import Judgement
from remem.domain.model import Verdict


@pytest.fixture
def mem(store_url):
    s = remem.open(store_url)
    yield s.create_memory("m1")
    s.close()


def _live(mem, key):
    return {i.value: i for i in mem.items(scope="user:alice", key=key).items}


def test_a_write_racing_the_judge_refuses_the_verdict_and_the_job_decides_again(mem):
    paris = mem.remember("user:alice", "home_city", "Paris", valid_at=T0)

    def race_then_supersede(existing, candidate):
        mem.remember("user:alice", "home_city", "Berlin", valid_at=T0 + timedelta(hours=1))
        return Judgement(Verdict.SUPERSEDE, existing[0]["item_id"])

    def conflict_with(existing, candidate):
        return Judgement(Verdict.CONFLICT, existing[0]["item_id"])

    judge = with_judge(mem, ScriptedJudge([race_then_supersede, conflict_with])).judge
    mem.observe("user:alice", "I live in Lyon.", occurred_at=T0 + timedelta(hours=2))

    # The judge was asked twice: first on [Paris], then on the state the racer left: [Berlin].
    assert [[e["value"] for e in ex] for ex, _ in judge.calls] == [["Paris"], ["Berlin"]]
    live = _live(mem, "home_city")
    # The second verdict (CONFLICT) was applied; the refused SUPERSEDE of Paris never was.
    assert set(live) == {"Berlin", "Lyon"}
    assert live["Berlin"].status == live["Lyon"].status == "conflict"
    assert live["Berlin"].conflict_group == live["Lyon"].conflict_group is not None
    assert mem.get(paris.item_id).superseded_by == live["Berlin"].item_id
    assert mem.owner.verify()["ok"]  # the ledger stays verifiable


def test_an_unmoved_head_commits_the_first_verdict_without_asking_again(mem):
    mem.remember("user:alice", "home_city", "Paris", valid_at=T0)
    judge = with_judge(mem, ScriptedJudge(
        [lambda ex, c: Judgement(Verdict.SUPERSEDE, ex[0]["item_id"])])).judge
    mem.observe("user:alice", "I live in Lyon.", occurred_at=T0 + timedelta(hours=2))
    assert len(judge.calls) == 1
    assert set(_live(mem, "home_city")) == {"Lyon"}


def test_a_head_that_keeps_moving_fails_the_derive_run_as_retryable(mem):
    mem.remember("user:alice", "home_city", "Paris", valid_at=T0)
    n = iter(range(100))

    def always_race(existing, candidate):
        mem.remember("user:alice", "likes", f"tea {next(n)}")
        return Judgement(Verdict.SUPERSEDE, existing[0]["item_id"])

    judge = with_judge(mem, ScriptedJudge([always_race])).judge
    receipt = mem.observe("user:alice", "I live in Lyon.", occurred_at=T0 + timedelta(hours=2))
    assert len(judge.calls) >= mem.writer.max_attempts
    assert "Lyon" not in _live(mem, "home_city")  # a stale verdict never committed
    failed = [r for r in mem.runs() if r["status"] == "failed"]
    assert failed and "head moved" in failed[0]["reason"].lower()
    assert mem.receipt(receipt.receipt_id).phase in ("recorded", "failed")
