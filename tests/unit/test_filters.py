"""domain.filters: pure parsing and evaluation of filters, windows and metadata."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from remem.domain.filters import (
    MAX_METADATA_BYTES,
    MetaTest,
    Window,
    parse_filter,
    parse_metadata,
    time_point,
)
from remem.errors import InvalidInput

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize("text, expected", [
    ("now", "2026-06-01T12:00:00.000000Z"),
    ("7 days ago", "2026-05-25T12:00:00.000000Z"),
    ("last 24 hours", "2026-05-31T12:00:00.000000Z"),
    ("1 week ago", "2026-05-25T12:00:00.000000Z"),
    ("90 minutes ago", "2026-06-01T10:30:00.000000Z"),
    ("2026-05-01T10:00:00+02:00", "2026-05-01T08:00:00.000000Z"),
])
def test_time_points_resolve_against_the_given_now(text, expected):
    assert time_point(text, NOW, "t") == expected


@pytest.mark.parametrize("text", ["yesterday", "7 months ago", "last week", "-3 days ago",
                                  "2026-13-01T00:00:00Z", 7, None])
def test_anything_else_is_not_a_time(text):
    with pytest.raises(InvalidInput, match="is not a time"):
        time_point(text, NOW, "t")


@pytest.mark.parametrize("text", ["2026-05-01", "2026-05-01T10:00:00"])
def test_a_time_without_a_zone_is_refused_saying_so(text):
    with pytest.raises(InvalidInput, match="no time zone"):
        time_point(text, NOW, "t")


def test_a_last_n_window_ends_now_and_bounds_hold_as_written():
    w = parse_filter({"valid_at": "last 7 days"}, NOW).valid_at
    assert w == Window(gte="2026-05-25T12:00:00.000000Z", lte="2026-06-01T12:00:00.000000Z")
    assert w.holds("2026-05-25T12:00:00.000000Z") and not w.holds("2026-06-01T12:00:00.000001Z")
    assert not Window(gt="a").holds("a") and Window(gte="a").holds("a")
    assert not w.holds(None)


def test_metadata_tests_compare_json_types_strictly():
    assert MetaTest("n", "eq", 1).holds({"n": 1})
    assert not MetaTest("n", "eq", 1).holds({"n": True})
    assert not MetaTest("n", "eq", 1).holds({"n": "1"})
    assert MetaTest("n", "gt", 1.5).holds({"n": 2})  # int and float are both numbers
    assert not MetaTest("n", "gt", 1).holds({"n": "2"})
    assert MetaTest("d", "gte", "2026-01").holds({"d": "2026-02-01"})
    assert MetaTest("n", "ne", 1).holds({}) and not MetaTest("n", "eq", None).holds({})
    assert MetaTest("n", "eq", None).holds({"n": None})
    assert MetaTest("t", "nin", ["a"]).holds({"t": ["b", "c"]})
    assert not MetaTest("t", "gt", 0).holds({"t": [1]})


def test_set_conditions_combine_allowed_and_refused_values():
    f = parse_filter({"kind": {"in": ["fact", "preference"], "ne": "fact"}}, NOW)
    assert f.kind.holds("preference") and not f.kind.holds("fact")
    assert not f.kind.holds("rule")
    assert f.only_items and not parse_filter({"valid_at": "last 1 days"}, NOW).only_items


def test_metadata_limits_are_exact():
    at_limit = {"k": "x" * (MAX_METADATA_BYTES - len('{"k":""}'))}
    assert parse_metadata(at_limit) == at_limit
    with pytest.raises(InvalidInput, match="2048"):
        parse_metadata({"k": at_limit["k"] + "x"})
    assert parse_metadata({f"k{i}": i for i in range(32)}) is not None
    assert parse_metadata({}) == {} and parse_metadata(None) is None


def test_a_window_reaching_before_year_one_is_invalid_input_not_an_overflow():
    from remem.domain.filters import parse_window

    now = datetime(2026, 5, 1, tzinfo=UTC)
    for spec in ("last 999999 days", "last 999999 weeks", {"gte": "999999 weeks ago"}):
        with pytest.raises(InvalidInput, match="before the year 1"):
            parse_window("recorded_at", spec, now)
    early = datetime(1, 1, 2, tzinfo=UTC)
    with pytest.raises(InvalidInput, match="before the year 1"):
        parse_window("recorded_at", "last 2 days", early)
    assert parse_window("recorded_at", "last 1 days", early).gte.startswith("0001-01-01")
