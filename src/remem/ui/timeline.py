"""The key's timeline: every version's validity interval as a bar on a time axis (pure).

:func:`timeline` turns item views (dicts with ``valid_at``, ``invalid_at``, ``status``,
``revision``, ``value``, ``item_id``) into the geometry ``templates/_timeline.svg`` draws.
Open intervals run to the axis end (``open=True``: drawn with an arrow).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

WIDTH_PX = 720
LABEL_PX = 150
ROW_PX = 26
AXIS_PX = 28
TICKS = 4


@dataclass(frozen=True)
class Bar:
    item_id: str
    label: str
    status: str
    x_px: float
    width_px: float
    y_px: float
    open: bool
    selected: bool
    title: str


@dataclass(frozen=True)
class Timeline:
    bars: list[Bar]
    ticks: list[tuple[float, str]]
    width_px: int
    height_px: int
    label_px: int
    row_px: int


def _at(s: str | None) -> datetime | None:
    return datetime.fromisoformat(s) if s else None


def timeline(versions: list[dict], *, now: datetime, selected: str | None = None) -> Timeline:
    """Bars for ``versions`` (oldest first), on an axis from the earliest ``valid_at`` to
    ``now`` (or the latest time named, if later)."""
    rows = sorted(versions, key=lambda v: (v["valid_at"], v["revision"]))
    starts = [_at(v["valid_at"]) for v in rows]
    ends = [_at(v.get("invalid_at")) for v in rows]
    t0 = min(starts, default=now)
    t1 = max([now, *starts, *[e for e in ends if e]])
    span_s = max((t1 - t0).total_seconds(), 1.0)
    plot_px = WIDTH_PX - LABEL_PX - 10

    def x(t: datetime) -> float:
        return round(LABEL_PX + plot_px * (t - t0).total_seconds() / span_s, 1)

    bars = []
    for i, (v, start, end) in enumerate(zip(rows, starts, ends, strict=True)):
        x0, x1 = x(start), x(end or t1)
        value = str(v.get("value"))
        label = f"r{v['revision']} {value[:16]}{'…' if len(value) > 16 else ''}"
        until = v.get("invalid_at") or "open"
        bars.append(Bar(v["item_id"], label, v["status"], x0, max(x1 - x0, 3.0),
                        AXIS_PX + i * ROW_PX, end is None, v["item_id"] == selected,
                        f"{value} · {v['status']} · {v['valid_at']} → {until}"))
    fmt = "%Y-%m-%d" if span_s >= 2 * 86400 else "%m-%d %H:%M" if span_s >= 600 else "%H:%M:%S"
    ticks = [(x(t0 + (t1 - t0) * k / TICKS), (t0 + (t1 - t0) * k / TICKS).strftime(fmt))
             for k in range(TICKS + 1)]
    return Timeline(bars, ticks, WIDTH_PX, AXIS_PX + len(rows) * ROW_PX + 8, LABEL_PX, ROW_PX)
