"""Prompts as data: versions, strict schemas, rendering, date resolution."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from pydantic import BaseModel, ConfigDict

from remem.domain.model import Kind
from remem.errors import ExtractionFailed, UnsupportedCapability
from remem.providers.prompts import EXTRACT_V1, JUDGE_V1, PROMPTS, get_prompt, strict_json_schema
from remem.providers.prompts.extract_v1 import (
    KEY_CATALOGUE,
    ExtractInput,
    ExtractReply,
    resolve_valid_at,
)
from remem.providers.rules import KEYS

PLUS8 = timezone(timedelta(hours=8))
SAID_AT = datetime(2026, 3, 5, 10, 0, tzinfo=PLUS8)


def objects(node: Any):
    if isinstance(node, dict):
        if node.get("type") == "object":
            yield node
        for value in node.values():
            yield from objects(value)
    elif isinstance(node, list):
        for value in node:
            yield from objects(value)


def test_every_prompt_is_registered_under_its_version():
    assert set(PROMPTS) == {"extract_v1", "judge_v1"}
    assert get_prompt("extract_v1", task="extract") is EXTRACT_V1
    assert get_prompt("judge_v1", task="judge") is JUDGE_V1


@pytest.mark.parametrize("version, task", [("extract_v9", "extract"), ("judge_v1", "extract")])
def test_an_unknown_version_names_the_known_ones(version, task):
    with pytest.raises(UnsupportedCapability, match="known: extract_v1"):
        get_prompt(version, task=task)


@pytest.mark.parametrize("spec", list(PROMPTS.values()), ids=list(PROMPTS))
def test_reply_schemas_are_strict(spec):
    schema = spec.json_schema()
    found = list(objects(schema))
    assert found
    for obj in found:
        assert obj["additionalProperties"] is False
        assert sorted(obj["required"]) == sorted(obj["properties"])
    text = repr(schema)
    assert "title" not in text and "default" not in text and "maxLength" not in text


def test_a_non_strict_reply_model_is_refused():
    class Loose(BaseModel):
        model_config = ConfigDict(extra="forbid")
        note: str | None = None

    with pytest.raises(TypeError, match="every object must"):
        strict_json_schema(Loose)


def test_extract_renders_the_time_with_its_offset_and_the_text_verbatim():
    text = "I pay $5 for ${coffee} and $$ tips >>> <<<"
    system, user = EXTRACT_V1.messages(ExtractInput(text=text, occurred_at=SAID_AT))
    assert system["role"] == "system" and user["role"] == "user"
    assert "Thursday, 2026-03-05T10:00+08:00" in user["content"]
    assert text in user["content"]
    assert "home_city (profile_slot)" in system["content"]
    assert ", ".join(k.value for k in Kind) in system["content"]


def test_the_key_catalogue_matches_the_rule_extractors_keys_and_kinds():
    assert {k: kind.value for k, (kind, _) in KEY_CATALOGUE.items()} == {
        k: spec.kind for k, spec in KEYS.items()}


def test_a_reply_validates_against_its_input_only_with_context():
    reply = '{"claims": [{"key": "home_city", "value": "Oslo", "kind": "profile_slot", ' \
            '"quote": "not in the text", "operation": "assert", "negated": false, ' \
            '"valid_at": "2030"}]}'
    assert ExtractReply.model_validate_json(reply, strict=True).claims[0].value == "Oslo"
    data = ExtractInput(text="I live in Oslo.", occurred_at=SAID_AT)
    with pytest.raises(ExtractionFailed) as info:
        EXTRACT_V1.parse(reply, data)
    assert info.value.details["reason"] in {"quote_not_in_text", "bad_date"}
    assert len(info.value.details["errors"]) == 2


@pytest.mark.parametrize("text, expected, precision", [
    ("2025", datetime(2025, 1, 1, tzinfo=PLUS8), "year"),
    ("2026-03", datetime(2026, 3, 1, tzinfo=PLUS8), "month"),
    ("2026-03-04", datetime(2026, 3, 4, tzinfo=PLUS8), "day"),
    ("2026-03-05T09:59", datetime(2026, 3, 5, 9, 59, tzinfo=PLUS8), "instant"),
    ("2026-03-05 01:00:00Z", datetime(2026, 3, 5, 9, 0, tzinfo=PLUS8), "instant"),
    ("2026-03-04T12:00:00.5-05:00", datetime(2026, 3, 5, 1, 0, 0, 500000, tzinfo=PLUS8),
     "instant"),
    ("2026-03-05T10:00", SAID_AT, "instant"),
])
def test_dates_resolve_into_the_turns_zone(text, expected, precision):
    when, got_precision = resolve_valid_at(text, SAID_AT)
    assert (when, got_precision) == (expected, precision)
    assert when.tzinfo is PLUS8


def test_a_named_zone_is_kept_with_its_offset_on_that_date():
    ny = ZoneInfo("America/New_York")
    when, _ = resolve_valid_at("2026-01-15", datetime(2026, 7, 1, tzinfo=ny))
    assert when.tzinfo is ny and when.utcoffset() == timedelta(hours=-5)


@pytest.mark.parametrize("text", ["2026-02-29", "2026-00", "26", "2026-3-5", "yesterday",
                                  "2026-03-05T10:00:01", "2027", "2026-03-05T25:00", "",
                                  "0000", "2025\n", "0001-01-01T00:00+08:00"])
def test_bad_or_future_dates_raise(text):
    with pytest.raises(ValueError):
        resolve_valid_at(text, SAID_AT.astimezone(timezone(timedelta(hours=-8))))


def test_judge_renders_items_as_json_lines_in_utc_iso():
    data = JUDGE_V1.input_type.model_validate({
        "existing": [{"item_id": "a", "key": "diet", "value": "vegan", "kind": "preference",
                      "valid_at": datetime(2025, 1, 1, tzinfo=UTC)}],
        "candidate": {"key": "diet", "value": "vegetarian", "kind": "preference",
                      "valid_at": "2026-01-01T00:00:00+01:00"}})
    user = JUDGE_V1.messages(data)[1]["content"]
    assert ('{"item_id": "a", "key": "diet", "kind": "preference", '
            '"valid_at": "2025-01-01T00:00:00Z", "value": "vegan"}') in user
    assert '"valid_at": "2026-01-01T00:00:00+01:00"' in user
