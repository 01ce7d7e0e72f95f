"""Time values as fixed-width ISO-8601 UTC strings that sort lexicographically.

Events and rows store ``YYYY-MM-DDTHH:MM:SS.ffffffZ``; APIs take and return aware datetimes.
"""

from __future__ import annotations

from datetime import UTC, datetime

from remem.errors import InvalidInput


def to_iso(dt: datetime) -> str:
    """Aware datetime -> ``2026-05-01T10:00:00.000000Z``.

    Raises:
        InvalidInput: the datetime is naive (no time zone): remem never guesses a zone.
    """
    if dt.tzinfo is None or dt.utcoffset() is None:
        raise InvalidInput(
            f"time {dt.isoformat()} has no time zone; give an aware time such as "
            "2026-05-01T10:00:00+00:00.",
            field="time",
        )
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def from_iso(text: str) -> datetime:
    """Parses an ISO-8601 string with a zone (``Z`` or ``+hh:mm``) into an aware datetime."""
    try:
        dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise InvalidInput(f"time {text!r} is not ISO-8601.", field="time") from exc
    if dt.tzinfo is None:
        raise InvalidInput(
            f"time {text!r} has no time zone; add 'Z' or an offset like '+02:00'.", field="time"
        )
    return dt


def from_ms(ms: int) -> datetime:
    """Unix milliseconds -> aware UTC datetime (instantKV ``*_ms`` fields)."""
    return datetime.fromtimestamp(ms / 1000, tz=UTC)


def to_ms(dt: datetime) -> int:
    return int(round(dt.timestamp() * 1000))
