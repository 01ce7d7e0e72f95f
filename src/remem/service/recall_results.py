"""Result shapes of observe, recall, context and profile.

Budgeted results keep the exact document that was rendered: ``to_dict()`` returns it and
``to_json()`` its serialisation (compact UTF-8 JSON).

- recall: the budget counts the model-facing ``text`` only (tokens under the named tokenizer,
  ``RecallResult.tokens``); ``items`` and ``sources`` carry the structured result (ids, scores,
  full timestamps, source refs) for the program, beside the text and outside the budget, so
  ``to_json()`` may be larger than ``budget_tokens`` (see :mod:`remem.domain.render`).
- context and profile: the whole serialisation fits the budget: UTF-8 bytes (``max_bytes``)
  or tokens (profile with ``budget_tokens``).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any



@dataclass(frozen=True)
class SourceReceipt:
    """The durable acknowledgement of ``observe``.

    Attributes:
        source_id: the source's id (given, derived from the idempotency key, or generated).
        run_id, sequence, entry_hash: its place in the run's hash chain.
        phase: ``recorded`` (claims are extracted from sources by a later job).
        accepted_seq: ledger sequence of its ``source.recorded`` event.
        replayed: True when the same source was already recorded (nothing written now).
        redacted: True when its text was erased by forget (it is never stored again).
    """

    source_id: str
    run_id: str
    sequence: int
    scope: str
    kind: str
    role: str
    actor: str | None
    occurred_at: str
    recorded_at: str
    entry_hash: str
    accepted_seq: int | None
    phase: str = "recorded"
    replayed: bool = False
    redacted: bool = False

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class RecallItem:
    """One recalled item. ``constraint`` marks an agent-scope rule (required output)."""

    id: str
    key: str
    value: Any
    kind: str
    status: str
    scope: str
    valid_at: str
    score: float
    sources: list[str] = field(default_factory=list)
    constraint: bool = False
    #: A Kind-B cached fact's freshness ``{"stale", "strategy", "last_verified_at"[,
    #: "stale_reason"]}``; None for an ordinary fact.
    cached: dict[str, Any] | None = None

    @property
    def stale(self) -> bool:
        """True for a cached fact past its TTL or whose last refresh failed."""
        return bool(self.cached and self.cached.get("stale"))

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RecallItem:
        return cls(**{k: d[k] for k in ("id", "key", "value", "kind", "status", "scope",
                                       "valid_at", "score", "sources")},
                   constraint=bool(d.get("constraint", False)), cached=d.get("cached"))


@dataclass(frozen=True)
class RecallSource:
    """A raw source returned as evidence, labelled ``source`` (never an accepted fact)."""

    id: str
    scope: str
    kind: str
    role: str
    occurred_at: str
    text: str
    score: float
    label: str = "source"

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RecallSource:
        return cls(**{k: d[k] for k in ("id", "scope", "kind", "role", "occurred_at", "text",
                                       "score", "label")})


class _Budgeted:
    document: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """The measured document (a deep copy)."""
        return json.loads(self.to_json())

    def to_json(self) -> str:
        """The serialised document (for recall: text plus the unbudgeted structured result)."""
        return self._json  # type: ignore[attr-defined]


class RecallResult(_Budgeted):
    """What ``recall`` returns.

    Attributes:
        items: recalled items, constraints first, then by fused score.
        sources: raw sources labelled ``source``.
        basis_seq: ledger head the result was read at.
        truncated: True iff an eligible item or source was left out to fit the budget.
        coverage: ``{"constraints", "facts", "sources"}`` -> complete | incomplete.
        text: the compact model-facing rendering: the budgeted part.
        tokens: size of ``text`` in tokens under ``tokenizer`` (<= ``budget_tokens``); the
            structured ``items``/``sources`` (``to_json()``) are not counted.
    """

    def __init__(self, document: dict[str, Any], serialised: str, tokens: int) -> None:
        self.document, self._json, self.tokens = document, serialised, tokens
        self.items = [RecallItem.from_dict(d) for d in document["items"]]
        self.sources = [RecallSource.from_dict(d) for d in document["sources"]]
        self.basis_seq: int = document["basis_seq"]
        self.truncated: bool = document["truncated"]
        self.coverage: dict[str, str] = document["coverage"]
        self.text: str = document["text"]
        self.status: str = document.get("status", "succeeded")
        self.action_eligible: bool = document.get("action_eligible", True)
        self.unresolved: list[str] = document.get("unresolved", [])
        self.failed: list[dict[str, Any]] = document.get("failed", [])
        self.tokenizer: str = document["tokenizer"]
        self.budget_tokens: int = document["budget_tokens"]

    def __repr__(self) -> str:
        return (f"RecallResult(items={len(self.items)}, sources={len(self.sources)}, "
                f"truncated={self.truncated}, tokens={self.tokens}/{self.budget_tokens})")


class ContextResult(_Budgeted):
    """What ``context`` returns (instantKV shape): ``items`` and ``truncated``.

    Attributes:
        size_bytes: UTF-8 size of the serialisation (<= ``max_bytes``).
    """

    def __init__(self, document: dict[str, Any], serialised: str, size_bytes: int) -> None:
        self.document, self._json, self.size_bytes = document, serialised, size_bytes
        self.items: list[dict[str, Any]] = document["items"]
        self.truncated: bool = document["truncated"]
        self.max_bytes: int = document["max_bytes"]

    def __repr__(self) -> str:
        return (f"ContextResult(items={len(self.items)}, truncated={self.truncated}, "
                f"bytes={self.size_bytes}/{self.max_bytes})")


class ProfileResult(_Budgeted):
    """What ``profile`` returns: the pinned profile.

    For the same activation id (and scopes and budget) ``to_json()`` is byte-identical on every
    call until a new activation id is used (or an item in it is forgotten).

    Attributes:
        items: pinned items (identity, rules, profile slots, preferences).
        text: the rendered profile text.
        truncated: True iff a pinned item was left out to fit the budget.
        activation_id: the activation this render belongs to (None: not pinned).
        replayed: True when the stored render of the activation was returned.
    """

    def __init__(self, serialised: str, *, replayed: bool = False) -> None:
        self._json = serialised
        self.document = json.loads(serialised)
        self.items: list[dict[str, Any]] = self.document["items"]
        self.text: str = self.document["text"]
        self.truncated: bool = self.document["truncated"]
        self.activation_id: str | None = self.document["activation_id"]
        self.basis_seq: int = self.document["basis_seq"]
        self.replayed = replayed

    def __repr__(self) -> str:
        return (f"ProfileResult(items={len(self.items)}, truncated={self.truncated}, "
                f"activation_id={self.activation_id!r})")
