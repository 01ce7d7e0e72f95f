"""Time values as fixed-width ISO-8601 UTC strings that sort lexicographically.

Events and rows store ``YYYY-MM-DDTHH:MM:SS.ffffffZ``; APIs take and return aware datetimes.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

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


def offset_min(dt: datetime | None) -> int | None:
    """The UTC offset of an aware datetime in whole minutes (``+01:00`` -> 60); None for None
    or a naive one. What is kept beside a UTC instant to show it in the speaker's zone."""
    if dt is None or dt.utcoffset() is None:
        return None
    return int(dt.utcoffset().total_seconds() // 60)


def local_day(iso: str, offset_minutes: int | None) -> str:
    """``YYYY-MM-DD`` of a stored UTC instant (``to_iso``) in a zone given by its UTC offset
    in minutes (None: the UTC date). ``2024-02-04T23:00:00.000000Z`` at +60 is ``2024-02-05``.
    An instant the offset would move outside the years 1-9999 keeps its UTC date."""
    if not offset_minutes:
        return iso[:10]
    try:
        at = datetime.fromisoformat(iso.replace("Z", "+00:00")) + timedelta(
            minutes=offset_minutes)
    except (ValueError, OverflowError):
        return iso[:10]
    return f"{at.year:04d}-{at.month:02d}-{at.day:02d}"
