"""The timeline geometry (pure): one bar per version on a shared time axis."""

from __future__ import annotations

from datetime import UTC, datetime

from remem.ui.timeline import LABEL_PX, WIDTH_PX, timeline

NOW = datetime(2024, 3, 1, tzinfo=UTC)


def _v(item_id, rev, valid_at, invalid_at=None, status="superseded", value="x"):
    return {"item_id": item_id, "revision": rev, "valid_at": valid_at,
            "invalid_at": invalid_at, "status": status, "value": value}


def test_bars_follow_validity_and_an_open_interval_runs_to_the_axis_end():
    tl = timeline([_v("b", 2, "2024-02-01T00:00:00+00:00", None, "current", "Lyon"),
                   _v("a", 1, "2024-01-01T00:00:00+00:00", "2024-02-01T00:00:00+00:00",
                      value="Paris")], now=NOW, selected="b")
    first, second = tl.bars
    assert (first.item_id, second.item_id) == ("a", "b")  # oldest first
    assert first.x_px == LABEL_PX and not first.open
    assert first.x_px + first.width_px == second.x_px  # Paris ends where Lyon begins
    assert second.open and second.selected
    assert second.x_px + second.width_px == WIDTH_PX - 10  # open: runs to now
    assert second.y_px > first.y_px and tl.height_px > second.y_px
    assert [label for _, label in tl.ticks][0] == "2024-01-01"


def test_an_interval_of_zero_length_is_still_visible_and_labels_are_cut():
    tl = timeline([_v("a", 1, "2024-03-01T00:00:00+00:00", "2024-03-01T00:00:00+00:00",
                      value="a very long value indeed")], now=NOW)
    assert tl.bars[0].width_px >= 3
    assert tl.bars[0].label == "r1 a very long valu…"  # 16 characters of the value
