"""Text-free ledger events (KickSide ``kickside.memory.events``).

An event is a wire type name (past tense, ``item.superseded``), a schema version and a data
mapping of ids, hashes, times and enums. Memory text never enters an event: ``ensure_text_free``
rejects any data field outside the declared field set of its type.

Identity labels (issue 15): an ``Event`` is built with raw ``scope``/``key`` labels, and
``domain.ledger.chain`` seals them for a memory with keyed labels (``domain.labels``). The
stored data version ``v`` tells the formats apart:

- ``v: 1``: raw ``scope`` and ``key`` (every event of a memory created before issue 15, and
  events that name no label);
- ``v: 2``: ``scope_ref`` and ``key_ref`` (``lbl_`` + HMAC-SHA256 with the memory's secret) in
  their place; the labels live in the erasable ``labels`` table beside the ledger.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class EventType(StrEnum):
    MEMORY_CONFIGURED = "memory.configured"
    KEY_DECLARED = "key.declared"
    ITEM_ADDED = "item.added"
    ITEM_REVISED = "item.revised"
    ITEM_SUPERSEDED = "item.superseded"
    ITEM_MERGED = "item.merged"
    ITEM_CONFLICTED = "item.conflicted"
    CONFLICT_RESOLVED = "conflict.resolved"
    ITEM_ARCHIVED = "item.archived"
    ITEM_RESTORED = "item.restored"
    ITEM_FORGOTTEN = "item.forgotten"
    PROVENANCE_ADDED = "provenance.added"
    RETENTION_SET = "retention.set"
    HOLD_SET = "hold.set"
    HOLD_RELEASED = "hold.released"
    SOURCE_RECORDED = "source.recorded"
    SOURCE_REDACTED = "source.redacted"
    CAPTURE_ADVANCED = "capture.advanced"
    CONSOLIDATION_COMPLETED = "consolidation.completed"


_ITEM_REF = {"item_id", "scope", "key", "revision"}

#: Allowed data fields per event type; anything else is refused (text-free by construction).
FIELDS: dict[EventType, frozenset[str]] = {
    EventType.MEMORY_CONFIGURED: frozenset({"config_digest", "embedding_model", "dimensions"}),
    EventType.KEY_DECLARED: frozenset({"key", "cardinality", "on_change"}),
    EventType.ITEM_ADDED: frozenset(
        _ITEM_REF
        | {
            "claim_id", "kind", "cardinality", "valid_at", "valid_until", "payload_id",
            "content_hash", "source_id", "source_role", "authority",
            # KickSide: the derive run that formed it and where it was said (ids only)
            "run_id", "provenance", "occurrence_of",
            "priority",  # higher is more important; item.revised changes it
        }
    ),
    EventType.ITEM_REVISED: frozenset(_ITEM_REF | {"payload_id", "content_hash", "priority"}),
    EventType.ITEM_SUPERSEDED: frozenset(
        _ITEM_REF | {"by", "invalid_at", "resolved_conflict", "correction"}
    ),
    EventType.ITEM_MERGED: frozenset({"scope", "key", "revision", "item_ids", "into"}),
    EventType.ITEM_CONFLICTED: frozenset({"scope", "key", "revision", "item_ids", "group_id"}),
    EventType.CONFLICT_RESOLVED: frozenset({"scope", "key", "revision", "group_id", "keep"}),
    EventType.ITEM_ARCHIVED: frozenset(_ITEM_REF),
    EventType.ITEM_RESTORED: frozenset(_ITEM_REF | {"status"}),
    EventType.ITEM_FORGOTTEN: frozenset(_ITEM_REF | {"claim_id", "reason"}),
    EventType.PROVENANCE_ADDED: frozenset(
        {"item_id", "scope", "key", "source_id", "source_role", "seen_at", "valid_at",
         "host_kind", "host_id", "event_id"}
    ),
    EventType.RETENTION_SET: frozenset(_ITEM_REF | {"keep_until"}),
    EventType.HOLD_SET: frozenset(_ITEM_REF),
    EventType.HOLD_RELEASED: frozenset(_ITEM_REF),
    EventType.SOURCE_RECORDED: frozenset({"source_id", "run_id", "scope", "sequence", "entry_hash"}),
    EventType.SOURCE_REDACTED: frozenset({"source_id", "run_id", "reason"}),
    EventType.CAPTURE_ADVANCED: frozenset({"host_kind", "host_id", "last_event_id"}),
    EventType.CONSOLIDATION_COMPLETED: frozenset({"run_id", "stats"}),
}

#: Schema version per event type; bump and add an upcaster when a type's data changes. A
#: sealed event (labels replaced by refs) is stored as ``domain.labels.SEALED_VERSION`` (2).
SCHEMA_VERSION: dict[EventType, int] = {t: 1 for t in EventType}


@dataclass(frozen=True)
class Event:
    """A ledger event before it is sequenced and hashed."""

    type: EventType
    data: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        ensure_text_free(self.type, self.data)

    def wire_data(self) -> dict[str, Any]:
        """Data with the schema version ``v`` added, as stored in the ledger."""
        return {"v": SCHEMA_VERSION[self.type], **{k: v for k, v in self.data.items()}}


def ensure_text_free(event_type: EventType, data: Mapping[str, Any]) -> None:
    """Raises ValueError when data carries a field not declared for its type.

    This is a programming error, not a user error: events are built by the decision only.
    """
    extra = set(data) - FIELDS[event_type] - {"v"}
    if extra:
        raise ValueError(f"{event_type} does not carry fields {sorted(extra)}")


def upcast(event_type: str, data: Mapping[str, Any]) -> dict[str, Any]:
    """Brings stored event data to the current schema version (all types are at v1 today;
    v2 differs only by label refs, which ``domain.labels`` resolves)."""
    return dict(data)
