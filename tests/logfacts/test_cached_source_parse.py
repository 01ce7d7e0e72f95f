"""The Source block is parsed exactly as the Log+Facts schema ($defs/Source) states it."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

import remem
from remem.errors import InvalidInput
from remem.service.cached_source import CachedSource, parse_cached_source

#: $defs/Source of the Log+Facts schema 1.3.0, copied beside this test.
SCHEMA_PATH = Path(__file__).with_name("source_schema.json")
GOOD = {"kind": "http-api", "uri": "https://api.example.com/v1/rate",
        "freshness": {"ttlSeconds": 300, "lastVerifiedAt": "2026-06-01T12:00:00Z",
                      "etag": "\"v1\"", "sourceVersion": "rev-7"},
        "refresh": {"strategy": "on-read", "handler": "http-api", "priority": 5}}


def _schema_source() -> dict:
    doc = json.loads(SCHEMA_PATH.read_text())
    doc.pop("$comment")
    return doc


def test_the_model_has_exactly_the_schemas_fields_and_enums():
    src = _schema_source()
    assert set(CachedSource.model_fields) == set(src["properties"])
    fresh = CachedSource.model_fields["freshness"].annotation.model_fields
    assert {f.alias or n for n, f in fresh.items()} == set(
        src["properties"]["freshness"]["properties"])
    refresh = CachedSource.model_fields["refresh"].annotation.model_fields
    assert set(refresh) == set(src["properties"]["refresh"]["properties"])
    for kind in src["properties"]["kind"]["enum"]:
        parse_cached_source({**GOOD, "kind": kind})
    for strategy in src["properties"]["refresh"]["properties"]["strategy"]["enum"]:
        parse_cached_source({**GOOD, "refresh": {"strategy": strategy}})


def test_a_parsed_block_round_trips_to_a_schema_valid_block():
    src = _schema_source()
    out = parse_cached_source(GOOD).to_schema()
    assert out == GOOD
    jsonschema.validate(out, src)  # $defs/Source has no $ref: valid on its own


@pytest.mark.parametrize("bad, field", [
    ({**GOOD, "secret": 1}, "cached_source.secret"),
    ({**GOOD, "kind": "ftp"}, "cached_source.kind"),
    ({**GOOD, "freshness": {"ttlSeconds": True}}, "cached_source.freshness.ttlSeconds"),
    ({**GOOD, "freshness": {"ttlSeconds": -1}}, "cached_source.freshness.ttlSeconds"),
    ({**GOOD, "freshness": {"ttl_seconds": 5}}, "cached_source.freshness.ttl_seconds"),
    ({**GOOD, "freshness": {"lastVerifiedAt": "2026-06-01T12:00:00"}},
     "cached_source.freshness.lastVerifiedAt"),
    ({**GOOD, "refresh": {"strategy": "hourly"}}, "cached_source.refresh.strategy"),
    ({**GOOD, "refresh": {"priority": 1}}, "cached_source.refresh.strategy"),
    ({**GOOD, "refresh": {"strategy": "manual", "extra": 1}}, "cached_source.refresh.extra"),
    ({k: v for k, v in GOOD.items() if k != "freshness"}, "cached_source.freshness"),
    ({**GOOD, "uri": "x" * 3000}, "cached_source.uri"),
    ("http-api", "cached_source"),
])
def test_a_block_outside_the_schema_is_refused_naming_the_field(bad, field):
    with pytest.raises(InvalidInput) as exc:
        parse_cached_source(bad)
    assert exc.value.details["field"] == field


def test_remember_with_a_bad_block_writes_nothing(tmp_path):
    store = remem.open(tmp_path / "r.db")
    mem = store.create_memory("m1")
    head = store.adapter.head_seq("m1")
    with pytest.raises(InvalidInput):
        mem.remember("user:alice", "eur_usd", 1.08,
                     cached_source={**GOOD, "refresh": {"strategy": "sometimes"}})
    assert store.adapter.head_seq("m1") == head
    assert mem.items().total == 0
    store.close()
