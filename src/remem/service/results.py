"""Result shapes returned by the Memory API (plain dataclasses with ``to_dict``)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from remem.domain.fold import ItemRecord


class _Dict:
    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)  # type: ignore[arg-type]


@dataclass(frozen=True)
class WriteResult(_Dict):
    """Outcome of remember/correct/apply.

    Attributes:
        outcome: created | duplicate | superseded | conflict | stale | corrected | merged |
            forgotten.
        item_id: the item written or matched (None when nothing was written: forgotten).
        revision: the key's revision after the write.
        status: the item's status after the write.
        replayed: True when an identical idempotent retry returned the original result.
    """

    outcome: str
    scope: str
    key: str
    revision: int
    item_id: str | None = None
    claim_id: str | None = None
    status: str | None = None
    conflict_group: str | None = None
    replayed: bool = False


@dataclass(frozen=True)
class ItemView(_Dict):
    """An item with its text: the read shape of ``items``, ``inspect`` and recall."""

    item_id: str
    scope: str
    key: str
    value: Any
    kind: str
    status: str
    revision: int
    valid_at: str
    invalid_at: str | None
    valid_until: str | None
    quote: str | None
    source_id: str | None
    source_role: str | None
    claim_id: str
    superseded_by: str | None
    conflict_group: str | None
    created_at: str
    last_confirmed_at: str
    seen_count: int
    legal_hold: bool
    keep_until: str | None
    metadata: dict[str, Any] | None = None
    priority: int | None = None

    @classmethod
    def build(cls, rec: ItemRecord, payload: dict[str, Any] | None) -> ItemView:
        payload = payload or {}
        return cls(
            item_id=rec.item_id, scope=rec.scope, key=rec.key, value=payload.get("value"),
            kind=rec.kind, status=rec.status, revision=rec.revision, valid_at=rec.valid_at,
            invalid_at=rec.invalid_at, valid_until=rec.valid_until, quote=payload.get("quote"),
            source_id=rec.source_id, source_role=rec.source_role, claim_id=rec.claim_id,
            superseded_by=rec.superseded_by, conflict_group=rec.conflict_group,
            created_at=rec.created_at, last_confirmed_at=rec.last_confirmed_at,
            seen_count=rec.seen_count, legal_hold=rec.legal_hold, keep_until=rec.keep_until,
            metadata=payload.get("metadata"), priority=rec.priority,
        )


@dataclass(frozen=True)
class Inspection(_Dict):
    """State of one (scope, key) (instantKV inspect shape).

    Attributes:
        state: current | conflict | forgotten | archived | superseded | empty.
        value: the current value (None when not current).
        history: earlier items, newest first.
        conflicts: items of the open conflict group.
    """

    scope: str
    key: str
    state: str
    revision: int
    cardinality: str | None
    value: Any
    current: list[ItemView] = field(default_factory=list)
    history: list[ItemView] = field(default_factory=list)
    conflicts: list[ItemView] = field(default_factory=list)
    kind: str | None = None
    source: dict[str, Any] | None = None
    valid_until: str | None = None


@dataclass(frozen=True)
class Page(_Dict):
    """One page of a listing; ``next_cursor`` is None only when nothing more matches."""

    items: list[ItemView]
    next_cursor: str | None
    #: How many items match the listing's filters in all (every page, not just this one).
    total: int | None = None
