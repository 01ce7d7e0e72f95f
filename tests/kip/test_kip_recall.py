"""KIP seed §6 (and recall parts of §4): the compact briefing — typed items with epistemic
status and evidence refs, sources labelled, seven honest channels, constraints first,
evidence expansion pinned to the producing version, continuation and CursorMismatch, and
the token budget measured on the serialised KIP response."""

from __future__ import annotations

from remem.service.kip_briefing import CHANNELS, count_tokens

from kip.kit import U, PyClient, as_token


def _recall(py, query, **kw):
    out = py.kip("recall", {"query": query, **kw.pop("inp", {})}, **kw)
    return out, out.get("result")


def test_items_carry_status_and_evidence_and_sources_are_labelled_source(py):
    py.stage("s1", "I live in Lyon.")
    py.kip("observe", {"source_ref": "s1"}, key="o1")
    py.stage("s2", "My sister lives in Rome.")
    py.kip("observe", {"source_ref": "s2"}, key="o2")
    out, b = _recall(py, "where do I and my sister live")
    facts = [i for i in b["items"] if i["role"] == "fact"]
    sources = [i for i in b["items"] if i["role"] == "source"]
    assert [(f["text"], f["epistemic_status"], f["evidence_refs"]) for f in facts] == [
        ("home_city: Lyon", "accepted", ["s1"])]
    assert {s["ref"] for s in sources} >= {"s2"}
    assert all(s["epistemic_status"] == "not_applicable" and not s["action_eligible"]
               for s in sources)
    assert set(b["coverage"]["channels"]) == set(CHANNELS)
    assert out["status"] == "succeeded" and b["coverage"]["action_eligible"] is True


def test_unknown_is_distinct_from_a_stated_rejection(py):
    out, b = _recall(py, "Does the user eat meat?")
    assert b["items"] == [] and b["uncertainties"] == [
        "unknown: nothing recorded in scope answers this"]
    assert b["summary"].startswith("unknown")
    py.stage("s1", "No, I don't eat meat.")
    py.kip("observe", {"source_ref": "s1"}, key="o1")
    out, b = _recall(py, "Does the user eat meat?")
    [fact] = [i for i in b["items"] if i["role"] == "fact"]
    assert fact["text"] == "diet: vegetarian" and fact["epistemic_status"] == "accepted"
    assert fact["evidence_refs"] == ["s1"] and not b["summary"].startswith("unknown")


def test_a_task_scoped_rule_is_a_constraint_listed_first_whatever_the_query(py):
    task = "thread:deploy-9"
    py.memory.remember(task, "deploy_window", "Never deploy on Fridays.", kind="rule")
    py.memory.remember(task, "service_owner", "Maya")
    out, b = _recall(py, "who owns the service", scope=task)
    assert b["items"][0]["role"] == "constraint"
    assert b["items"][0]["text"] == "deploy_window: Never deploy on Fridays."
    assert [i["role"] for i in b["items"]].count("constraint") == 1
    assert b["coverage"]["channels"]["constraints"] == "complete"


def test_required_constraints_that_do_not_fit_give_result_limit_exceeded(py):
    task = "thread:deploy-9"
    for n in range(6):
        py.memory.remember(task, f"rule_{n}", "Always ask before touching production " * 8,
                           kind="rule")
    out, _ = _recall(py, "status", scope=task, budget={"max_output_tokens": 300})
    assert out["status"] == "failed" and out["error"]["code"] == "ResultLimitExceeded"


def test_retained_procedures_make_the_skills_channel_incomplete_never_not_applicable(py):
    py.memory.remember("agent:bot", "deploy_skill", "run make deploy then check /healthz",
                       kind="skill")
    out, b = _recall(py, "how to deploy", scope="agent:bot")
    assert b["coverage"]["channels"]["skills"] == "incomplete"
    assert out["status"] == "partial" and b["coverage"]["action_eligible"] is False
    procs = [i for i in b["items"] if i["role"] == "procedure"]
    assert procs and all(p["standing"] == "unverifiable" and not p["action_eligible"]
                         for p in procs)
    assert any(u.startswith("skills:") for u in b["uncertainties"])


def test_the_budget_bounds_the_serialised_response_and_truncation_continues(py):
    for n in range(8):
        py.memory.remember(U, f"pet_{n}", f"a cat named Whiskers number {n}")
    budget = 400
    out, b = _recall(py, "cat named Whiskers", budget={"max_output_tokens": budget})
    assert count_tokens(out, "o200k_base") <= budget
    assert out["status"] == "partial" and b["coverage"]["complete"] is False
    cont = b["continuation_ref"]
    first = {i["ref"] for i in b["items"]}
    nxt, b2 = _recall(py, "cat named Whiskers", inp={"target_ref": cont},
                      budget={"max_output_tokens": budget})
    assert nxt["status"] in ("succeeded", "partial")
    assert first.isdisjoint({i["ref"] for i in b2["items"]}) and b2["items"]
    changed, _ = _recall(py, "a dog named Rex", inp={"target_ref": cont})
    assert changed["error"]["code"] == "CursorMismatch"
    other_scope, _ = _recall(py, "cat named Whiskers", inp={"target_ref": cont},
                             scope="user:bob")
    assert other_scope["error"]["code"] == "CursorMismatch"
    py.memory.remember(U, "pet_9", "a cat named Whiskers number 9")  # the basis moved
    stale, _ = _recall(py, "cat named Whiskers", inp={"target_ref": cont})
    assert stale["error"]["code"] == "CursorMismatch"


def test_a_budget_below_the_advertised_minimum_is_refused_and_the_minimum_works(py):
    minimum = py.describe()["minimum_response_tokens"]
    small, _ = _recall(py, "anything", budget={"max_output_tokens": minimum // 2})
    assert small["error"]["code"] == "ResultLimitExceeded"
    fits, _ = _recall(py, "anything", budget={"max_output_tokens": minimum + 10})
    assert fits["status"] == "succeeded"


def test_evidence_expansion_reads_the_producing_version_never_a_newer_one(py):
    py.stage("s1", "I live in Lyon.")
    [old] = py.kip("observe", {"source_ref": "s1"}, key="o1")["result"]["memory_refs"]
    py.stage("s2", "Sorry, I live in Paris.")
    py.kip("revise", {"source_ref": "s2", "change_kind": "correction"}, key="r1")
    out = py.kip("recall", {"target_ref": old, "detail": "evidence"})
    b = out["result"]
    assert [i["text"] for i in b["items"]] == ["home_city: Lyon", "I live in Lyon."]
    assert b["items"][0]["epistemic_status"] != "accepted"
    assert any("superseded" in u for u in b["uncertainties"])
    brief = py.kip("recall", {"target_ref": old})["result"]
    assert [i["role"] for i in brief["items"]] == ["fact"]  # brief: no evidence expansion
    bob = PyClient(as_token(py.memory, "reader", "user:bob"))
    hidden = bob.kip("recall", {"target_ref": old}, scope="user:bob")
    missing = bob.kip("recall", {"target_ref": "itm_nope"}, scope="user:bob")
    assert hidden["error"]["code"] == missing["error"]["code"] == "NotFoundOrNotVisible"


def test_resume_reads_only_the_current_task_and_attention_is_unsupported(py):
    py.memory.remember("thread:a", "next_step", "migrate the database")
    py.memory.remember("thread:b", "next_step", "write the changelog")
    doc = {"kip_memory": "2.0", "operation": "recall",
           "scope": {"task_ref": "thread:a", "context_refs": ["thread:b"]},
           "input": {"query": "next step", "mode": "resume"}}
    from kip.kit import valid

    b = valid(py.memory.kip(doc))["result"]
    texts = [i["text"] for i in b["items"]]
    assert "next_step: migrate the database" in texts
    assert not any("changelog" in t for t in texts)
    assert b["coverage"]["scope"] == {"task_ref": "thread:a"}
    att, _ = _recall(py, "next step", inp={"mode": "attention"})
    assert att["error"]["code"] == "UnsupportedCapability"


def test_recall_never_writes(py):
    py.stage("s1", "I live in Lyon.")
    py.kip("observe", {"source_ref": "s1"}, key="o1")
    head = py.memory.store.head_seq("m1")
    for _ in range(3):
        _recall(py, "where do I live")
    assert py.memory.store.head_seq("m1") == head
