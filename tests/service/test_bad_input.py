"""Bad input gets a typed error naming the field, and writes nothing (issue 2 "Bad input";
limits from the instantKV seed: scope/key 128 bytes, value 1,024, quote 512, source id 256)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from remem.errors import InvalidInput

GOOD = {"scope": "user:alice", "key": "home_city", "value": "Paris"}
AWARE = datetime(2024, 1, 1, tzinfo=UTC)
NAIVE = datetime(2024, 1, 1)


def _src(**fields):
    return {"source": {"id": "turn-1", "role": "user", **fields}}


CASES = [
    # (id, overrides of remember(...) arguments, field named by the error)
    ("scope-over-128-bytes", {"scope": "user:" + "a" * 124}, "scope"),
    ("scope-over-128-bytes-multibyte", {"scope": "user:" + "é" * 62}, "scope"),
    ("scope-unknown-kind", {"scope": "team:alpha"}, "scope"),
    ("scope-without-kind", {"scope": "alice"}, "scope"),
    ("scope-empty-id", {"scope": "user:"}, "scope"),
    ("scope-with-space", {"scope": "user: alice"}, "scope"),
    ("scope-not-a-string", {"scope": 42}, "scope"),
    ("key-over-128-bytes", {"key": "k" * 129}, "key"),
    ("key-not-snake-case", {"key": "Home City"}, "key"),
    ("key-with-dash", {"key": "home-city"}, "key"),
    ("key-empty", {"key": ""}, "key"),
    ("key-not-a-string", {"key": 7}, "key"),
    ("key-contains-value", {"key": "home_city_paris", "value": "Paris"}, "key"),
    ("key-contains-multiword-value", {"key": "lives_in_new_york", "value": "New York"}, "key"),
    ("key-contains-value-unsplit", {"key": "homecityparis", "value": "Paris"}, "key"),
    ("key-trailing-newline", {"key": "home_city\n"}, "key"),
    ("scope-trailing-newline", {"scope": "user:alice\n"}, "scope"),
    ("scope-control-character", {"scope": "user:al\x00ice"}, "scope"),
    ("value-over-1024-bytes", {"value": "x" * 1025}, "value"),
    ("value-over-1024-bytes-multibyte", {"value": "é" * 513}, "value"),
    ("value-object-over-1024-bytes", {"value": {"notes": "y" * 1030}}, "value"),
    ("value-empty", {"value": ""}, "value"),
    ("value-whitespace", {"value": "  \t\n "}, "value"),
    ("value-missing", {"value": None}, "value"),
    ("value-nan", {"value": float("nan")}, "value"),
    ("value-inf", {"value": float("inf")}, "value"),
    ("value-nested-minus-inf", {"value": {"t": [1.0, float("-inf")]}}, "value"),
    ("value-not-json", {"value": {1, 2}}, "value"),
    ("value-nested-not-json", {"value": {"tags": {1, 2}}}, "value"),
    ("value-nested-bytes", {"value": ["ok", b"raw"]}, "value"),
    ("value-beyond-json-integers", {"value": 2**53 + 1}, "value"),
    ("kind-unknown", {"kind": "gossip"}, "kind"),
    ("quote-over-512-bytes", _src(text="q" * 513), "source.text"),
    ("source-id-over-256-bytes", {"source": {"id": "s" * 257}}, "source.id"),
    ("source-id-blank", {"source": {"id": "   "}}, "source.id"),
    ("source-role-unknown", _src(role="robot"), "source.role"),
    ("source-unknown-field", _src(colour="red"), "source"),
    ("source-not-an-object", {"source": "turn-1"}, "source"),
    ("valid-until-naive", {"valid_at": AWARE, "valid_until": NAIVE}, "valid_until"),
    ("valid-until-before-valid-at", {"valid_at": AWARE, "valid_until": datetime(2023, 1, 1,
                                                                              tzinfo=UTC)},
     "valid_until"),
]


def _call(memory, overrides):
    args = {**GOOD, **overrides}
    return memory.remember(args.pop("scope"), args.pop("key"), args.pop("value"), **args)


def _snapshot(store, memory):
    return (memory.status()["head_seq"], store.adapter.dump(memory.id))


@pytest.mark.parametrize(("overrides", "field"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_bad_input_is_refused_naming_the_field_and_nothing_is_written(store, memory, overrides,
                                                                    field):
    memory.remember("user:alice", "diet", "vegan")  # a non-empty ledger to stay unchanged
    before = _snapshot(store, memory)
    with pytest.raises(InvalidInput) as info:
        _call(memory, overrides)
    err = info.value
    assert err.details.get("field") == field, err.details
    assert field in err.message, err.message
    assert err.code == "invalid_input" and err.to_dict()["code"] == "invalid_input"
    assert _snapshot(store, memory) == before


@pytest.mark.parametrize(("overrides", "field"), [
    ({"valid_at": NAIVE}, "valid_at"),
    ({"source": {"id": "t", "occurred_at": NAIVE}}, "source.occurred_at"),
], ids=["valid-at-naive", "occurred-at-naive"])
def test_a_naive_datetime_is_refused_naming_its_field(store, memory, overrides, field):
    before = _snapshot(store, memory)
    with pytest.raises(InvalidInput) as info:
        _call(memory, overrides)
    assert info.value.details.get("field") == field
    assert field in info.value.message
    assert _snapshot(store, memory) == before


@pytest.mark.parametrize("overrides", [{"valid_at": NAIVE},
                                       {"source": {"id": "t", "occurred_at": NAIVE}},
                                       {"source": {"id": "t",
                                                   "occurred_at": "2024-01-01T00:00:00"}}],
                         ids=["valid-at", "occurred-at", "occurred-at-text"])
def test_a_naive_datetime_is_refused_and_nothing_is_written(store, memory, overrides):
    before = _snapshot(store, memory)
    with pytest.raises(InvalidInput) as info:
        _call(memory, overrides)
    assert "time zone" in info.value.message
    assert _snapshot(store, memory) == before


@pytest.mark.parametrize(("overrides", "ok"), [
    ({"scope": "user:" + "a" * 123}, True),  # exactly 128 bytes
    ({"key": "k" * 128}, True),
    ({"value": "x" * 1024}, True),
    ({"value": "é" * 512}, True),
    (_src(text="q" * 512), True),
    ({"source": {"id": "s" * 256}}, True),
    ({"key": "home_city", "value": "Home"}, False),  # the key contains the value
    ({"key": "home_city", "value": "Lyon"}, True),
    ({"key": "name", "value": "Nam"}, True),  # a name inside a word of the key is fine
    ({"key": "name", "value": "Na"}, True),
    ({"key": "likes", "value": "Li"}, True),
    ({"value": 0}, True),
    ({"value": False}, True),
    ({"value": ["a", {"b": 1.5}]}, True),
], ids=lambda v: str(v)[:40] if not isinstance(v, bool) else str(v))
def test_limits_are_inclusive_at_the_boundary(memory, overrides, ok):
    if ok:
        assert _call(memory, overrides).outcome == "created"
    else:
        with pytest.raises(InvalidInput):
            _call(memory, overrides)


def test_correct_validates_its_value_before_checking_the_revision(store, memory):
    memory.remember("user:alice", "home_city", "Paris")
    before = _snapshot(store, memory)
    with pytest.raises(InvalidInput) as info:
        memory.correct("user:alice", "home_city", "   ", expected_revision=1)
    assert info.value.details["field"] == "value"
    assert _snapshot(store, memory) == before


def test_inspect_refuses_an_unknown_scope_instead_of_widening(memory):
    with pytest.raises(InvalidInput) as info:
        memory.inspect("everyone", "home_city")
    assert info.value.details["field"] == "scope"
