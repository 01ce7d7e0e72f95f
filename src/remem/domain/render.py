"""Rendering under a budget: recall (tokens), context and profile (tokens or bytes).

What a budget counts (KIP "Budgets": the serialised model-facing result):

- **recall**: the model-facing ``text`` only, measured by a :class:`Meter` in tokens under the
  named tokenizer (``budget_tokens``). The text is compact: one status/coverage line, then each
  kept item once, grouped under its scope heading, e.g.::

      recall succeeded: coverage complete
      user:alice
      - home_city: "Lyon" (profile_slot, 2026-03-01)
      - constraint answer_format: "tables" (rule, 2026-03-01)
      user:alice sources (raw evidence, not accepted facts)
      - user 2026-05-01: "I moved to Lyon."

  The status is shown only when not ``current`` (``contested`` for a conflict); a date is the
  day of ``valid_at`` (a source line: ``occurred_at``) in the zone the speaker gave (the UTC
  offset kept with the item's payload or the source), else the UTC date; stored instants
  stay UTC. The structured result beside it (``items`` and ``sources`` with
  ids, scores, full timestamps and source refs; ``basis_seq``, ``coverage``, ...) is for the
  program and is **not** counted: ``to_json()`` of a recall result may exceed the budget, its
  ``text`` never does. A caller that hands the JSON to a model must budget it itself.
- **context** and **profile**: the whole document, ``serialise(document)`` (compact UTF-8
  JSON, metadata included): UTF-8 bytes (``max_bytes``, the instantKV shape) or tokens.

Packing (:func:`pack`): entries arrive ranked, each tagged with a coverage channel
(``constraints``, ``facts``, ``sources``) and ``required`` or optional.

1. Required entries (agent-scope rules) always go in; if they and the mandatory part (the
   status line, or the metadata) cannot fit, :class:`~remem.errors.ResultLimitExceeded` is
   raised, never a silent drop. For recall without constraints that is only a budget below
   the status line (at most :data:`STATUS_LINE_MAX_TOKENS`); above it an empty truncated
   result comes back.
2. Optional entries are added best first while an additive size estimate stays within the
   budget; an entry that does not fit is skipped and later, smaller ones may still go in
   (until :data:`MAX_MISSES` in a row did not fit).
3. The exact size is then measured; while it is over budget the lowest-ranked optional entry
   is removed (the required-only result was checked in step 1, so this always ends within
   the budget). The best entry is therefore first in and last out.

``truncated`` is exact: true iff an eligible entry was left out; a channel's coverage is
``incomplete`` iff one of its entries was left out, else ``complete``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from remem.domain.timefmt import local_day
from remem.errors import InvalidInput, ResultLimitExceeded

COMPLETE, INCOMPLETE = "complete", "incomplete"
MAX_MISSES = 4
"""Packing stops after this many consecutive entries did not fit (the budget is spent)."""
RECALL_CHANNELS = ("constraints", "facts", "sources")
STATUS_LINE_MAX_TOKENS = 30
"""Most tokens (o200k_base, cl100k_base) the recall status/coverage line takes: an empty
result never costs more, and a budget of at least this many tokens never raises without
constraints."""


def serialise(document: Mapping[str, Any]) -> str:
    """Compact JSON (no spaces, UTF-8 text unescaped, key order kept): what budgets measure."""
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"))


class Meter(Protocol):
    unit: str

    def size(self, text: str) -> int: ...


class TokenMeter:
    """Counts tokens with a tokenizer (``remem.ports.Tokenizer``)."""

    unit = "tokens"

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer

    def size(self, text: str) -> int:
        return self.tokenizer.count(text)


class ByteMeter:
    """Counts UTF-8 bytes."""

    unit = "bytes"

    def size(self, text: str) -> int:
        return len(text.encode("utf-8"))


@dataclass(frozen=True)
class Entry:
    """One renderable element: its JSON object, its line of model-facing text, its channel,
    and the heading its line is grouped under (recall: the scope; empty for no group)."""

    channel: str
    data: Mapping[str, Any]
    line: str = ""
    required: bool = False
    group: str = ""


@dataclass(frozen=True)
class Rendered:
    """A packed result.

    Attributes:
        entries: the entries kept, in input order.
        omitted: how many eligible entries were left out.
        truncated: ``omitted > 0``.
        coverage: channel -> complete | incomplete.
        document: the result document; ``serialised`` is ``serialise(document)``.
        size: the measured size (<= the budget), in ``unit``: of ``serialised``, or of
            the model-facing text alone when packed with ``measure=model_text``.
    """

    entries: tuple[Entry, ...]
    omitted: int
    truncated: bool
    coverage: dict[str, str]
    document: dict[str, Any]
    serialised: str
    size: int
    unit: str


Builder = Callable[[Sequence[Entry], bool, dict[str, str]], dict[str, Any]]
Measure = Callable[[Mapping[str, Any]], str]


def model_text(document: Mapping[str, Any]) -> str:
    """The budgeted part of a recall document: its model-facing ``text``."""
    return document["text"]


def _document_cost(meter: Meter, e: Entry, groups: set[str]) -> int:
    return meter.size(serialise(dict(e.data)) + "\n" + _escaped(e.line)) + 2


def _text_cost(meter: Meter, e: Entry, groups: set[str]) -> int:
    heading = 0 if e.group in groups else meter.size(e.group) + 1
    return meter.size(e.line) + 1 + heading


def check_budget(value: Any, name: str, low: int = 1, high: int = 1_000_000) -> int:
    """Validates a budget: an integer in ``[low, high]``.

    Raises:
        InvalidInput: not an integer or out of range.
    """
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidInput(f"{name} must be an integer between {low} and {high}, got "
                           f"{value!r}.", field=name, low=low, high=high)
    return value


def _escaped(line: str) -> str:
    return json.dumps(line, ensure_ascii=False)[1:-1]


def pack(entries: Sequence[Entry], *, budget: int, meter: Meter, build: Builder,
         channels: Sequence[str] = RECALL_CHANNELS, measure: Measure = serialise) -> Rendered:
    """Packs ranked entries into a document whose measured size fits ``budget``.

    Args:
        entries: ranked entries (required ones anywhere; output keeps input order).
        budget: the limit in ``meter.unit``.
        meter: token or byte meter.
        build: ``(kept entries, truncated, coverage) -> document``.
        channels: coverage channels reported (all ``complete`` when nothing is left out).
        measure: the budgeted part of a document: the whole serialisation (default) or
            :func:`model_text` (recall).

    Returns:
        The packed result.

    Raises:
        ResultLimitExceeded: the required entries plus metadata exceed the budget.
    """
    optional = [e for e in entries if not e.required]

    def attempt(kept_optional: list[Entry]) -> tuple[int, dict[str, Any], list[Entry],
                                                     dict[str, str], str | None]:
        keep = {id(e) for e in kept_optional}
        omitted = [e for e in optional if id(e) not in keep]
        coverage = {c: COMPLETE for c in channels}
        for e in omitted:
            coverage[e.channel] = INCOMPLETE
        kept = [e for e in entries if e.required or id(e) in keep]
        doc = build(kept, bool(omitted), coverage)
        measured = measure(doc)  # the whole document is serialised only when it is kept
        return (meter.size(measured), doc, kept, coverage,
                measured if measure is serialise else None)

    base, *_ = attempt([])
    if base > budget:
        required = sum(1 for e in entries if e.required)
        raise ResultLimitExceeded(
            f"The result needs at least {base} {meter.unit} ({required} required item(s) plus "
            f"the status line or metadata) but the budget is {budget} {meter.unit}; raise "
            f"the budget.",
            budget=budget, unit=meter.unit, required_size=base, required_items=required)
    estimate, chosen, misses = base, [], 0
    cost_of = _text_cost if measure is model_text else _document_cost
    groups = {e.group for e in entries if e.required}
    for e in optional:
        cost = cost_of(meter, e, groups)
        if estimate + cost <= budget:
            chosen.append(e)
            groups.add(e.group)
            estimate += cost
            misses = 0
        else:
            misses += 1
            if misses >= MAX_MISSES:
                break
    while True:
        size, doc, kept, coverage, text = attempt(chosen)
        if size <= budget or not chosen:
            omitted = len(optional) - len(chosen)
            return Rendered(tuple(kept), omitted, omitted > 0, coverage, doc,
                            serialise(doc) if text is None else text, size, meter.unit)
        chosen.pop()


# --- recall lines ------------------------------------------------------------------------
#: A rendered value longer than this many characters (only a fact's large content: an item
#: value is at most 1,024 bytes) is clipped to ``CLIPPED_VALUE_CHARS`` plus a marker saying how
#: much was left out, so a 64 KB fact still fits an ordinary budget.
MAX_RENDERED_VALUE_CHARS = 4_096
CLIPPED_VALUE_CHARS = 1_024


def value_text(value: Any) -> str:
    """A value as shown to a model: strings quoted JSON, other types canonical JSON."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def item_value_text(value: Any) -> str:
    """An item's value as shown to a model (``value_text``); longer than
    ``MAX_RENDERED_VALUE_CHARS``: its first ``CLIPPED_VALUE_CHARS`` characters and
    ``…[+N chars]`` (the structured item beside the text keeps the whole value)."""
    text = value_text(value)
    if len(text) <= MAX_RENDERED_VALUE_CHARS:
        return text
    return f"{text[:CLIPPED_VALUE_CHARS]}…[+{len(text) - CLIPPED_VALUE_CHARS} chars]"


def item_line(d: Mapping[str, Any], *, constraint: bool,
              offset_minutes: int | None = None) -> str:
    """``- home_city: "Lyon" (profile_slot, 2026-03-01)``: key, value, kind, the status only
    when not current (``contested`` for a conflict), the day of ``valid_at`` in the zone of
    ``offset_minutes`` (the UTC offset the statement gave; None: UTC); a required agent rule
    starts ``- constraint``; a stale cached fact says ``stale``. The scope is the group
    heading; ids, scores and full (UTC) times are in the structured item."""
    label = "constraint " if constraint else ""
    status = {"current": "", "conflict": "contested, "}.get(d["status"], f"{d['status']}, ")
    if (d.get("cached") or {}).get("stale"):  # a Kind-B cached fact past its freshness
        status += "stale, "
    return (f"- {label}{d['key']}: {item_value_text(d['value'])} ({d['kind']}, {status}"
            f"{local_day(d['valid_at'], offset_minutes)})")


def source_line(d: Mapping[str, Any], offset_minutes: int | None = None) -> str:
    """``- user 2026-05-01: "..."`` (raw evidence, under its scope's sources heading): the day
    of ``occurred_at`` in the speaker's zone (``offset_minutes``; None: UTC); the source kind
    is shown unless it is the role's plain message (``user-message``)."""
    kind = "" if d["kind"] in ("message", f"{d['role']}-message") else f" {d['kind']}"
    return (f"- {d['role']}{kind} {local_day(d['occurred_at'], offset_minutes)}: "
            f"{value_text(d['text'])}")


def item_heading(scope: str) -> str:
    return scope


def source_heading(scope: str) -> str:
    return f"{scope} sources (raw evidence, not accepted facts)"


def recall_header(status: str, kept: int, truncated: bool, coverage: Mapping[str, str],
                  barrier: Mapping[str, Any] | None = None) -> str:
    """The status/coverage line, e.g. ``recall succeeded: coverage complete`` or
    ``recall partial: budget full, incomplete: facts``."""
    notes = []
    if barrier and barrier.get("unresolved"):
        notes.append(f"{len(barrier['unresolved'])} receipt(s) not yet available")
    if barrier and barrier.get("failed"):
        notes.append(f"{len(barrier['failed'])} receipt(s) failed")
    if truncated:
        notes.append("budget full")
    elif not kept:
        notes.append("nothing found")
    missing = [k for k, v in coverage.items() if v != COMPLETE]
    notes.append(f"incomplete: {', '.join(missing)}" if missing else "coverage complete")
    return f"recall {status}: {', '.join(notes)}"


def recall_text(header: str, kept: Sequence[Entry]) -> str:
    """The header, then each kept entry's line under its group heading; groups in the order
    of their first (best) entry, entries in rank order within a group."""
    groups: dict[str, list[str]] = {}
    for e in kept:
        groups.setdefault(e.group, []).append(e.line)
    lines = [header]
    for heading, rows in groups.items():
        if heading:
            lines.append(heading)
        lines.extend(rows)
    return "\n".join(lines)


def recall_status(barrier: Mapping[str, Any] | None, truncated: bool,
                  coverage: dict[str, str]) -> tuple[str, bool, dict[str, str]]:
    """KIP status of a recall: (status, action_eligible, coverage).

    ``succeeded`` needs every ``after`` barrier met and complete coverage; an unmet barrier
    gives ``pending`` (facts coverage incomplete: formation has not caught up), a failed
    receipt ``partial``, incomplete coverage ``partial``. Only ``succeeded`` is action-eligible.
    """
    state = (barrier or {}).get("state", "satisfied")
    if state != "satisfied":
        coverage = {**coverage, "facts": "incomplete"}
    if state == "pending":
        status = "pending"
    elif state == "failed" or any(v != "complete" for v in coverage.values()):
        status = "partial"
    else:
        status = "succeeded"
    return status, status == "succeeded", coverage


def recall_builder(*, basis_seq: int, budget_tokens: int, tokenizer: str,
                   barrier: Mapping[str, Any] | None = None) -> Builder:
    """The recall document: status, metadata, structured items (constraints first) and
    sources for the program, and the compact model-facing ``text`` (the budgeted part; pack
    with ``measure=model_text``).

    ``barrier`` is ``{"state": satisfied|pending|failed, "unresolved": [...], "failed":
    [{receipt_id, reason}]}`` when the caller named ``after`` receipts (KIP read barrier).
    """

    def build(kept: Sequence[Entry], truncated: bool, coverage: dict[str, str]) -> dict:
        status, eligible, coverage = recall_status(barrier, truncated, coverage)
        header = recall_header(status, len(kept), truncated, coverage, barrier)
        extra: dict[str, Any] = {}
        if barrier is not None:
            extra = {"unresolved": list(barrier.get("unresolved", [])),
                     "failed": list(barrier.get("failed", []))}
        return {
            "status": status, "action_eligible": eligible, **extra,
            "basis_seq": basis_seq, "truncated": truncated, "coverage": coverage,
            "budget_tokens": budget_tokens, "tokenizer": tokenizer,
            "items": [dict(e.data) for e in kept if e.channel != "sources"],
            "sources": [dict(e.data) for e in kept if e.channel == "sources"],
            "text": recall_text(header, kept),
        }

    return build


def items_builder(**fixed: Any) -> Builder:
    """instantKV context shape: ``{**fixed, "items": [...], "truncated": bool}``."""

    def build(kept: Sequence[Entry], truncated: bool, coverage: dict[str, str]) -> dict:
        return {**fixed, "items": [dict(e.data) for e in kept], "truncated": truncated}

    return build


# --- profile -----------------------------------------------------------------------------
PROFILE_SECTIONS = (("identity", "Identity"), ("rule", "Rules"),
                    ("profile_slot", "Profile"), ("preference", "Preferences"))


def profile_text(scopes: Sequence[str], kept: Sequence[Entry]) -> str:
    """Deterministic pinned-profile text: one section per kind, in a fixed order."""
    lines = [f"# Pinned profile ({', '.join(scopes)})"]
    for kind, title in PROFILE_SECTIONS:
        rows = [e.data for e in kept if e.data["kind"] == kind]
        if rows:
            lines.append(f"## {title}")
            lines.extend(f"- {d['scope']} {d['key']}: {item_value_text(d['value'])}"
                         for d in rows)
    return "\n".join(lines)


def profile_builder(*, activation_id: str | None, scopes: Sequence[str], basis_seq: int,
                    budget: Mapping[str, Any]) -> Builder:
    """The pinned profile document: items + truncated (instantKV) plus text and activation."""

    def build(kept: Sequence[Entry], truncated: bool, coverage: dict[str, str]) -> dict:
        return {"activation_id": activation_id, "scopes": list(scopes),
                "basis_seq": basis_seq, **budget, "truncated": truncated,
                "items": [dict(e.data) for e in kept], "text": profile_text(scopes, kept)}

    return build
