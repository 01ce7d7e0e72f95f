"""``extract_v1``: one user turn -> claims the user states about themselves.

Typed input :class:`ExtractInput`, reply :class:`ExtractReply` (strict JSON schema), templates
:data:`SYSTEM` / :data:`USER`, spec :data:`EXTRACT_V1`. The reply validators check, against the
input, that every quote occurs in the text (``quote_not_in_text``) and that every ``valid_at``
is a real date not after the turn (``bad_date``); other shape errors are ``schema_violation``.

Dates: the model answers ``valid_at`` as ``YYYY``, ``YYYY-MM``, ``YYYY-MM-DD`` or an ISO
date-time (with or without offset), or ``null``. :func:`resolve_valid_at` turns that into an
aware datetime in ``occurred_at``'s tzinfo plus a precision (``"year"``, ``"month"``, ``"day"``,
``"instant"``); a coarse date is the start of its interval, i.e. a bound, not an invented instant.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Mapping
from datetime import date, datetime, tzinfo
from typing import Annotated, Any, Literal

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
)
from pydantic_core import PydanticCustomError

from remem.domain.model import Kind
from remem.providers.prompts.base import PromptSpec

__all__ = [
    "DATE_PATTERN",
    "EXTRACT_V1",
    "KEY_CATALOGUE",
    "MAX_QUOTE_BYTES",
    "MAX_VALUE_BYTES",
    "ExtractInput",
    "ExtractReply",
    "ReplyClaim",
    "quote_occurs_in",
    "resolve_valid_at",
]

VERSION = "extract_v1"
MAX_VALUE_BYTES = 1024
MAX_QUOTE_BYTES = 512
KEY_PATTERN = r"^[a-z][a-z0-9_]{0,127}$"
DATE_PATTERN = (r"^[0-9]{4}(-[0-9]{2}(-[0-9]{2}([T ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,6})?)?"
                r"(Z|[+-][0-9]{2}:[0-9]{2})?)?)?)?$")
_DATE_RE = re.compile(DATE_PATTERN)

KEY_CATALOGUE: Mapping[str, tuple[Kind, str]] = {
    "name": (Kind.IDENTITY, "the user's name"),
    "home_city": (Kind.PROFILE_SLOT, "city the user lives in"),
    "hometown": (Kind.PROFILE_SLOT, "city the user grew up in"),
    "employer": (Kind.PROFILE_SLOT, "organisation the user works for"),
    "job_title": (Kind.PROFILE_SLOT, "the user's job"),
    "timezone": (Kind.PROFILE_SLOT, "e.g. +08:00 or Europe/Paris"),
    "diet": (Kind.PREFERENCE, "e.g. vegetarian"),
    "response_style": (Kind.PREFERENCE, "how the user wants answers"),
    "ui_theme": (Kind.PREFERENCE, "e.g. dark"),
    "editor": (Kind.PREFERENCE, "e.g. vim"),
    "likes": (Kind.PREFERENCE, "one thing the user likes"),
    "dislikes": (Kind.PREFERENCE, "one thing the user dislikes"),
    "allergies": (Kind.FACT, "one allergy"),
    "languages": (Kind.FACT, "one language the user speaks"),
    "pets": (Kind.FACT, "one pet, e.g. 'dog named Rex'"),
    "phone_number": (Kind.PROFILE_SLOT, "the user's own phone number"),
    "email": (Kind.PROFILE_SLOT, "the user's own e-mail address"),
    "units": (Kind.PREFERENCE, "metric or imperial"),
}
"""Keys the prompt suggests, frozen with this version (they mirror the rule extractor's keys)."""

SYSTEM = """\
You turn one chat message into facts for a long-term memory about the user who wrote it.

Rules:
- Only facts the user states about themselves, in the first person, as true now or in the past.
- Nothing about other people ("my sister lives in Rome" is not about the user).
- Nothing hypothetical, planned, wished, asked, quoted, joked about or role-played.
- One claim per fact. "key": a short snake_case topic name. Prefer these keys when they fit:
$catalogue
- "kind": one of $kinds.
- "value": the value in the user's words, short (a city, a name, a diet): a JSON string, number
  or boolean.
- "quote": the words of the message the claim comes from, copied exactly.
- "operation": "retract" when the user says the value is no longer true ("I am not vegetarian
  anymore" -> key diet, value "vegetarian", operation "retract"); otherwise "assert".
- "negated": true when the claim comes from a negative phrasing ("I don't eat meat" -> key diet,
  value "vegetarian", negated true); otherwise false.
- "valid_at": when the fact became true, if the message says so, resolved against the time the
  message was sent: "YYYY", "YYYY-MM", "YYYY-MM-DD" or "YYYY-MM-DDTHH:MM". Never later than the
  time the message was sent. null when the message names no time.
- A message without such facts gives {"claims": []}.
Answer with JSON only, following the schema."""

USER = """\
Message written by the user on $weekday, $occurred_at:
<<<
$text
>>>"""


class ExtractInput(BaseModel):
    """What ``extract_v1`` is rendered from.

    Attributes:
        text: the user's turn, verbatim.
        occurred_at: aware datetime the turn was written (relative dates resolve against it).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str
    occurred_at: AwareDatetime


def _fields(data: ExtractInput) -> dict[str, str]:
    catalogue = "\n".join(f"  {key} ({kind.value}): {hint}"
                          for key, (kind, hint) in KEY_CATALOGUE.items())
    return {"catalogue": catalogue, "kinds": ", ".join(k.value for k in Kind),
            "weekday": data.occurred_at.strftime("%A"),
            "occurred_at": data.occurred_at.isoformat(timespec="minutes"), "text": data.text}


# --- reply -------------------------------------------------------------------------------------

def _squash(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    text = text.translate(str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"',
                                         "\u201d": '"'}))
    return " ".join(text.split()).casefold()


def quote_occurs_in(quote: str, text: str) -> bool:
    """Whether ``quote`` occurs in ``text``, ignoring case, spacing, NFKC and curly quotes."""
    return quote in text or _squash(quote) in _squash(text)


def resolve_valid_at(value: str, occurred_at: datetime) -> tuple[datetime, str]:
    """Resolves a reply's ``valid_at`` string against the turn's time.

    Args:
        value: ``YYYY``, ``YYYY-MM``, ``YYYY-MM-DD`` or an ISO date-time; a date-time without
            offset is read in ``occurred_at``'s zone, one with an offset is converted to it.
        occurred_at: aware datetime of the turn.

    Returns:
        (aware datetime in ``occurred_at.tzinfo``, precision): the start of the named interval
        and one of ``"year"``, ``"month"``, ``"day"``, ``"instant"``.

    Raises:
        ValueError: not one of the formats, not a real date, or after ``occurred_at``.
    """
    if not _DATE_RE.fullmatch(value):
        raise ValueError("valid_at is not YYYY, YYYY-MM, YYYY-MM-DD or an ISO date-time")
    try:
        when, precision = _start_of(value, occurred_at.tzinfo)
        after = when > occurred_at
    except OverflowError:
        raise ValueError(f"valid_at {value} is out of range") from None
    if after:
        raise ValueError(f"valid_at {value} is after the message was written "
                         f"({occurred_at.isoformat()})")
    return when, precision


def _start_of(value: str, tz: tzinfo | None) -> tuple[datetime, str]:
    if len(value) == 4:
        return datetime(int(value), 1, 1, tzinfo=tz), "year"
    if len(value) == 7:
        return datetime(int(value[:4]), int(value[5:7]), 1, tzinfo=tz), "month"
    if len(value) == 10:
        day = _iso_date(value)
        return datetime(day.year, day.month, day.day, tzinfo=tz), "day"
    parsed = _iso_datetime(value)
    return (parsed.replace(tzinfo=tz) if parsed.tzinfo is None else parsed.astimezone(tz),
            "instant")


def _iso_date(value: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise ValueError(f"valid_at {value} is not a calendar date") from None


def _iso_datetime(value: str) -> datetime:
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"valid_at {value} is not a calendar date and time") from None


def _value_bytes(value: object) -> int:
    text = value if isinstance(value, str) else json.dumps(value)
    return len(text.encode())


class ReplyClaim(BaseModel):
    """One claim in the model's reply (see :data:`SYSTEM` for the meaning of each field)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: Annotated[str, Field(pattern=KEY_PATTERN, description="snake_case topic name")]
    value: str | bool | int | float
    kind: Kind
    quote: Annotated[str, Field(description="exact words of the message")]
    operation: Literal["assert", "retract"]
    negated: bool
    valid_at: Annotated[str, Field(json_schema_extra={"pattern": DATE_PATTERN})] | None

    @field_validator("value")
    @classmethod
    def _value_fits(cls, value: str | bool | int | float) -> str | bool | int | float:
        if isinstance(value, str) and not value.strip():
            raise ValueError("value is empty")
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError("value is not a finite number")
        if _value_bytes(value) > MAX_VALUE_BYTES:
            raise ValueError(f"value is longer than {MAX_VALUE_BYTES} UTF-8 bytes")
        return value

    @field_validator("quote")
    @classmethod
    def _quote_in_text(cls, quote: str, info: ValidationInfo) -> str:
        if not quote.strip():
            raise ValueError("quote is empty")
        data = _input(info)
        if data is not None and not quote_occurs_in(quote, data.text):
            raise PydanticCustomError("quote_not_in_text",
                                      "the quote does not occur in the input text")
        return quote

    @field_validator("valid_at")
    @classmethod
    def _date_resolves(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return None
        data = _input(info)
        try:
            if data is not None:
                resolve_valid_at(value, data.occurred_at)
            elif not _DATE_RE.fullmatch(value):
                raise ValueError("valid_at is not a date")
        except ValueError as exc:
            raise PydanticCustomError("bad_date", "{reason}", {"reason": str(exc)}) from None
        return value


class ExtractReply(BaseModel):
    """The whole reply: ``{"claims": [...]}`` (an empty list means "no facts stated")."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    claims: list[ReplyClaim]


def _input(info: ValidationInfo) -> ExtractInput | None:
    context: Any = info.context
    data = context.get("input") if isinstance(context, dict) else None
    return data if isinstance(data, ExtractInput) else None


EXTRACT_V1: PromptSpec[ExtractInput, ExtractReply] = PromptSpec(
    version=VERSION,
    system=SYSTEM,
    user=USER,
    input_type=ExtractInput,
    response_type=ExtractReply,
    render_fields=_fields,
    reasons=frozenset({"quote_not_in_text", "bad_date"}),
)
"""The extraction prompt, version ``extract_v1``."""
