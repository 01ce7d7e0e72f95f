"""The one fold: ledger events -> read-model records (text-free).

Used by the write path (apply a decision's events to the affected key's records), by
``rebuild`` (apply every event of a memory to an empty projection) and, through
``key_state``, by the decision. Pure: mutates only the in-memory ``Projection`` it is given.

Labels (``domain.labels``): items carry their raw ``scope``/``key`` (live rows only); key
revisions, key cardinalities and tombstones are keyed by label refs, which outlive a forgotten
item without naming it. The fold reads data version 1 (raw labels: refs computed with the
projection's ``label_keys``) and version 2 (refs: labels joined back from ``names``, filled by
the store from its labels table and by each sealed event's own ``labels``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from remem.domain.events import EventType
from remem.domain.labels import LabelKeys, with_refs
from remem.domain.model import (
    Cardinality,
    ItemState,
    ItemStatus,
    Kind,
    KeyState,
    OnChange,
    Scope,
)
from remem.domain.timefmt import from_iso


@dataclass(frozen=True)
class ItemRecord:
    """One row of the items table (no text: text lives in payloads)."""

    item_id: str
    claim_id: str
    scope: str
    key: str
    kind: str
    cardinality: str
    status: str
    revision: int
    valid_at: str
    payload_id: str
    content_hash: str
    authority: str
    created_seq: int
    updated_seq: int
    created_at: str
    last_confirmed_at: str
    seen_count: int = 1
    invalid_at: str | None = None
    valid_until: str | None = None
    superseded_by: str | None = None
    conflict_group: str | None = None
    source_id: str | None = None
    source_role: str | None = None
    prior_status: str | None = None
    correction: bool = False
    legal_hold: bool = False
    keep_until: str | None = None
    confirmed_at: str | None = None  # world time of the newest statement of this item
    priority: int | None = None  # higher is more important; item.added / item.revised


@dataclass(frozen=True)
class KeyRecord:
    """One row of the key_revisions table: the revision counter per (scope, key), named by
    label refs (``scope`` and ``key`` hold refs; raw labels for a memory without keyed ones)."""

    scope: str
    key: str
    revision: int = 0


@dataclass(frozen=True)
class ProvenanceRecord:
    item_id: str
    seq: int
    source_id: str | None
    source_role: str | None
    seen_at: str


@dataclass
class Projection:
    """In-memory read model of (part of) one memory.

    ``touched_*`` collect what an ``apply`` changed so a store writes only those rows.
    ``keys``, ``cardinality`` and ``tombstones`` are keyed by label refs (``label_keys``);
    ``names`` maps refs to the labels still held.
    """

    items: dict[str, ItemRecord] = field(default_factory=dict)
    keys: dict[tuple[str, str], KeyRecord] = field(default_factory=dict)
    cardinality: dict[str, tuple[str, str]] = field(default_factory=dict)  # key -> (card, on_change)
    tombstones: set[tuple[str, str, str]] = field(default_factory=set)  # (scope, key, claim_id)
    provenance: list[ProvenanceRecord] = field(default_factory=list)
    touched_items: set[str] = field(default_factory=set)
    touched_keys: set[tuple[str, str]] = field(default_factory=set)
    new_cardinality: set[str] = field(default_factory=set)
    new_tombstones: set[tuple[str, str, str]] = field(default_factory=set)
    new_provenance: list[ProvenanceRecord] = field(default_factory=list)
    forgotten: set[str] = field(default_factory=set)
    label_keys: LabelKeys = field(default_factory=LabelKeys)
    names: dict[str, str] = field(default_factory=dict)

    def mark_all_new(self) -> None:
        """Marks every row as touched/new, so a store writes the whole projection (rebuild)."""
        self.touched_items = set(self.items) | self.forgotten
        self.touched_keys = set(self.keys)
        self.new_cardinality = set(self.cardinality)
        self.new_tombstones = set(self.tombstones)
        self.new_provenance = list(self.provenance)

    def apply_all(self, events: Iterable[Mapping[str, Any]]) -> None:
        for ev in events:
            self.apply(ev)

    def apply(self, ev: Mapping[str, Any]) -> None:
        """Applies one stored event (mapping with seq, type, data, actor, at and, for an event
        sealed in this write, ``labels``: {ref: [field, label]})."""
        for ref, (_, label) in (ev.get("labels") or {}).items():
            self.names[ref] = label
        handler = _HANDLERS.get(EventType(ev["type"]))
        if handler is not None:
            handler(self, with_refs(ev["data"], self.label_keys, self.names), ev["seq"],
                    ev["at"])

    def refs(self, scope: str, key: str) -> tuple[str, str]:
        """The label refs of a (scope, key) under this projection's label keys."""
        return self.label_keys.ref("scope", scope), self.label_keys.ref("key", key)

    # --- helpers -------------------------------------------------------------------------
    def _put(self, rec: ItemRecord) -> None:
        self.items[rec.item_id] = rec
        self.touched_items.add(rec.item_id)

    def _update(self, item_id: str, seq: int, **changes: Any) -> None:
        rec = self.items.get(item_id)
        if rec is None:  # erased earlier or outside this partial projection
            return
        self._put(replace(rec, updated_seq=seq, **changes))

    def _bump(self, data: Mapping[str, Any]) -> None:
        if "revision" not in data or "scope_ref" not in data:
            return
        k = (data["scope_ref"], data["key_ref"])
        cur = self.keys.get(k, KeyRecord(*k))
        if data["revision"] > cur.revision:
            self.keys[k] = replace(cur, revision=data["revision"])
            self.touched_keys.add(k)


def _key_declared(p: Projection, d: Mapping[str, Any], seq: int, at: str) -> None:
    p.cardinality.setdefault(d["key_ref"], (d["cardinality"],
                                            d.get("on_change") or "supersede"))
    p.new_cardinality.add(d["key_ref"])


def _item_added(p: Projection, d: Mapping[str, Any], seq: int, at: str) -> None:
    p._put(
        ItemRecord(
            item_id=d["item_id"], claim_id=d["claim_id"], scope=d["scope"], key=d["key"],
            kind=d["kind"], cardinality=d["cardinality"], status=ItemStatus.CURRENT.value,
            revision=d["revision"], valid_at=d["valid_at"], valid_until=d.get("valid_until"),
            payload_id=d["payload_id"], content_hash=d["content_hash"],
            authority=d["authority"], source_id=d.get("source_id"),
            source_role=d.get("source_role"), created_seq=seq, updated_seq=seq,
            created_at=at, last_confirmed_at=at, confirmed_at=d["valid_at"],
            priority=d.get("priority"),
        )
    )
    rec = ProvenanceRecord(d["item_id"], seq, d.get("source_id"), d.get("source_role"), at)
    p.provenance.append(rec)
    p.new_provenance.append(rec)
    p._bump(d)


def _item_revised(p: Projection, d: Mapping[str, Any], seq: int, at: str) -> None:
    """A new text (payload) and/or a new priority of the same claim."""
    changes = {k: d[k] for k in ("payload_id", "content_hash", "priority") if k in d}
    p._update(d["item_id"], seq, **changes)
    p._bump(d)


def _item_superseded(p: Projection, d: Mapping[str, Any], seq: int, at: str) -> None:
    p._update(
        d["item_id"], seq, status=ItemStatus.SUPERSEDED.value, superseded_by=d.get("by"),
        invalid_at=d.get("invalid_at"), conflict_group=None,
        correction=bool(d.get("correction", False)),
    )
    p._bump(d)


def _item_merged(p: Projection, d: Mapping[str, Any], seq: int, at: str) -> None:
    for item_id in d["item_ids"]:
        rec = p.items.get(item_id)
        if rec is not None and item_id != d["into"]:
            p._update(item_id, seq, status=ItemStatus.SUPERSEDED.value, superseded_by=d["into"],
                      conflict_group=None)
    p._bump(d)


def _item_conflicted(p: Projection, d: Mapping[str, Any], seq: int, at: str) -> None:
    for item_id in d["item_ids"]:
        p._update(item_id, seq, status=ItemStatus.CONFLICT.value, conflict_group=d["group_id"])
    p._bump(d)


def _conflict_resolved(p: Projection, d: Mapping[str, Any], seq: int, at: str) -> None:
    p._update(d["keep"], seq, status=ItemStatus.CURRENT.value, conflict_group=None)
    p._bump(d)


def _item_archived(p: Projection, d: Mapping[str, Any], seq: int, at: str) -> None:
    rec = p.items.get(d["item_id"])
    if rec is not None:
        p._update(d["item_id"], seq, status=ItemStatus.ARCHIVED.value, prior_status=rec.status)
    p._bump(d)


def _item_restored(p: Projection, d: Mapping[str, Any], seq: int, at: str) -> None:
    p._update(d["item_id"], seq, status=d["status"], prior_status=None)
    p._bump(d)


def _item_forgotten(p: Projection, d: Mapping[str, Any], seq: int, at: str) -> None:
    rec = p.items.pop(d["item_id"], None)
    p.touched_items.add(d["item_id"])
    p.forgotten.add(d["item_id"])
    p.provenance = [r for r in p.provenance if r.item_id != d["item_id"]]
    tomb = (d["scope_ref"], d["key_ref"], d["claim_id"])
    if tomb not in p.tombstones:
        p.tombstones.add(tomb)
        p.new_tombstones.add(tomb)
    if rec is not None:
        p._bump(d)


def _provenance_added(p: Projection, d: Mapping[str, Any], seq: int, at: str) -> None:
    rec = p.items.get(d["item_id"])
    if rec is None:
        return
    confirmed = rec.confirmed_at or rec.valid_at
    stated = d.get("valid_at")  # fixed-width ISO strings: lexicographic order is time order
    p._update(d["item_id"], seq, last_confirmed_at=d.get("seen_at") or at,
              seen_count=rec.seen_count + 1,
              confirmed_at=max(confirmed, stated) if stated else confirmed)
    prov = ProvenanceRecord(d["item_id"], seq, d.get("source_id"), d.get("source_role"),
                            d.get("seen_at") or at)
    p.provenance.append(prov)
    p.new_provenance.append(prov)


def _retention_set(p: Projection, d: Mapping[str, Any], seq: int, at: str) -> None:
    p._update(d["item_id"], seq, keep_until=d.get("keep_until"))


def _hold_set(p: Projection, d: Mapping[str, Any], seq: int, at: str) -> None:
    p._update(d["item_id"], seq, legal_hold=True)


def _hold_released(p: Projection, d: Mapping[str, Any], seq: int, at: str) -> None:
    p._update(d["item_id"], seq, legal_hold=False)


_HANDLERS = {
    EventType.KEY_DECLARED: _key_declared,
    EventType.ITEM_ADDED: _item_added,
    EventType.ITEM_REVISED: _item_revised,
    EventType.ITEM_SUPERSEDED: _item_superseded,
    EventType.ITEM_MERGED: _item_merged,
    EventType.ITEM_CONFLICTED: _item_conflicted,
    EventType.CONFLICT_RESOLVED: _conflict_resolved,
    EventType.ITEM_ARCHIVED: _item_archived,
    EventType.ITEM_RESTORED: _item_restored,
    EventType.ITEM_FORGOTTEN: _item_forgotten,
    EventType.PROVENANCE_ADDED: _provenance_added,
    EventType.RETENTION_SET: _retention_set,
    EventType.HOLD_SET: _hold_set,
    EventType.HOLD_RELEASED: _hold_released,
}


def key_state(p: Projection, scope: str, key: str) -> KeyState:
    """The decision's view of one (scope, key) from a projection."""
    recs = sorted(
        (r for r in p.items.values() if r.scope == scope and r.key == key),
        key=lambda r: (r.revision, r.created_seq),
    )
    sref, kref = p.refs(scope, key)
    card = p.cardinality.get(kref)
    return KeyState(
        scope=Scope.parse(scope),
        key=key,
        items=tuple(
            ItemState(
                item_id=r.item_id, claim_id=r.claim_id, status=ItemStatus(r.status),
                valid_at=from_iso(r.valid_at), revision=r.revision, kind=Kind(r.kind),
                invalid_at=from_iso(r.invalid_at) if r.invalid_at else None,
                conflict_group=r.conflict_group, superseded_by=r.superseded_by,
                legal_hold=r.legal_hold,
                confirmed_at=from_iso(r.confirmed_at) if r.confirmed_at else None,
                priority=r.priority,
            )
            for r in recs
        ),
        revision=p.keys.get((sref, kref), KeyRecord(sref, kref)).revision,
        cardinality=Cardinality(card[0]) if card else None,
        on_change=OnChange(card[1]) if card else OnChange.SUPERSEDE,
        tombstones=frozenset(c for (s, k, c) in p.tombstones if s == sref and k == kref),
    )
