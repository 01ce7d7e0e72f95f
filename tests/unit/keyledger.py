"""Test kit: drive the pure ``decide`` against one key and fold its events with ``Projection``.

No database: the ledger is a list, the read model is ``domain.fold.Projection``, and the
state handed to ``decide`` is ``fold.key_state`` of that projection, exactly as a writer does.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from remem.domain import operations as ops
from remem.domain.decision import Decision, Judgement, decide
from remem.domain.events import Event
from remem.domain.fold import ItemRecord, Projection, key_state
from remem.domain.model import (
    Authority,
    Candidate,
    Cardinality,
    KeyState,
    Kind,
    OnChange,
    Scope,
    Source,
)
from remem.domain.timefmt import to_iso

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def day(n: float) -> datetime:
    """World time ``n`` days after T0."""
    return T0 + timedelta(days=n)


class KeyLedger:
    """One (scope, key) of one memory, written only through ``decide`` and the fold."""

    def __init__(self, key: str = "home_city", *, scope: str = "user:alice",
                 memory_id: str = "m1", cardinality: Cardinality | None = None,
                 on_change: OnChange | None = None) -> None:
        self.memory_id = memory_id
        self.claim_secret = b"k" * 32  # a keyed memory (claim ids are HMAC-SHA256)
        self.scope = scope
        self.key = key
        self.cardinality = cardinality
        self.on_change = on_change
        self.projection = Projection()
        self.events: list[dict[str, Any]] = []
        self.values: dict[str, Any] = {}  # item_id -> value (payloads live beside the ledger)
        self.clock = datetime(2030, 1, 1, tzinfo=UTC)  # decision time, never world time

    # --- state ---------------------------------------------------------------------------
    def state(self) -> KeyState:
        return key_state(self.projection, self.scope, self.key)

    def records(self) -> list[ItemRecord]:
        return sorted((r for r in self.projection.items.values()
                       if r.scope == self.scope and r.key == self.key),
                      key=lambda r: r.revision)

    def with_status(self, status: str) -> list[ItemRecord]:
        return [r for r in self.records() if r.status == status]

    def current_values(self) -> list[Any]:
        return [self.values[r.item_id] for r in self.with_status("current")]

    def rec(self, item_id: str) -> ItemRecord:
        return self.projection.items[item_id]

    # --- writes --------------------------------------------------------------------------
    def candidate(self, value: Any, *, valid_at: datetime | None = None,
                  kind: Kind = Kind.PROFILE_SLOT, source_id: str | None = "src-1",
                  quote: str | None = None) -> Candidate:
        return Candidate(scope=Scope.parse(self.scope), key=self.key, value=value, kind=kind,
                         valid_at=valid_at or T0,
                         source=Source(id=source_id, text=quote, role="user"))

    def decide(self, value: Any, *, authority: Authority = Authority.OWNER,
               valid_at: datetime | None = None, judgement: Judgement | None = None,
               expected_revision: int | None = None, replaces: str | None = None,
               quote: str | None = None, source_id: str | None = "src-1",
               apply: bool = True) -> Decision:
        """Decides a candidate at the current state; folds its events unless ``apply`` is False."""
        self.clock += timedelta(seconds=1)
        cand = self.candidate(value, valid_at=valid_at, quote=quote, source_id=source_id)
        d = decide(self.state(), cand, memory_id=self.memory_id,
                   claim_secret=self.claim_secret, authority=authority,
                   now=self.clock, content_hash="c" * 64, judgement=judgement,
                   expected_revision=expected_revision, replaces=replaces,
                   on_change=self.on_change, cardinality=self.cardinality)
        if apply:
            self.apply(d.events)
            if d.new_item:
                self.values[d.item_id] = value
        return d

    def operate(self, op: ops.Operation) -> ops.Operation:
        self.apply(op.events)
        return op

    def apply(self, events: tuple[Event, ...] | list[Event]) -> None:
        self.clock += timedelta(seconds=1)
        for ev in events:
            stored = {"memory": self.memory_id, "seq": len(self.events) + 1,
                      "type": ev.type.value, "data": ev.wire_data(), "actor": "owner",
                      "at": to_iso(self.clock)}
            self.events.append(stored)
            self.projection.apply(stored)
