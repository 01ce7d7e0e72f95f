"""Time values as fixed-width ISO-8601 UTC strings that sort lexicographically.

Events and rows store ``YYYY-MM-DDTHH:MM:SS.ffffffZ``; APIs take and return aware datetimes.
"""

from __future__ import annotations

from datetime import UTC, datetime

from remem.errors import InvalidInput


def to_iso(dt: datetime, *, field: str = "time") -> str:
    """Aware datetime -> ``2026-05-01T10:00:00.000000Z``.

    Args:
        dt: an aware datetime.
        field: the input field named in the error (``valid_at``, ``source.occurred_at``, ...).

    Raises:
        InvalidInput: not a datetime, or naive (no time zone): remem never guesses a zone.
    """
    if not isinstance(dt, datetime):
        raise InvalidInput(f"{field} must be a datetime with a time zone, not "
                           f"{type(dt).__name__}.", field=field)
    if dt.tzinfo is None or dt.utcoffset() is None:
        raise InvalidInput(
            f"{field} {dt.isoformat()} has no time zone; give an aware time such as "
            "2026-05-01T10:00:00+00:00.",
            field=field,
        )
    try:
        u = dt.astimezone(UTC)
    except OverflowError as exc:
        raise InvalidInput(f"{field} {dt.isoformat()} is outside the years 1-9999 in UTC.",
                           field=field) from exc
    # Zero-padded year: fixed width keeps lexicographic order == time order (strftime's %Y
    # does not pad years before 1000 on every platform).
    return (f"{u.year:04d}-{u.month:02d}-{u.day:02d}T{u.hour:02d}:{u.minute:02d}:"
            f"{u.second:02d}.{u.microsecond:06d}Z")


def from_iso(text: str, *, field: str = "time") -> datetime:
    """Parses an ISO-8601 string with a zone (``Z`` or ``+hh:mm``) into an aware datetime.

    Raises:
        InvalidInput: not a string, not ISO-8601, or without a zone; names ``field``.
    """
    if not isinstance(text, str):
        raise InvalidInput(f"{field} must be an ISO-8601 string, not {type(text).__name__}.",
                           field=field)
    try:
        dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise InvalidInput(f"{field} {text!r} is not ISO-8601.", field=field) from exc
    if dt.tzinfo is None:
        raise InvalidInput(
            f"{field} {text!r} has no time zone; add 'Z' or an offset like '+02:00'.",
            field=field,
        )
    return dt


def from_ms(ms: int, field: str = "time_ms") -> datetime:
    """Unix milliseconds -> aware UTC datetime (instantKV ``*_ms`` fields).

    Raises:
        InvalidInput: outside the years 1-9999.
    """
    try:
        return datetime.fromtimestamp(ms / 1000, tz=UTC)
    except (ValueError, OverflowError, OSError) as exc:
        raise InvalidInput(f"{field} {ms} is outside the years 1-9999; give Unix milliseconds.",
                           field=field) from exc


def to_ms(dt: datetime) -> int:
    return int(round(dt.timestamp() * 1000))
