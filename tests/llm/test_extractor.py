"""OpenAICompatExtractor against the scripted stand-in for a remote model service."""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from llm_standin import Reply

from remem.errors import ArtifactUnavailable, ExtractionFailed, InvalidInput
from remem.providers.llm import OpenAICompatExtractor
from remem.providers.prompts import EXTRACT_V1
from remem.providers.rules import ExtractedClaim

PLUS8 = timezone(timedelta(hours=8))
SAID_AT = datetime(2026, 3, 5, 10, 0, tzinfo=PLUS8)
TEXT = "Last year I moved to Berlin. I'm vegetarian, and my sister lives in Rome."


def claim(**over) -> dict:
    base = {"key": "home_city", "value": "Berlin", "kind": "profile_slot",
            "quote": "Last year I moved to Berlin.", "operation": "assert", "negated": False,
            "valid_at": "2025"}
    return {**base, **over}


@pytest.fixture
def extractor(model_service) -> OpenAICompatExtractor:
    return OpenAICompatExtractor(model_service.base_url, "remote-model", max_retries=0,
                                 timeout_s=10)


def failure(extractor, text: str = TEXT, at: datetime = SAID_AT) -> ExtractionFailed:
    with pytest.raises(ExtractionFailed) as info:
        extractor.extract(text, role="user", occurred_at=at)
    assert info.value.details["prompt_version"] == "extract_v1"
    return info.value


# --- valid replies ---------------------------------------------------------------------------

def test_a_valid_reply_becomes_claims_with_dates_resolved_in_the_turns_zone(model_service,
                                                                            extractor):
    model_service.script({"claims": [
        claim(),
        claim(key="diet", value="vegetarian", kind="preference", quote="I'm vegetarian",
              valid_at=None),
        claim(key="timezone", value="+08:00", quote="I moved to Berlin",
              valid_at="2026-03-04T21:30:00Z"),
    ]})
    got = extractor.extract(TEXT, role="user", occurred_at=SAID_AT)
    assert got == [
        ExtractedClaim(key="home_city", value="Berlin", kind="profile_slot",
                       quote="Last year I moved to Berlin.",
                       valid_at=datetime(2025, 1, 1, tzinfo=PLUS8), valid_at_precision="year"),
        ExtractedClaim(key="diet", value="vegetarian", kind="preference",
                       quote="I'm vegetarian", valid_at=SAID_AT),
        ExtractedClaim(key="timezone", value="+08:00", kind="profile_slot",
                       quote="I moved to Berlin",
                       valid_at=datetime(2026, 3, 5, 5, 30, tzinfo=PLUS8)),
    ]
    assert all(c.valid_at.tzinfo is PLUS8 for c in got)


def test_date_only_and_month_answers_keep_a_named_zone_and_say_their_precision(model_service,
                                                                              extractor):
    paris = ZoneInfo("Europe/Paris")
    at = datetime(2026, 7, 10, 9, 0, tzinfo=paris)
    model_service.script({"claims": [claim(valid_at="2026-07-09"),
                                     claim(key="employer", value="ACME", valid_at="2026-02")]})
    got = extractor.extract(TEXT, role="user", occurred_at=at)
    assert [(c.valid_at, c.valid_at.tzinfo, c.valid_at_precision) for c in got] == [
        (datetime(2026, 7, 9, tzinfo=paris), paris, "day"),
        (datetime(2026, 2, 1, tzinfo=paris), paris, "month"),
    ]
    assert got[1].valid_at.utcoffset() == timedelta(hours=1)  # winter time in February


def test_typed_values_negation_and_retraction_come_through(model_service, extractor):
    model_service.script({"claims": [
        claim(key="diet", value="vegetarian", kind="preference", quote="I'm vegetarian",
              operation="retract", negated=True, valid_at=None),
        claim(key="age", value=34, kind="fact", quote="I'm vegetarian", valid_at=None),
        claim(key="uses_vim", value=True, kind="preference", quote="I'm vegetarian",
              valid_at=None)]})
    got = extractor.extract(TEXT, role="user", occurred_at=SAID_AT)
    assert [(c.value, c.operation, c.negated) for c in got] == [
        ("vegetarian", "retract", True), (34, "assert", False), (True, "assert", False)]


def test_an_empty_claim_list_is_a_valid_answer(model_service, extractor):
    model_service.script({"claims": []})
    assert extractor.extract("Hello there!", role="user", occurred_at=SAID_AT) == []


def test_repeated_claims_are_returned_once(model_service, extractor):
    model_service.script({"claims": [claim(), claim(quote="I moved to Berlin")]})
    assert len(extractor.extract(TEXT, role="user", occurred_at=SAID_AT)) == 1


def test_quotes_match_across_case_spacing_and_curly_apostrophes(model_service, extractor):
    model_service.script({"claims": [claim(quote="i\u2019m   VEGETARIAN")]})
    got = extractor.extract(TEXT, role="user", occurred_at=SAID_AT)
    assert got[0].quote == "i\u2019m   VEGETARIAN"


def test_a_quote_over_512_bytes_is_cut_to_a_prefix(model_service, extractor):
    text = "I live in Berlin " + "é" * 400
    model_service.script({"claims": [claim(quote=text, valid_at=None)]})
    quote = extractor.extract(text, role="user", occurred_at=SAID_AT)[0].quote
    assert len(quote.encode()) <= 512 and text.startswith(quote) and len(quote) > 200


# --- the request -------------------------------------------------------------------------------

def test_the_request_carries_the_strict_schema_the_prompt_and_the_turn_time(model_service,
                                                                           extractor):
    model_service.script({"claims": []})
    extractor.extract(TEXT, role="user", occurred_at=SAID_AT)
    body = model_service.requests[0]
    assert body["model"] == "remote-model" and body["temperature"] == 0
    assert body["response_format"] == {"type": "json_schema", "json_schema": {
        "name": "extract_v1", "strict": True, "schema": EXTRACT_V1.json_schema()}}
    system, user = body["messages"]
    assert system["role"] == "system"
    assert "Only facts the user states about themselves" in system["content"]
    assert "2026-03-05T10:00+08:00" in user["content"] and "Thursday" in user["content"]
    assert TEXT in user["content"]
    assert model_service.headers[0]["authorization"] == "Bearer unused"
    assert extractor.version == "extract_v1"


@pytest.mark.parametrize("role", ["assistant", "tool", "system", "owner"])
def test_turns_that_are_not_the_users_make_no_request_and_no_claims(model_service, extractor,
                                                                     role):
    assert extractor.extract("I live in Paris.", role=role, occurred_at=SAID_AT) == []
    assert model_service.requests == []


def test_a_naive_time_is_refused_before_any_request(model_service, extractor):
    with pytest.raises(InvalidInput):
        extractor.extract(TEXT, role="user", occurred_at=datetime(2026, 3, 5))
    assert model_service.requests == []


# --- replies that fail -------------------------------------------------------------------------

def test_a_structural_error_outranks_a_quote_error(model_service, extractor):
    model_service.script({"claims": [claim(quote="I moved to Munich"), claim(kind="mood")]})
    assert failure(extractor).details["reason"] == "schema_violation"


def test_failure_messages_do_not_repeat_the_text(model_service, extractor):
    model_service.script({"claims": [claim(key="Berlin Berlin", quote="I moved to Munich",
                                           valid_at="when I was in Berlin")]})
    err = failure(extractor)
    assert "Berlin" not in err.message and "Munich" not in err.message
    assert len(err.details["errors"]) == 3


def test_malformed_json_fails_with_its_reason(model_service, extractor):
    model_service.script('{"claims": [{"key": "home_city",')
    err = failure(extractor)
    assert err.details["reason"] == "malformed_json" and "not valid JSON" in err.message


@pytest.mark.parametrize("reply, where", [
    ({"facts": []}, "claims"),
    ({"claims": [claim(extra="x")]}, "claims.0.extra"),
    ({"claims": [{k: v for k, v in claim().items() if k != "kind"}]}, "claims.0.kind"),
    ({"claims": [claim(key="Home City")]}, "claims.0.key"),
    ({"claims": [claim(kind="opinion")]}, "claims.0.kind"),
    ({"claims": [claim(operation="maybe")]}, "claims.0.operation"),
    ({"claims": [claim(negated="no")]}, "claims.0.negated"),
    ({"claims": [claim(value="x" * 1025)]}, "claims.0.value"),
    ({"claims": [claim(value={"city": "Berlin"})]}, "claims.0.value"),
    ({"claims": [claim(quote="  ")]}, "claims.0.quote"),
    (["not", "an", "object"], "<reply>"),
])
def test_schema_violations_fail_with_the_location(model_service, extractor, reply, where):
    model_service.script(reply)
    err = failure(extractor)
    assert err.details["reason"] == "schema_violation"
    assert any(line.startswith(where) for line in err.details["errors"]), err.details["errors"]


def test_a_quote_not_in_the_text_fails(model_service, extractor):
    model_service.script({"claims": [claim(quote="I moved to Munich")]})
    err = failure(extractor)
    assert err.details["reason"] == "quote_not_in_text"
    assert "claims.0.quote" in err.message and "Munich" not in err.message


@pytest.mark.parametrize("valid_at", ["2026-02-30", "2025-13", "last year", "2026-03-06",
                                      "2026-03-05T10:01:00+08:00", "2026-03-05T02:01Z"])
def test_a_bad_or_future_date_fails(model_service, extractor, valid_at):
    model_service.script({"claims": [claim(valid_at=valid_at)]})
    err = failure(extractor)
    assert err.details["reason"] == "bad_date", err.details


@pytest.mark.parametrize("reply, reason", [
    (Reply(content='{"claims": [{"key": "ho', finish_reason="length"), "truncated"),
    (Reply(content=None, refusal="I can't help with that."), "refusal"),
    (Reply(content=""), "empty_reply"),
    (Reply(content=None), "empty_reply"),
])
def test_cut_off_refused_and_empty_replies_fail(model_service, extractor, reply, reason):
    model_service.script(reply)
    assert failure(extractor).details["reason"] == reason


def test_an_error_status_is_artifact_unavailable(model_service, extractor):
    model_service.script(Reply(status=400, body='{"error": {"message": "no json_schema"}}'))
    with pytest.raises(ArtifactUnavailable) as info:
        extractor.extract(TEXT, role="user", occurred_at=SAID_AT)
    assert info.value.details["status"] == 400


def test_an_unreachable_service_is_artifact_unavailable(model_service):
    url = model_service.base_url
    model_service.close()
    extractor = OpenAICompatExtractor(url, "m", max_retries=0, timeout_s=2)
    with pytest.raises(ArtifactUnavailable, match="unreachable"):
        extractor.extract(TEXT, role="user", occurred_at=SAID_AT)


def test_without_the_openai_package_the_error_says_what_to_install(model_service, monkeypatch):
    monkeypatch.setitem(sys.modules, "openai", None)
    extractor = OpenAICompatExtractor(model_service.base_url, "m")
    with pytest.raises(ArtifactUnavailable, match=r"pip install 'remem\[llm\]'"):
        extractor.extract(TEXT, role="user", occurred_at=SAID_AT)


def test_constructor_checks_its_settings_and_does_no_io():
    with pytest.raises(InvalidInput):
        OpenAICompatExtractor("", "m")
    with pytest.raises(InvalidInput):
        OpenAICompatExtractor("http://127.0.0.1:9/v1", "m", max_tokens=0)
    OpenAICompatExtractor("http://127.0.0.1:9/v1", "m")  # nothing listens there; no error


def test_utc_turns_stay_utc(model_service, extractor):
    model_service.script({"claims": [claim(valid_at="2025-12-31T23:00:00+01:00")]})
    got = extractor.extract(TEXT, role="user", occurred_at=datetime(2026, 1, 2, tzinfo=UTC))
    assert got[0].valid_at == datetime(2025, 12, 31, 22, 0, tzinfo=UTC)
    assert got[0].valid_at.tzinfo is UTC
