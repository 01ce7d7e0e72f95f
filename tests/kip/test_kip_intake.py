"""KIP seed §3 and §5 through the intents in process: request and scope, staged sources,
idempotent intake, receipts, phases and read barriers. Every response (and every accepted
request) is validated against the schema by the kit."""

from __future__ import annotations

import pytest

from remem.service.jobs.runner import Worker

from kip.kit import U, PyClient, as_token, request, valid


def test_an_observe_of_a_staged_source_forms_memory_and_succeeds_when_available(py):
    py.stage("s1", "I live in Lyon.")
    out = py.kip("observe", {"source_ref": "s1"}, key="observe:s1")
    assert out["status"] == "succeeded"
    assert out["receipt"]["operation"] == "observe" and out["receipt"]["space_id"] == "m1"
    p = out["progress"]
    assert (p["phase"], p["disposition"]) == ("available", "formed")
    assert out["receipt"]["accepted_seq"] <= p["resolved_seq"] <= p["available_seq"]
    [ref] = out["result"]["memory_refs"]
    assert py.memory.get(ref).value == "Lyon"


def test_a_replay_returns_the_original_acknowledgement_and_learns_nothing_new(py):
    py.stage("s1", "I live in Lyon.")
    first = py.kip("observe", {"source_ref": "s1"}, key="k1")
    head = py.memory.store.head_seq("m1")
    again = py.kip("observe", {"source_ref": "s1"}, key="k1")
    assert again["receipt"] == first["receipt"]
    assert py.memory.store.head_seq("m1") == head  # a retry is never new evidence
    py.stage("s2", "I live in Paris.")
    clash = py.kip("observe", {"source_ref": "s2"}, key="k1")
    assert clash["status"] == "failed" and clash["error"]["code"] == "IdempotencyConflict"
    assert py.memory.inspect(U, "home_city").value == "Lyon"


def test_a_missing_source_and_another_users_source_fail_the_same_way(py):
    py.stage("bob-1", "I live in Rome.", scope="user:bob")
    alice = PyClient(as_token(py.memory, "writer", U))
    missing = alice.kip("observe", {"source_ref": "nope"}, key="a")
    foreign = alice.kip("observe", {"source_ref": "bob-1"}, key="b")
    in_other_scope = py.kip("observe", {"source_ref": "bob-1"}, key="c")  # staged elsewhere
    for out in (missing, foreign, in_other_scope):
        assert out["status"] == "failed"
        assert (out["error"]["code"], out["error"]["category"]) == ("NotFoundOrNotVisible",
                                                                    "data")
    assert missing["error"]["message"].replace("nope", "X") == \
        foreign["error"]["message"].replace("bob-1", "X")
    assert py.memory.items(scope="user:bob").items == []  # nothing formed from bob's source


def test_staging_checks_the_digest_of_the_exact_bytes(py):
    from remem.errors import InvalidInput

    with pytest.raises(InvalidInput, match="digest"):
        py.memory.stage_source(U, "I live in Lyon.", source_ref="s1",
                               digest="sha256:" + "0" * 64)
    assert py.memory.store.source("m1", "s1") is None
    staged = py.stage("s1", "I live in Lyon. ")
    assert staged["digest"].startswith("sha256:") and staged["replayed"] is False


@pytest.mark.parametrize(("doc", "field"), [
    (request("observe", {"source_ref": "s1", "text": "I like tea."}), "input"),
    ({**request("observe", {"source_ref": "s1"}), "idempotency_key": None}, "idempotency_key"),
    ({k: v for k, v in request("observe", {"source_ref": "s1"}).items()
      if k != "idempotency_key"}, "<root>"),
    (request("feedback", {"source_ref": "s1", "role": "user"}), "input"),
    (request("revise", {"key": "diet", "value": "vegan", "kind": "skill"}), "input"),
    (request("recall", {"query": "x"}, idempotency_key="k"), "<root>"),
])
def test_requests_outside_the_schema_are_refused_and_write_nothing(py, doc, field):
    py.stage("s1", "I like tea.")
    head = py.memory.store.head_seq("m1")
    out = valid(py.memory.kip(doc))
    assert out["status"] == "failed" and out["error"]["code"] == "InvalidInput"
    assert out["error"]["details"]["field"] == field
    assert py.memory.store.head_seq("m1") == head


def test_a_scope_label_is_not_a_scope_and_nothing_widens(py):
    out = py.kip("recall", {"query": "where"}, scope="team-x")
    assert out["status"] == "failed" and out["error"]["code"] == "InvalidInput"
    no_scope = py.kip("recall", {"query": "where"}, scope=None)
    assert no_scope["error"]["code"] == "InvalidInput"  # the owner has no single default
    maya = PyClient(as_token(py.memory, "reader", U))
    assert maya.kip("recall", {"query": "where"}, scope=None)["status"] == "succeeded"
    assert maya.describe()["default_scope"] == {"task_ref": U}
    doc = {**request("recall", {"query": "x"}), "scope": {"task_ref": U,
                                                          "context_refs": ["user:bob"]}}
    other = valid(maya.memory.kip(doc))
    assert other["status"] == "failed" and other["error"]["code"] == "NotAuthorized"


def test_unserved_bundles_and_contracts_are_unsupported_capabilities(py):
    for extra in ({"requires": ["memory_learning"]}, {"requires": ["memory_durable"]},
                  {"requires_contract": "KIP-3.0"}):
        out = py.kip("recall", {"query": "x"}, **extra)
        assert out["error"]["code"] == "UnsupportedCapability", extra
    assert py.kip("recall", {"query": "x"}, requires=["memory_basic"])["status"] == "succeeded"
    wrong_space = py.kip("recall", {"query": "x"}, space={"id": "m2"})
    assert wrong_space["error"]["code"] == "NotFoundOrNotVisible"


def test_paused_formation_is_pending_then_the_barrier_is_met(paused):
    store, py = paused
    py.stage("s1", "I live in Lyon.")
    obs = py.kip("observe", {"source_ref": "s1"}, key="o1")
    assert obs["status"] == "pending" and obs["progress"] == {
        "receipt_ref": obs["receipt"]["receipt_ref"], "phase": "recorded"}
    rid = obs["receipt"]["receipt_ref"]
    head = store.adapter.head_seq("m1")
    waiting = py.kip("recall", {"query": "where does the user live", "after": [rid]},
                     budget={"deadline_ms": 1})
    brief = waiting["result"]
    assert waiting["status"] == "pending" and brief["coverage"]["action_eligible"] is False
    assert brief["coverage"]["pending_receipts"] == [rid]
    assert brief["after"][0]["phase"] == "recorded"
    assert store.adapter.head_seq("m1") == head  # recall never writes
    Worker(store).run_until_idle()
    done = py.kip("recall", {"query": "where does the user live", "after": [rid]})
    assert done["status"] == "succeeded" and done["result"]["coverage"]["action_eligible"]
    assert done["result"]["after"][0]["phase"] == "available"
    assert any(i["text"] == "home_city: Lyon" for i in done["result"]["items"])


def test_an_after_receipt_of_another_scope_is_not_visible(py):
    py.stage("b1", "I live in Rome.", scope="user:bob")
    rid = py.kip("observe", {"source_ref": "b1"}, scope="user:bob", key="b")["receipt"][
        "receipt_ref"]
    maya = PyClient(as_token(py.memory, "reader", U))
    out = maya.kip("recall", {"query": "x", "after": [rid]})
    assert out["error"]["code"] == "NotFoundOrNotVisible"


def test_a_fixed_as_of_older_than_a_barrier_is_a_failed_precondition(py):
    py.stage("s1", "I live in Lyon.")
    rid = py.kip("observe", {"source_ref": "s1"}, key="o")["receipt"]["receipt_ref"]
    out = py.kip("recall", {"query": "x", "after": [rid], "time": {"as_of_seq": 1}})
    assert out["error"]["code"] == "PreconditionFailed"
    head = py.memory.store.head_seq("m1")
    ok = py.kip("recall", {"query": "x", "after": [rid], "time": {"as_of_seq": head}})
    assert ok["status"] == "succeeded"
    hist = py.kip("recall", {"query": "x", "time": {"as_of_seq": 1}})
    assert hist["error"]["code"] == "UnsupportedCapability"


def test_a_source_restating_a_forgotten_claim_is_skipped_not_learned(py):
    py.stage("s1", "I'm allergic to kumquats.")
    [ref] = py.kip("observe", {"source_ref": "s1"}, key="o1")["result"]["memory_refs"]
    assert py.kip("forget", {"target_ref": ref, "mode": "semantic"}, key="f1")[
        "status"] == "succeeded"
    py.stage("s2", "I'm allergic to kumquats.")
    out = py.kip("observe", {"source_ref": "s2"}, key="o2")
    assert out["progress"]["disposition"] == "skipped" and out["result"]["memory_refs"] == []
    assert out["result"]["summary"].startswith("skipped")


def test_a_replay_after_the_source_text_was_erased_returns_the_original_receipt(py):
    py.stage("s1", "I live in Lyon.")
    first = py.kip("observe", {"source_ref": "s1"}, key="k1")
    py.kip("forget", {"target_ref": "s1", "mode": "payload_only"}, key="g1")
    again = py.kip("observe", {"source_ref": "s1"}, key="k1")
    assert again["status"] == "succeeded" and again["receipt"] == first["receipt"]
    fresh = py.kip("observe", {"source_ref": "s1"}, key="k2")  # not a replay: text is gone
    assert fresh["error"]["code"] == "NotFoundOrNotVisible"


def test_a_task_scoped_observation_stays_in_its_task(py):
    py.stage("t1", "I live in Lyon.", scope="thread:t1")
    [ref] = py.kip("observe", {"source_ref": "t1"}, scope="thread:t1", key="o")["result"][
        "memory_refs"]
    assert py.memory.get(ref).scope == "thread:t1"
    b = py.kip("recall", {"query": "where do I live"})["result"]
    assert b["items"] == []  # user:maya never sees the thread's fact or source


def test_evidence_only_input_is_disclosed_never_presented_as_knowledge(py):
    py.stage("a1", "You live in Paris, right?", role="assistant")
    out = py.kip("observe", {"source_ref": "a1"}, key="o")
    assert out["progress"]["disposition"] == "evidence_only"
    assert out["result"]["memory_refs"] == []
    b = py.kip("recall", {"query": "Paris"})["result"]
    assert [i["role"] for i in b["items"]] == ["source"]
    assert any(u.startswith("evidence only") for u in b["uncertainties"])
