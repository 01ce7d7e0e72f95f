"""Capture and derive (issue 6): receipts, phases, idempotency, barriers, the job runner, and
the KIP acceptance scenarios. Real SQLite files, the real rule extractor, a real worker."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

import remem
from remem.errors import (
    IdempotencyConflict,
    InvalidInput,
    NotFoundOrNotVisible,
    PreconditionFailed,
    ResultLimitExceeded,
    UnsupportedCapability,
)
from remem.service.jobs.runner import Worker

U = "user:maya"
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def paused(db_path):
    """A store whose derive jobs wait for a worker (formation paused until we run one)."""
    s = remem.open(db_path, derive="worker")
    s.create_memory("m1")
    yield s
    s.close()


def kip(mem, operation, input_, *, scope=U, key=None, budget=None, **extra):
    req = {"kip_memory": "2.0", "operation": operation, "scope": {"task_ref": scope},
           "input": input_, **extra}
    if key:
        req["idempotency_key"] = key
    if budget:
        req["budget"] = budget
    return mem.kip(req)


# --- receipts, phases, idempotency -----------------------------------------------------------
def test_observe_moves_recorded_then_available_with_ordered_sequences(paused):
    mem = paused.memory("m1")
    r = mem.observe(U, "I live in Lyon.", source_id="t1", occurred_at=T0)
    assert r.phase == "recorded" and r.resolved_seq is None
    assert mem.inspect(U, "home_city").state == "empty"

    done = Worker(paused).run_until_idle()

    assert [d["status"] for d in done] == ["succeeded"]
    after = mem.receipt(r.receipt_id)
    assert after.phase == "available" and after.disposition == "formed"
    assert after.accepted_seq <= after.resolved_seq <= after.available_seq
    assert mem.inspect(U, "home_city").value == "Lyon"


def test_scenario_1_paused_formation_gives_pending_then_resumes(paused):
    mem = paused.memory("m1")
    mem.remember(U, "home_city", "Lyon", valid_at=T0 - timedelta(days=30))
    r = mem.observe(U, "I live in Lille now.", source_id="t2", occurred_at=T0)

    res = mem.recall(U, "where does maya live", budget_tokens=2000, after=[r.receipt_id],
                     deadline_ms=50)

    assert res.status == "pending" and res.action_eligible is False
    assert res.unresolved == [r.receipt_id]
    assert res.coverage["facts"] == "incomplete"  # Lyon is never presented as complete

    Worker(paused).run_until_idle()
    res = mem.recall(U, "where does maya live", budget_tokens=2000, after=[r.receipt_id])
    assert res.status == "succeeded" and res.action_eligible
    assert [i.value for i in res.items if i.key == "home_city"] == ["Lille"]
    assert paused.adapter.conn.execute("SELECT count(*) FROM receipts").fetchone()[0] == 1


def test_scenario_2_retry_after_restart_returns_the_original_receipt(db_path):
    s = remem.open(db_path)
    mem = s.create_memory("m1")
    first = mem.observe(U, "I'm allergic to peanuts.", source_id="t1", occurred_at=T0,
                        idempotency_key="k1")
    runs = len(mem.runs())
    s.close()

    s2 = remem.open(db_path)  # a restart
    mem2 = s2.memory("m1")
    again = mem2.observe(U, "I'm allergic to peanuts.", source_id="t1", occurred_at=T0,
                         idempotency_key="k1")
    assert again.replayed and again.receipt_id == first.receipt_id
    assert len(mem2.runs()) == runs  # nothing extracted again
    with pytest.raises(IdempotencyConflict):
        mem2.observe(U, "I'm allergic to shellfish.", source_id="t1", occurred_at=T0,
                     idempotency_key="k1")
    # issue 13.6: the same key and source id in another scope is another request
    other = mem2.observe("user:other", "I'm allergic to peanuts.", source_id="t1",
                         occurred_at=T0, idempotency_key="k1")
    assert not other.replayed and other.receipt_id != first.receipt_id
    assert other.scope == "user:other" and other.source_id == "user:other/t1"


def test_scenario_3_a_thread_instruction_stays_in_its_thread(store):
    mem = store.create_memory("m1")
    other = store.create_memory("m2")
    r = mem.observe("thread:a", "Please keep answers short.", source_id="a1", occurred_at=T0)
    assert mem.inspect("thread:a", "response_style").value is not None
    assert mem.inspect("thread:b", "response_style").state == "empty"
    assert mem.inspect(U, "response_style").state == "empty"
    res = mem.recall("thread:b", "how should answers be written", budget_tokens=2000)
    assert res.items == [] and res.sources == []
    with pytest.raises(NotFoundOrNotVisible):
        other.receipt(r.receipt_id)
    with pytest.raises(NotFoundOrNotVisible):
        other.recall("thread:a", "answers", budget_tokens=500, after=[r.receipt_id])


def test_scenario_4_a_critical_rule_survives_a_tiny_budget(store):
    mem = store.create_memory("m1")
    mem.remember("agent:bot", "units", "Always answer in metric units.", kind="rule")
    for i in range(40):
        mem.remember(U, f"unit_note_{i}", f"user mentioned units of measure case {i}")
    res = mem.recall([U, "agent:bot"], "which units should answers use", budget_tokens=400)
    kept_rule = any(i.key == "units" and i.constraint for i in res.items)
    assert kept_rule or res.coverage["constraints"] == "incomplete"
    assert kept_rule and res.truncated
    with pytest.raises(ResultLimitExceeded):
        mem.recall([U, "agent:bot"], "which units should answers use", budget_tokens=20)


def test_scenario_5_a_correction_rewrites_the_interval(store):
    mem = store.create_memory("m1")
    mem.remember(U, "timezone", "+08:00", valid_at=T0)
    i = mem.inspect(U, "timezone")
    out = mem.revise(U, "timezone", "+07:00", change_kind="correction",
                     expected_revision=i.revision, source_ref="t9")
    assert out["outcome"] == "corrected"
    assert mem.inspect(U, "timezone").value == "+07:00"
    between = mem.recall(U, "timezone", budget_tokens=2000, valid_at=T0 + timedelta(days=1))
    assert [x.value for x in between.items if x.key == "timezone"] == ["+07:00"]
    sup = [e for e in store.adapter.events("m1") if e["type"] == "item.superseded"]
    assert len(sup) == 1 and sup[0]["data"].get("correction") is True


def test_scenario_6_a_world_change_keeps_the_old_interval(store):
    mem = store.create_memory("m1")
    tz = timezone(timedelta(hours=8))
    mem.observe(U, "I live in Beijing.", source_id="s1",
                occurred_at=datetime(2026, 1, 10, 9, tzinfo=tz))
    out = mem.revise(U, "home_city", "Shanghai", change_kind="world_change",
                     changed_at=datetime(2026, 9, 1, tzinfo=tz), source_ref="s2")
    assert out["ended"] and mem.inspect(U, "home_city").value == "Shanghai"
    august = mem.recall(U, "where does maya live", budget_tokens=2000,
                        valid_at=datetime(2026, 8, 15, tzinfo=tz))
    assert [x.value for x in august.items if x.key == "home_city"] == ["Beijing"]
    corrections = [e for e in store.adapter.events("m1")
                   if e["type"] == "item.superseded" and e["data"].get("correction")]
    assert corrections == []  # nothing was marked as never true
    # a March message processed late does not change the current answer
    late = mem.observe(U, "I live in Beijing.", source_id="s0",
                       occurred_at=datetime(2026, 3, 2, 9, tzinfo=tz))
    assert late.phase == "available"
    assert mem.inspect(U, "home_city").value == "Shanghai"


def test_scenario_7_preferences_change_one_slot_without_conflict(store):
    mem = store.create_memory("m1")
    mem.observe(U, "I use dark mode. I use vim.", source_id="p1", occurred_at=T0)
    mem.observe(U, "Light mode now, please. I use light mode now.", source_id="p2",
                occurred_at=T0 + timedelta(days=2))
    assert mem.inspect(U, "ui_theme").value == "light"
    assert mem.inspect(U, "editor").value.lower() == "vim"
    assert mem.conflicts() == []


def test_scenario_8_unknown_is_distinct_from_a_stated_no(store):
    mem = store.create_memory("m1")
    out = kip(mem, "recall", {"query": "Is the user vegetarian?"})
    assert out["result"]["items"] == [] and out["result"]["sources"] == []
    assert out["knowledge"] == "unknown"
    mem.remember(U, "diet", "omnivore", kind="preference")
    out = kip(mem, "recall", {"query": "Is the user vegetarian?"})
    assert out["knowledge"] == "found"
    assert [i["value"] for i in out["result"]["items"] if i["key"] == "diet"] == ["omnivore"]


# --- derive rules -----------------------------------------------------------------------------
def test_only_the_users_own_statements_become_facts(store):
    mem = store.create_memory("m1")
    a = mem.observe(U, "You live in Paris, right?", role="assistant", source_id="x1",
                    occurred_at=T0)
    b = mem.observe(U, "My sister lives in Rome.", source_id="x2", occurred_at=T0)
    c = mem.observe(U, "If I moved to Oslo I'd need a coat.", source_id="x3", occurred_at=T0)
    assert {mem.receipt(r.receipt_id).disposition for r in (a, b, c)} == {"evidence_only"}
    assert mem.items(scope=U).items == []
    res = mem.recall(U, "Rome sister", budget_tokens=2000)
    assert res.sources[0].id == "x2" and res.items == []  # evidence, labelled source


def test_relative_dates_resolve_against_the_source_time_in_its_zone(store):
    mem = store.create_memory("m1")
    tz = timezone(timedelta(hours=9))
    mem.observe(U, "I moved to Osaka yesterday.", source_id="d1",
                occurred_at=datetime(2026, 5, 10, 1, 30, tzinfo=tz))
    [item] = mem.inspect(U, "home_city").current
    assert item.valid_at.startswith("2026-05-08T15:00")  # May 9 00:00 +09:00 in UTC


def test_a_failing_extractor_fails_the_run_and_the_receipt(db_path, model_service):
    """The model service is a loopback stand-in for a remote model (tests/llm fixture)."""
    from tests.llm.llm_standin import Reply

    s = remem.open(db_path, providers={"remote": {"type": "openai",
                                                  "base_url": model_service.base_url}})
    mem = s.create_memory("m1", {"extraction": {"provider": "remote", "model": "scripted"}})
    for _ in range(3):
        model_service.script(Reply(content="{not json"))
    r = mem.observe(U, "I live in Lyon.", source_id="f1", occurred_at=T0)
    got = mem.receipt(r.receipt_id)
    assert got.phase == "failed" and "not valid json" in got.reason.lower()
    runs = mem.runs()
    assert runs and all(x["status"] == "failed" for x in runs)
    res = mem.recall(U, "Lyon", budget_tokens=2000, after=[r.receipt_id])
    assert res.status == "partial" and not res.action_eligible and res.failed


def test_an_expired_lease_is_claimed_again(paused):
    mem = paused.memory("m1")
    mem.observe(U, "I live in Lyon.", source_id="t1", occurred_at=T0)
    adapter = paused.adapter
    now = datetime.now(UTC)
    from remem.domain.timefmt import to_iso
    job = adapter.claim_job("crashed", to_iso(now), to_iso(now - timedelta(seconds=1)))
    assert job is not None  # claimed by a worker that then "crashed" (lease already over)
    done = Worker(paused, worker_id="rescuer").run_until_idle()
    assert [d["job_id"] for d in done] == [job["job_id"]]
    assert mem.inspect(U, "home_city").value == "Lyon"


def test_consolidation_merges_duplicate_occurrences_and_rearms(store):
    mem = store.create_memory("m1", {"consolidation_interval_hours": 6})
    mem.remember(U, "allergies", "peanuts")
    mem.remember(U, "allergies", "Peanuts.")
    mem.remember(U, "allergies", "shellfish")
    mem.consolidate_now()
    out = mem.run_jobs()
    assert out[0]["kind"] == "consolidate" and out[0]["stats"]["merged"] == 1
    assert sorted(mem.inspect(U, "allergies").value) == ["peanuts", "shellfish"]
    assert any(e["type"] == "consolidation.completed" for e in store.adapter.events("m1"))
    nxt = store.adapter.job_scheduled("m1", "consolidate")
    from remem.domain.timefmt import from_iso

    ran = [r for r in mem.runs() if r["kind"] == "consolidate"][0]
    gap = from_iso(nxt["run_at"]) - from_iso(ran["finished_at"])
    assert timedelta(hours=5, minutes=59) <= gap <= timedelta(hours=6)  # re-armed at +6 h


# --- KIP binding --------------------------------------------------------------------------
def test_kip_errors(store):
    mem = store.create_memory("m1")
    with pytest.raises(UnsupportedCapability):
        kip(mem, "recall", {"query": "x"}, requires=["memory_learning"])
    with pytest.raises(UnsupportedCapability):
        kip(mem, "recall", {"query": "x"}, requires=["no_such_bundle"])
    with pytest.raises(UnsupportedCapability):
        kip(mem, "recall", {"query": "x"}, budget={"tokenizer": "gpt-17"})
    with pytest.raises(InvalidInput):
        kip(mem, "observe", {"source_ref": "s", "text": "hi"})  # no idempotency key
    with pytest.raises(InvalidInput):
        mem.kip({"kip_memory": "2.0", "operation": "recall", "scope": {"task_ref": "team-x"},
                 "input": {"query": "x"}})  # a label is not a scope: never widened
    r = kip(mem, "observe", {"source_ref": "s1", "text": "I live in Lyon."}, key="o1")
    assert r["status"] == "succeeded"
    rid = r["receipt"]["receipt_id"]
    head = store.adapter.head_seq("m1")
    with pytest.raises(PreconditionFailed):
        kip(mem, "recall", {"query": "x", "after": [rid], "time": {"as_of_seq": 1}})
    assert kip(mem, "recall", {"query": "x", "after": [rid],
                               "time": {"as_of_seq": head}})["status"] in ("succeeded",
                                                                           "partial")


def test_kip_feedback_keeps_its_origin_and_is_not_a_grade(store):
    mem = store.create_memory("m1")
    a = kip(mem, "feedback", {"text": "I think I answered well.", "role": "agent"}, key="f1")
    u = kip(mem, "feedback", {"text": "That answer was wrong.", "role": "user"}, key="f2")
    assert a["result"]["origin"] == "agent_statement"
    assert u["result"]["origin"] == "user_statement"
    assert a["result"]["graded"] is False
    assert mem.items(status="all").items == []  # nothing promoted to a claim


def test_kip_forget_semantic_and_payload_only(store):
    mem = store.create_memory("m1")
    kip(mem, "observe", {"source_ref": "s1", "text": "I'm allergic to kumquats."}, key="o1")
    [item] = mem.inspect(U, "allergies").current
    out = kip(mem, "forget", {"target_ref": "s1", "mode": "payload_only"}, key="g1")
    assert out["status"] == "succeeded"
    assert store.adapter.source("m1", "s1")["text"] is None
    assert mem.get(item.item_id).value == "kumquats"  # the derived claim stays
    out = kip(mem, "forget", {"target_ref": item.item_id, "mode": "semantic"}, key="g2")
    assert out["status"] == "succeeded" and out["result"]["state"] == "completed"
    assert mem.inspect(U, "allergies").state == "forgotten"


def test_a_separate_worker_process_forms_what_another_process_observed(tmp_path):
    """observe in one process (derive left to workers), `remem worker --once` in another."""
    import json
    import os
    import subprocess
    import sys

    db = str(tmp_path / "w.db")
    env = {**os.environ, "REMEM_DATABASE_URL": db, "REMEM_DERIVE": "worker"}
    cli = [sys.executable, "-m", "remem.cli.main"]
    subprocess.run([*cli, "memory", "create", "m"], env=env, check=True, capture_output=True)
    out = subprocess.run([*cli, "-m", "m", "--json", "observe", U, "I live in Porto.",
                          "--source-id", "t1"], env=env, check=True, capture_output=True,
                         text=True)
    receipt = json.loads(out.stdout)
    assert receipt["phase"] == "recorded"
    subprocess.run([*cli, "worker", "--once"], env=env, check=True, capture_output=True)
    got = subprocess.run([*cli, "-m", "m", "--json", "receipt", receipt["receipt_id"]],
                         env=env, check=True, capture_output=True, text=True)
    assert json.loads(got.stdout)["phase"] == "available"
    mem = remem.open(db).memory("m")
    assert mem.inspect(U, "home_city").value == "Porto"


def test_capture_advances_a_cursor_and_resending_duplicates_nothing(store):
    from remem.errors import CursorMismatch

    mem = store.create_memory("m1")
    turns = [{"id": "c1", "role": "user", "text": "I live in Lyon.",
              "occurred_at": "2026-03-01T09:00:00+01:00"},
             {"id": "c2", "role": "assistant", "text": "Noted, Lyon."}]
    first = mem.capture(U, "chat", "conv-1", turns)
    assert first["position"] == 2 and len(first["captured"]) == 2
    head = store.adapter.head_seq("m1")
    again = mem.capture(U, "chat", "conv-1", turns)
    assert again == {"position": 2, "captured": [], "skipped": 2}
    assert store.adapter.head_seq("m1") == head
    more = mem.capture(U, "chat", "conv-1", [*turns, {"id": "c3", "role": "user",
                                                      "text": "I speak Basque."}])
    assert more["position"] == 3 and [r["source_id"] for r in more["captured"]] == ["c3"]
    with pytest.raises(CursorMismatch):
        mem.capture(U, "chat", "conv-1", turns, expected_position=2)
    events = [e["type"] for e in store.adapter.events("m1")]
    assert events.count("capture.advanced") == 2
    assert mem.inspect(U, "languages").value == ["Basque"]
