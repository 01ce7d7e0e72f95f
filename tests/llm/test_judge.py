"""OpenAICompatJudge against the scripted stand-in for a remote model service; RuleJudge."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from llm_standin import Reply

from remem.domain.decision import Judgement, decide
from remem.domain.model import (
    Authority,
    Candidate,
    Cardinality,
    ItemState,
    ItemStatus,
    KeyState,
    Kind,
    OnChange,
    Outcome,
    Scope,
    Verdict,
)
from remem.errors import ArtifactUnavailable, ExtractionFailed, InvalidInput
from remem.providers.judge import Judge, RuleJudge
from remem.providers.llm import OpenAICompatJudge

T1 = datetime(2025, 1, 1, tzinfo=UTC)
T2 = datetime(2026, 3, 5, 10, 0, tzinfo=UTC)
EXISTING = [
    {"item_id": "itm_paris", "key": "home_city", "value": "Paris", "kind": "profile_slot",
     "valid_at": T1},
    {"item_id": "itm_lyon", "key": "hometown", "value": "Lyon", "kind": "profile_slot",
     "valid_at": "2020-05-01T00:00:00+02:00"},
]
CANDIDATE = {"key": "home_city", "value": "Berlin", "kind": "profile_slot", "valid_at": T2}


@pytest.fixture
def judge(model_service) -> OpenAICompatJudge:
    return OpenAICompatJudge(model_service.base_url, "remote-model", max_retries=0, timeout_s=10)


def failure(judge, existing=EXISTING, candidate=CANDIDATE) -> ExtractionFailed:
    with pytest.raises(ExtractionFailed) as info:
        judge.judge(existing, candidate)
    assert info.value.details["prompt_version"] == "judge_v1"
    return info.value


@pytest.mark.parametrize("verdict, target", [
    ("SUPERSEDE", "itm_paris"), ("MERGE", "itm_lyon"), ("NOOP", "itm_paris"),
    ("CONFLICT", "itm_paris"), ("CONFLICT", None), ("ADD", None), ("SUPERSEDE", None),
])
def test_a_valid_reply_becomes_a_judgement(model_service, judge, verdict, target):
    model_service.script({"verdict": verdict, "target": target})
    assert judge.judge(EXISTING, CANDIDATE) == Judgement(Verdict(verdict), target)


def test_a_target_sent_with_add_is_dropped(model_service, judge):
    model_service.script({"verdict": "ADD", "target": "itm_paris"})
    assert judge.judge(EXISTING, CANDIDATE) == Judgement(Verdict.ADD, None)


def test_the_request_narrows_target_to_the_given_ids_and_shows_items_and_candidate(
        model_service, judge):
    model_service.script({"verdict": "ADD", "target": None})
    judge.judge(EXISTING, CANDIDATE)
    body = model_service.requests[0]
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["name"] == "judge_v1"
    schema = fmt["json_schema"]["schema"]
    assert schema["properties"]["target"] == {"anyOf": [
        {"type": "string", "enum": ["itm_paris", "itm_lyon"]}, {"type": "null"}]}
    assert schema["required"] == ["verdict", "target"]
    user = body["messages"][1]["content"]
    assert '"item_id": "itm_paris"' in user and '"valid_at": "2025-01-01T00:00:00Z"' in user
    assert '"value": "Berlin"' in user and "2020-05-01T00:00:00+02:00" in user
    assert body["temperature"] == 0


def test_with_nothing_existing_the_answer_is_add_without_a_request(model_service, judge):
    assert judge.judge([], CANDIDATE) == Judgement(Verdict.ADD)
    assert model_service.requests == []


@pytest.mark.parametrize("reply, reason", [
    ({"verdict": "SUPERSEDE", "target": "itm_rome"}, "unknown_target"),
    ({"verdict": "REPLACE", "target": "itm_paris"}, "schema_violation"),
    ({"verdict": "supersede", "target": "itm_paris"}, "schema_violation"),
    ({"verdict": "NOOP"}, "schema_violation"),
    ({"verdict": "NOOP", "target": "itm_paris", "reason": "same"}, "schema_violation"),
    ({"verdict": "NOOP", "target": 1}, "schema_violation"),
    ('{"verdict": "NOOP", "target": "itm_', "malformed_json"),
    (Reply(content='{"verdict": "NO', finish_reason="length"), "truncated"),
    (Reply(content=""), "empty_reply"),
])
def test_invalid_replies_fail_with_a_reason(model_service, judge, reply, reason):
    model_service.script(reply)
    assert failure(judge).details["reason"] == reason


def test_an_error_status_is_artifact_unavailable(model_service, judge):
    model_service.script(Reply(status=503, body="{}"))
    with pytest.raises(ArtifactUnavailable):
        judge.judge(EXISTING, CANDIDATE)


@pytest.mark.parametrize("judge_type", [RuleJudge, OpenAICompatJudge])
@pytest.mark.parametrize("existing, candidate", [
    ([{**EXISTING[0], "valid_at": datetime(2025, 1, 1)}], CANDIDATE),  # naive time
    ([{**EXISTING[0], "kind": "mood"}], CANDIDATE),
    ([{**EXISTING[0], "extra": 1}], CANDIDATE),
    ([EXISTING[0], EXISTING[0]], CANDIDATE),  # same id twice
    (EXISTING, {"key": "home_city", "value": "Berlin"}),
    ("itm_paris", CANDIDATE),
])
def test_malformed_arguments_are_invalid_input_for_every_judge(model_service, judge_type,
                                                                existing, candidate):
    judge = (RuleJudge() if judge_type is RuleJudge
             else OpenAICompatJudge(model_service.base_url, "m"))
    with pytest.raises(InvalidInput):
        judge.judge(existing, candidate)
    assert model_service.requests == []


# --- RuleJudge ---------------------------------------------------------------------------------

def test_both_judges_fit_the_judge_protocol(model_service):
    assert isinstance(RuleJudge(), Judge)
    assert isinstance(OpenAICompatJudge(model_service.base_url, "m"), Judge)
    assert (RuleJudge.name, RuleJudge.version) == ("rules", "1")


@pytest.mark.parametrize("existing", [[], EXISTING, EXISTING[:1]])
def test_the_rule_judge_has_no_opinion(existing):
    assert RuleJudge().judge(existing, CANDIDATE) is None


def _key_state(on_change: OnChange) -> KeyState:
    scope = Scope.parse("user:alice")
    item = ItemState(item_id="itm_paris", claim_id="clm_paris", status=ItemStatus.CURRENT,
                     valid_at=T1, revision=1, kind=Kind.PROFILE_SLOT)
    return KeyState(scope=scope, key="home_city", items=(item,), revision=1,
                    cardinality=Cardinality.SINGLE, on_change=on_change)


@pytest.mark.parametrize("on_change, outcome", [
    (OnChange.SUPERSEDE, Outcome.SUPERSEDED), (OnChange.CONFLICT, Outcome.CONFLICT)])
def test_the_rule_judges_none_lets_the_decision_apply_the_keys_on_change(on_change, outcome):
    judgement = RuleJudge().judge(EXISTING[:1], CANDIDATE)
    candidate = Candidate(scope=Scope.parse("user:alice"), key="home_city", value="Berlin",
                          kind=Kind.PROFILE_SLOT, valid_at=T2)
    decision = decide(_key_state(on_change), candidate, memory_id="m1", claim_secret=None,
                      authority=Authority.AUTOMATIC, now=T2, content_hash="h",
                      judgement=judgement)
    assert decision.outcome is outcome
