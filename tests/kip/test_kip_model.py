"""KIP with a model extractor (a loopback stand-in for a remote model): a processing failure
is a failed response with its reason, and a model that proposes procedural memory never gets
it written through revise or observe (memory_basic)."""

from __future__ import annotations

from tests.llm.llm_standin import Reply

from kip.kit import U


def test_a_failed_formation_is_a_failed_response_with_receipt_and_reason(modelled):
    py, model = modelled
    for _ in range(3):
        model.script(Reply(content="{not json"))
    py.stage("s1", "I live in Lyon.")
    out = py.kip("observe", {"source_ref": "s1"}, key="o1")
    assert out["status"] == "failed" and out["progress"]["phase"] == "failed"
    assert "json" in out["progress"]["reason"].lower()
    assert out["error"]["message"] == out["progress"]["reason"]
    rid = out["receipt"]["receipt_ref"]
    rec = py.kip("recall", {"query": "where do I live", "after": [rid]})
    assert rec["status"] == "partial" and rec["result"]["coverage"]["action_eligible"] is False
    assert rec["result"]["coverage"]["channels"]["failures"] == "incomplete"


def test_procedural_claims_proposed_by_the_model_are_not_written_by_revise(modelled):
    py, model = modelled
    model.script({"claims": [{"key": "deploy_steps", "value": "run make deploy",
                              "kind": "skill", "quote": "always run make deploy",
                              "operation": "assert", "negated": False, "valid_at": None}]})
    py.stage("s1", "From now on always run make deploy.")
    head = py.memory.store.head_seq("m1")
    out = py.kip("revise", {"source_ref": "s1", "change_kind": "world_change"}, key="r1")
    assert out["status"] == "failed" and out["error"]["code"] == "UnsupportedCapability"
    assert py.memory.store.head_seq("m1") == head
    assert py.memory.items(scope=U, status="all").items == []


def test_procedural_claims_proposed_by_the_model_are_not_formed_by_observe(modelled):
    py, model = modelled
    model.script({"claims": [
        {"key": "deploy_steps", "value": "run make deploy", "kind": "skill",
         "quote": "always run make deploy", "operation": "assert", "negated": False,
         "valid_at": None},
        {"key": "home_city", "value": "Lyon", "kind": "profile_slot", "quote": "I live in Lyon",
         "operation": "assert", "negated": False, "valid_at": None}]})
    py.stage("s1", "I live in Lyon. Always run make deploy.")
    out = py.kip("observe", {"source_ref": "s1"}, key="o1")
    assert out["status"] == "succeeded"
    keys = [v.key for v in py.memory.items(scope=U, status="all").items]
    assert keys == ["home_city"]  # the skill was not written; the fact was
    model.script({"claims": [{"key": "deploy_steps", "value": "run make deploy",
                              "kind": "lesson", "quote": "always run make deploy",
                              "operation": "assert", "negated": False, "valid_at": None}]})
    py.stage("s2", "Always run make deploy.")
    only = py.kip("observe", {"source_ref": "s2"}, key="o2")
    assert only["progress"]["disposition"] == "skipped" and only["result"]["memory_refs"] == []
    assert [v.key for v in py.memory.items(scope=U, status="all").items] == ["home_city"]
