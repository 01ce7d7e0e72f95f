"""Time windows of recall/items filters: a span reaching before year 1 is invalid input."""

from __future__ import annotations

import pytest


def test_a_window_reaching_before_year_one_is_invalid_input_not_an_overflow():
    from datetime import datetime, timezone

    from remem.domain.filters import parse_window
    from remem.errors import InvalidInput

    now = datetime(2026, 5, 1, tzinfo=timezone.utc)
    for spec in ("last 999999 days", "last 999999 weeks", {"gte": "999999 weeks ago"}):
        with pytest.raises(InvalidInput, match="before the year 1"):
            parse_window("recorded_at", spec, now)
    early = datetime(1, 1, 2, tzinfo=timezone.utc)
    with pytest.raises(InvalidInput, match="before the year 1"):
        parse_window("recorded_at", "last 2 days", early)
    assert parse_window("recorded_at", "last 1 days", early).gte.startswith("0001-01-01")
