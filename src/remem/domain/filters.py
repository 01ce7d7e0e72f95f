"""Item metadata and the filters of ``recall`` and ``items``: parsing and evaluation.

Pure: no I/O, no clock (a relative time is resolved against the ``now`` the caller passes).

**Metadata** is a small JSON object a caller attaches to an item (like mem0's ``metadata``):
at most :data:`MAX_METADATA_KEYS` keys and :data:`MAX_METADATA_BYTES` UTF-8 bytes of compact
JSON; keys match ``[A-Za-z_][A-Za-z0-9_.-]{0,63}``; a value is a string, number, boolean,
null, or a list of those (shallow: no nested objects). It lives in the payload, beside the
item's text, so erasure removes it with the text.

**Filter** (one JSON object; every condition must hold — AND; unknown fields are refused)::

    {"kind": "fact" | {"in": ["fact", "preference"]},
     "key": "diet", "status": {"ne": "conflict"},
     "valid_at": {"gte": "2026-01-01T00:00:00Z", "lt": "now"},
     "recorded_at": "last 7 days",
     "metadata": {"source_app": "crm", "priority": {"gte": 2}, "tags": {"in": ["work"]},
                  "team": {"exists": true}}}

- ``kind``, ``key``, ``status``: a bare value (eq) or ``{eq|ne|in|nin: ...}``.
- ``valid_at`` (world time) and ``recorded_at`` (when remem recorded the item): ``{gte|gt|
  lte|lt: time}`` where a time is ISO 8601 with a zone, ``now``, or ``N units ago``; or the
  string ``last N units`` (``gte`` N units before now). Units: minutes, hours, days, weeks.
- ``metadata``: field -> a bare value (eq) or ``{op: operand}`` with ops ``eq ne in nin gt
  gte lt lte exists``. Values compare with their JSON type (``1`` never equals ``"1"`` or
  ``true``); ``gt``..``lte`` take a number or a string (strings compare by code point, so
  ISO dates order). A missing field matches only ``ne``, ``nin`` and ``exists: false``.
  On a list value, ``eq``/``in`` match when any element matches and ``ne``/``nin`` when none
  does; ordering operators never match a list.

Anything else raises :class:`~remem.errors.InvalidInput` naming the field or operator.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from remem.domain.model import ItemStatus, Kind, parse_key
from remem.domain.timefmt import to_iso
from remem.errors import InvalidInput

MAX_METADATA_BYTES = 2048
MAX_METADATA_KEYS = 32
MAX_FILTER_BYTES = 8192
OPERATORS = ("eq", "ne", "in", "nin", "gt", "gte", "lt", "lte", "exists")
SET_OPERATORS = ("eq", "ne", "in", "nin")
TIME_OPERATORS = ("gte", "gt", "lte", "lt")
FIELDS = ("kind", "key", "status", "valid_at", "recorded_at", "metadata")
_META_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]{0,63}\Z")
_UNITS = {"minute": 60, "hour": 3600, "day": 86400, "week": 604800}
_LAST = re.compile(r"^last\s+(\d{1,6})\s+(minute|hour|day|week)s?\Z", re.IGNORECASE)
_AGO = re.compile(r"^(\d{1,6})\s+(minute|hour|day|week)s?\s+ago\Z", re.IGNORECASE)


# --- metadata ------------------------------------------------------------------------------
def _scalar(v: Any) -> bool:
    if isinstance(v, float):
        return math.isfinite(v)
    return v is None or isinstance(v, (str, int, bool))


def parse_metadata(metadata: Any, *, field: str = "metadata") -> dict[str, Any] | None:
    """Validates item metadata: None (not given: a correction or supersession inherits the
    replaced item's) or a dict (``{}``: explicitly none).

    Raises:
        InvalidInput: not an object, a bad key, a nested object, a non-finite number, a
            string that is not valid Unicode, or over the size limits.
    """
    if metadata is None:
        return None
    if not isinstance(metadata, Mapping):
        raise InvalidInput(f"{field} must be a JSON object of field -> value.", field=field)
    if len(metadata) > MAX_METADATA_KEYS:
        raise InvalidInput(f"{field} has {len(metadata)} keys; at most {MAX_METADATA_KEYS}.",
                           field=field, limit=MAX_METADATA_KEYS)
    for k, v in metadata.items():
        if not isinstance(k, str) or not _META_KEY.match(k):
            raise InvalidInput(f"{field} key {k!r} must match [A-Za-z_][A-Za-z0-9_.-]{{0,63}}.",
                               field=field)
        items = v if isinstance(v, list) else [v]
        if not all(_scalar(x) for x in items):
            raise InvalidInput(f"{field}.{k} must be a string, number, boolean, null or a list "
                               "of those (no nested objects).", field=field)
    try:
        size = len(json.dumps(dict(metadata), ensure_ascii=False,
                              separators=(",", ":")).encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise InvalidInput(f"{field} holds text that is not valid Unicode (a lone "
                           "surrogate); send UTF-8 text.", field=field) from exc
    if size > MAX_METADATA_BYTES:
        raise InvalidInput(f"{field} is {size} bytes of JSON; at most {MAX_METADATA_BYTES}.",
                           field=field, limit=MAX_METADATA_BYTES)
    return dict(metadata)


def dump_metadata(metadata: dict[str, Any] | None) -> str | None:
    """Item metadata as stored in ``payloads.metadata`` (compact JSON; None when empty)."""
    if not metadata:
        return None
    return json.dumps(metadata, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def load_metadata(text: Any) -> dict[str, Any] | None:
    """The stored metadata column back as a dict (None when unset)."""
    return json.loads(text) if text else None


def _kind_of(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    return "null" if v is None else type(v).__name__


def _same(a: Any, b: Any) -> bool:
    return _kind_of(a) == _kind_of(b) and a == b


def _order(value: Any, op: str, operand: Any) -> bool:
    if _kind_of(value) != _kind_of(operand):
        return False
    return {"gt": value > operand, "gte": value >= operand,
            "lt": value < operand, "lte": value <= operand}[op]


@dataclass(frozen=True)
class MetaTest:
    """One metadata condition: ``field op operand``."""

    field: str
    op: str
    operand: Any

    def holds(self, metadata: Mapping[str, Any] | None) -> bool:
        md = metadata or {}
        if self.op == "exists":
            return (self.field in md) is self.operand
        if self.field not in md:
            return self.op in ("ne", "nin")
        v = md[self.field]
        values = v if isinstance(v, list) else [v]
        if self.op in ("eq", "in", "ne", "nin"):
            wanted = [self.operand] if self.op in ("eq", "ne") else self.operand
            hit = any(_same(x, w) for x in values for w in wanted)
            return hit if self.op in ("eq", "in") else not hit
        return not isinstance(v, list) and _order(v, self.op, self.operand)


def _meta_tests(spec: Any) -> tuple[MetaTest, ...]:
    if not isinstance(spec, Mapping):
        raise InvalidInput("filters.metadata must be an object of field -> condition.",
                           field="filters.metadata")
    out = []
    for name, cond in spec.items():
        where = f"filters.metadata.{name}"
        if not isinstance(name, str) or not _META_KEY.match(name):
            raise InvalidInput(f"{where}: a metadata field name must match "
                               "[A-Za-z_][A-Za-z0-9_.-]{0,63}.", field="filters.metadata")
        ops = _ops(cond, where, OPERATORS)
        for op, operand in ops.items():
            out.append(MetaTest(name, op, _meta_operand(op, operand, where)))
    return tuple(out)


def _meta_operand(op: str, operand: Any, where: str) -> Any:
    if op == "exists":
        if not isinstance(operand, bool):
            raise InvalidInput(f"{where}: 'exists' takes true or false.", field=where)
        return operand
    if op in ("in", "nin"):
        if not isinstance(operand, list) or not operand or not all(map(_scalar, operand)):
            raise InvalidInput(f"{where}: {op!r} takes a non-empty list of scalar values.",
                               field=where)
        return list(operand)
    if op in ("gt", "gte", "lt", "lte"):
        if isinstance(operand, bool) or not isinstance(operand, (int, float, str)) or (
                isinstance(operand, float) and not math.isfinite(operand)):
            raise InvalidInput(f"{where}: {op!r} takes a number or a string.", field=where)
        return operand
    if not _scalar(operand):
        raise InvalidInput(f"{where}: {op!r} takes a string, number, boolean or null.",
                           field=where)
    return operand


def _ops(cond: Any, where: str, allowed: tuple[str, ...]) -> dict[str, Any]:
    """``{op: operand}`` of a condition; a bare value is ``{"eq": value}``."""
    if not isinstance(cond, Mapping):
        return {"eq": cond}
    if not cond:
        raise InvalidInput(f"{where}: an empty condition; give an operator such as "
                           "{'eq': ...}.", field=where)
    for op in cond:
        if op not in allowed:
            known = ", ".join(allowed)
            raise InvalidInput(f"{where}: unknown operator {op!r}; use one of {known}.",
                               field=where, operator=str(op))
    return dict(cond)


# --- kind / key / status ---------------------------------------------------------------------
@dataclass(frozen=True)
class OneOf:
    """A set condition on a text column: ``allowed`` (None: any) minus ``refused``."""

    allowed: frozenset[str] | None = None
    refused: frozenset[str] = frozenset()

    def holds(self, value: str) -> bool:
        return (self.allowed is None or value in self.allowed) and value not in self.refused


def _check_value(name: str, v: Any, where: str) -> str:
    if name == "kind":
        try:
            return Kind(v).value
        except ValueError:
            pass
        raise InvalidInput(f"{where}: {v!r} is not a kind (one of "
                           + ", ".join(k.value for k in Kind) + ").", field=where)
    if name == "status":
        if v in {s.value for s in ItemStatus}:
            return str(v)
        raise InvalidInput(f"{where}: {v!r} is not a status (one of "
                           + ", ".join(s.value for s in ItemStatus) + ").", field=where)
    try:
        return parse_key(v)
    except InvalidInput as exc:
        raise InvalidInput(f"{where}: {exc}", field=where) from exc


def _one_of(name: str, cond: Any) -> OneOf:
    where = f"filters.{name}"
    allowed: set[str] | None = None
    refused: set[str] = set()
    for op, operand in _ops(cond, where, SET_OPERATORS).items():
        many = operand if op in ("in", "nin") else [operand]
        if op in ("in", "nin") and (not isinstance(operand, list) or not operand):
            raise InvalidInput(f"{where}: {op!r} takes a non-empty list.", field=where)
        vals = {_check_value(name, v, where) for v in many}
        if op in ("eq", "in"):
            allowed = vals if allowed is None else allowed & vals
        else:
            refused |= vals
    return OneOf(frozenset(allowed) if allowed is not None else None, frozenset(refused))


# --- time windows ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Window:
    """Bounds on an ISO UTC time column (each None when open)."""

    gte: str | None = None
    gt: str | None = None
    lte: str | None = None
    lt: str | None = None

    def holds(self, t: str | None) -> bool:
        if t is None:
            return False
        return ((self.gte is None or t >= self.gte) and (self.gt is None or t > self.gt)
                and (self.lte is None or t <= self.lte) and (self.lt is None or t < self.lt))


def time_point(text: Any, now: datetime, where: str) -> str:
    """ISO 8601 (with a zone), ``now`` or ``N units ago``, as a fixed-width ISO UTC string.

    Raises:
        InvalidInput: anything else (names ``where``).
    """
    if isinstance(text, str):
        s = " ".join(text.split())
        if s.lower() == "now":
            return to_iso(now)
        m = _AGO.match(s) or _LAST.match(s)
        if m:
            seconds = int(m.group(1)) * _UNITS[m.group(2).lower()]
            try:
                return to_iso(now - timedelta(seconds=seconds))
            except (OverflowError, ValueError):  # before year 1: no time can be that old
                raise InvalidInput(f"{where}: {text!r} reaches before the year 1 (from "
                                   f"now = {to_iso(now)}); give a shorter span.",
                                   field=where) from None
        try:
            at = datetime.fromisoformat(s.replace("Z", "+00:00")) if s[:1].isdigit() else None
        except ValueError:
            at = None
        if at is not None:
            return to_iso(at, field=where)  # refuses a time without a zone, saying so
    raise InvalidInput(f"{where}: {text!r} is not a time; give ISO 8601 with a zone "
                       "('2026-05-01T10:00:00Z'), 'now', 'N days ago' or 'last N days' "
                       "(N up to 6 digits; units: minutes, hours, days, weeks).", field=where)


def parse_window(name: str, spec: Any, now: datetime) -> Window:
    """A window from ``"last N units"`` or ``{gte|gt|lte|lt: time}`` (see module docstring).

    Raises:
        InvalidInput: an unknown operator, a bad time, or an empty window.
    """
    where = f"filters.{name}"
    if isinstance(spec, str):
        if not _LAST.match(" ".join(spec.split())):
            raise InvalidInput(f"{where}: {spec!r}: a window given as text must read "
                               "'last N days' with N of at most 6 digits (or minutes, hours, "
                               "weeks).", field=where)
        return Window(gte=time_point(spec, now, where), lte=to_iso(now))
    if not isinstance(spec, Mapping):
        raise InvalidInput(f"{where} must be 'last N days' or an object of "
                           "{gte, gt, lte, lt}.", field=where)
    ops = _ops(spec, where, TIME_OPERATORS)
    return Window(**{op: time_point(v, now, f"{where}.{op}") for op, v in ops.items()})


# --- the filter ------------------------------------------------------------------------------
@dataclass(frozen=True)
class ItemFilter:
    """A parsed filter (see the module docstring); every part None/empty when not given."""

    kind: OneOf | None = None
    key: OneOf | None = None
    status: OneOf | None = None
    valid_at: Window | None = None
    recorded_at: Window | None = None
    metadata: tuple[MetaTest, ...] = ()

    def holds(self, rec: Any, status: str | None = None) -> bool:
        """Whether an ``ItemRecord``-like row passes every condition but metadata
        (``status``: the status shown, default the stored one)."""
        return ((self.kind is None or self.kind.holds(rec.kind))
                and (self.key is None or self.key.holds(rec.key))
                and (self.status is None or self.status.holds(status or rec.status))
                and (self.valid_at is None or self.valid_at.holds(rec.valid_at))
                and (self.recorded_at is None or self.recorded_at.holds(rec.created_at)))

    def holds_metadata(self, metadata: Mapping[str, Any] | None) -> bool:
        return all(t.holds(metadata) for t in self.metadata)

    @property
    def only_items(self) -> bool:
        """True when a condition only items can meet is set (sources have no kind, key,
        status or metadata)."""
        return any(x is not None for x in (self.kind, self.key, self.status)) or bool(
            self.metadata)


def parse_filter(spec: Any, now: datetime) -> ItemFilter:
    """Parses a filter object (None or ``{}``: no filter).

    Args:
        spec: the caller's filter (a JSON object, see the module docstring).
        now: aware datetime that relative times resolve against.

    Raises:
        InvalidInput: an unknown field or operator (named), a bad value, or a filter over
            :data:`MAX_FILTER_BYTES` bytes of JSON.
    """
    if spec is None:
        return ItemFilter()
    if not isinstance(spec, Mapping):
        raise InvalidInput("filters must be a JSON object such as {'metadata': {'app': "
                           "'crm'}}.", field="filters")
    try:
        size = len(json.dumps(spec, ensure_ascii=False, default=str).encode("utf-8"))
    except (UnicodeEncodeError, ValueError) as exc:
        raise InvalidInput("filters holds text that is not valid Unicode.",
                           field="filters") from exc
    if size > MAX_FILTER_BYTES:
        raise InvalidInput(f"filters is over {MAX_FILTER_BYTES} bytes of JSON.",
                           field="filters", limit=MAX_FILTER_BYTES)
    unknown = [k for k in spec if k not in FIELDS]
    if unknown:
        raise InvalidInput(f"filters field {unknown[0]!r} is not one of {', '.join(FIELDS)}.",
                           field="filters")
    return ItemFilter(
        kind=_one_of("kind", spec["kind"]) if "kind" in spec else None,
        key=_one_of("key", spec["key"]) if "key" in spec else None,
        status=_one_of("status", spec["status"]) if "status" in spec else None,
        valid_at=parse_window("valid_at", spec["valid_at"], now) if "valid_at" in spec
        else None,
        recorded_at=parse_window("recorded_at", spec["recorded_at"], now)
        if "recorded_at" in spec else None,
        metadata=_meta_tests(spec["metadata"]) if "metadata" in spec else ())
