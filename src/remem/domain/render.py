"""Rendering under a budget: recall (tokens), context and profile (tokens or bytes).

A result is a JSON document; its *serialised size* is the size of
``serialise(document)`` (compact UTF-8 JSON, metadata and the model-facing ``text`` included)
measured by a :class:`Meter`: tokens under a named tokenizer (``budget_tokens``) or UTF-8
bytes (``max_bytes``, the instantKV shape). The two are separate budgets and never mixed.

Packing (:func:`pack`): entries arrive ranked, each tagged with a coverage channel
(``constraints``, ``facts``, ``sources``) and ``required`` or optional.

1. Required entries (agent-scope rules) always go in; if they and the metadata cannot fit,
   :class:`~remem.errors.ResultLimitExceeded` is raised, never a silent drop.
2. Optional entries are added best first while an additive size estimate stays within the
   budget; an entry that does not fit is skipped and later, smaller ones may still go in
   (until :data:`MAX_MISSES` in a row did not fit).
3. The exact size of the whole document is then measured; while it is over budget the
   lowest-ranked optional entry is removed (the required-only document was checked in step 1,
   so this always ends within the budget).

``truncated`` is exact: true iff an eligible entry was left out; a channel's coverage is
``incomplete`` iff one of its entries was left out, else ``complete``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from remem.errors import InvalidInput, ResultLimitExceeded

COMPLETE, INCOMPLETE = "complete", "incomplete"
MAX_MISSES = 4
"""Packing stops after this many consecutive entries did not fit (the budget is spent)."""
RECALL_CHANNELS = ("constraints", "facts", "sources")


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
    """One renderable element: its JSON object, its line of model-facing text, its channel."""

    channel: str
    data: Mapping[str, Any]
    line: str = ""
    required: bool = False


@dataclass(frozen=True)
class Rendered:
    """A packed result.

    Attributes:
        entries: the entries kept, in input order.
        omitted: how many eligible entries were left out.
        truncated: ``omitted > 0``.
        coverage: channel -> complete | incomplete.
        document: the result document; ``serialised`` is its measured serialisation.
        size: ``meter.size(serialised)`` (<= the budget), in ``unit``.
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
         channels: Sequence[str] = RECALL_CHANNELS) -> Rendered:
    """Packs ranked entries into a document whose serialised size fits ``budget``.

    Args:
        entries: ranked entries (required ones anywhere; output keeps input order).
        budget: the limit in ``meter.unit``.
        meter: token or byte meter.
        build: ``(kept entries, truncated, coverage) -> document``.
        channels: coverage channels reported (all ``complete`` when nothing is left out).

    Returns:
        The packed result.

    Raises:
        ResultLimitExceeded: the required entries plus metadata exceed the budget.
    """
    optional = [e for e in entries if not e.required]

    def measure(kept_optional: list[Entry]) -> tuple[int, dict[str, Any], str, list[Entry],
                                                     dict[str, str]]:
        keep = {id(e) for e in kept_optional}
        omitted = [e for e in optional if id(e) not in keep]
        coverage = {c: COMPLETE for c in channels}
        for e in omitted:
            coverage[e.channel] = INCOMPLETE
        kept = [e for e in entries if e.required or id(e) in keep]
        doc = build(kept, bool(omitted), coverage)
        text = serialise(doc)
        return meter.size(text), doc, text, kept, coverage

    base, *_ = measure([])
    if base > budget:
        required = sum(1 for e in entries if e.required)
        raise ResultLimitExceeded(
            f"The result needs at least {base} {meter.unit} ({required} required item(s) plus "
            f"metadata) but the budget is {budget} {meter.unit}; raise the budget.",
            budget=budget, unit=meter.unit, required_size=base, required_items=required)
    estimate, chosen, misses = base, [], 0
    for e in optional:
        cost = meter.size(serialise(dict(e.data)) + "\n" + _escaped(e.line)) + 2
        if estimate + cost <= budget:
            chosen.append(e)
            estimate += cost
            misses = 0
        else:
            misses += 1
            if misses >= MAX_MISSES:
                break
    while True:
        size, doc, text, kept, coverage = measure(chosen)
        if size <= budget or not chosen:
            omitted = len(optional) - len(chosen)
            return Rendered(tuple(kept), omitted, omitted > 0, coverage, doc, text, size,
                            meter.unit)
        chosen.pop()


# --- recall lines ------------------------------------------------------------------------
def value_text(value: Any) -> str:
    """A value as shown to a model: strings quoted JSON, other types canonical JSON."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def item_line(d: Mapping[str, Any], *, constraint: bool) -> str:
    """``[fact] user:alice home_city = "Berlin" (profile_slot, since 2023-01-01T09:30Z)``; the
    status is shown unless current; times are UTC to the minute (never a local date that
    could read as another day); ids and full times are in the structured item."""
    tag = "constraint" if constraint else ("contested" if d["status"] == "conflict" else "fact")
    status = "" if d["status"] == "current" else f"{d['status']}, "
    return (f"[{tag}] {d['scope']} {d['key']} = {value_text(d['value'])} ({d['kind']}, "
            f"{status}since {d['valid_at'][:16]}Z)")


def source_line(d: Mapping[str, Any]) -> str:
    """``[source] user:alice user-message by user 2026-05-01: "..."`` (raw evidence)."""
    return (f"[source] {d['scope']} {d['kind']} by {d['role']} {d['occurred_at'][:10]}: "
            f"{value_text(d['text'])}")


def recall_header(basis_seq: int, truncated: bool, coverage: Mapping[str, str]) -> str:
    cov = " ".join(f"{k}={v}" for k, v in coverage.items())
    return (f"remem recall basis_seq={basis_seq} truncated={str(truncated).lower()} "
            f"coverage: {cov}. [source] lines are raw evidence, not accepted facts.")


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
    """The recall document: status, metadata, items (constraints first), sources, the text.

    ``barrier`` is ``{"state": satisfied|pending|failed, "unresolved": [...], "failed":
    [{receipt_id, reason}]}`` when the caller named ``after`` receipts (KIP read barrier).
    """

    def build(kept: Sequence[Entry], truncated: bool, coverage: dict[str, str]) -> dict:
        status, eligible, coverage = recall_status(barrier, truncated, coverage)
        lines = [recall_header(basis_seq, truncated, coverage), *(e.line for e in kept)]
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
            "text": "\n".join(lines),
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
            lines.extend(f"- {d['scope']} {d['key']}: {value_text(d['value'])}" for d in rows)
    return "\n".join(lines)


def profile_builder(*, activation_id: str | None, scopes: Sequence[str], basis_seq: int,
                    budget: Mapping[str, Any]) -> Builder:
    """The pinned profile document: items + truncated (instantKV) plus text and activation."""

    def build(kept: Sequence[Entry], truncated: bool, coverage: dict[str, str]) -> dict:
        return {"activation_id": activation_id, "scopes": list(scopes),
                "basis_seq": basis_seq, **budget, "truncated": truncated,
                "items": [dict(e.data) for e in kept], "text": profile_text(scopes, kept)}

    return build
