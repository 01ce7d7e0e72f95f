"""Owner operations that are not new statements: resolve, archive, restore, forget, holds.

Each takes a key's state and returns events (pure). Forget computes the erasure cascade
(DESIGN.md "Forget"): the item, every other occurrence of its claim in the scope, and every
predecessor/successor linked by supersession or merge; independent values of a multi key stay.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from remem.domain.events import Event, EventType
from remem.domain.model import ItemState, ItemStatus, KeyState
from remem.domain.timefmt import to_iso
from remem.errors import InvalidInput, LegalHoldActive, NotFound, RevisionMismatch


@dataclass(frozen=True)
class Operation:
    """Events of an owner operation and the key revision after it."""

    events: tuple[Event, ...]
    revision: int
    item_ids: tuple[str, ...] = ()


def _item(state: KeyState, item_id: str) -> ItemState:
    for i in state.items:
        if i.item_id == item_id:
            return i
    raise NotFound(f"No item {item_id!r} under key {state.key!r}.", item_id=item_id)


def _ref(state: KeyState, item_id: str, revision: int) -> dict:
    return {"item_id": item_id, "scope": str(state.scope), "key": state.key, "revision": revision}


def check_revision(state: KeyState, expected_revision: int | None, what: str) -> None:
    """Raises RevisionMismatch when ``expected_revision`` is given and stale."""
    if expected_revision is not None and expected_revision != state.revision:
        raise RevisionMismatch(
            f"{what} of {state.key!r} expected revision {expected_revision}, but the current "
            f"revision is {state.revision}. Inspect the key and retry with revision "
            f"{state.revision}.",
            key=state.key, expected_revision=expected_revision, current_revision=state.revision)


def resolve_conflict(state: KeyState, group_id: str, keep: str) -> Operation:
    """Keeps one item of a conflict group current; the others are superseded by it.

    Raises:
        NotFound: no such group in the key, or ``keep`` is not a member.
    """
    members = [i for i in state.items if i.conflict_group == group_id
               and i.status is ItemStatus.CONFLICT]
    if not members:
        raise NotFound(f"No open conflict group {group_id!r}.", group_id=group_id)
    kept = next((m for m in members if m.item_id == keep), None)
    if kept is None:
        raise NotFound(f"Item {keep!r} is not in conflict group {group_id!r}; choose one of "
                       f"{[m.item_id for m in members]}.", group_id=group_id, keep=keep)
    rev = state.revision + 1
    events = [Event(EventType.CONFLICT_RESOLVED, {
        "scope": str(state.scope), "key": state.key, "revision": rev, "group_id": group_id,
        "keep": keep})]
    for m in members:
        if m.item_id != keep:
            events.append(Event(EventType.ITEM_SUPERSEDED, {
                **_ref(state, m.item_id, rev), "by": keep,
                "invalid_at": to_iso(max(m.valid_at, kept.valid_at)),
                "resolved_conflict": group_id}))
    return Operation(tuple(events), rev, (keep,))


def archive(state: KeyState, item_id: str) -> Operation:
    """Archives an item (reversible): it leaves recall, profile and default listings."""
    item = _item(state, item_id)
    if item.status is ItemStatus.ARCHIVED:
        return Operation((), state.revision, (item_id,))
    rev = state.revision + 1
    return Operation((Event(EventType.ITEM_ARCHIVED, _ref(state, item_id, rev)),), rev,
                     (item_id,))


def restore(state: KeyState, item_id: str, prior_status: str | None) -> Operation:
    """Restores an archived item to its prior status.

    A formerly current item of a single key that meanwhile has another live value comes back
    as history (superseded), so a single key never has two current items.
    """
    item = _item(state, item_id)
    if item.status is not ItemStatus.ARCHIVED:
        raise InvalidInput(f"Item {item_id!r} is not archived (it is {item.status}).",
                           item_id=item_id)
    status = prior_status or ItemStatus.CURRENT.value
    others_live = [i for i in state.live() if i.item_id != item_id]
    single = state.cardinality is None or state.cardinality.value == "single"
    if status in (ItemStatus.CURRENT.value, ItemStatus.CONFLICT.value):
        if single and others_live:
            status = ItemStatus.SUPERSEDED.value
        elif status == ItemStatus.CONFLICT.value:
            status = ItemStatus.CURRENT.value
    rev = state.revision + 1
    return Operation((Event(EventType.ITEM_RESTORED, {**_ref(state, item_id, rev),
                                                      "status": status}),), rev, (item_id,))


def forget_cascade(state: KeyState, item_ids: list[str]) -> list[ItemState]:
    """Items erased when forgetting ``item_ids``: same claims + supersession/merge links."""
    by_id = {i.item_id: i for i in state.items}
    todo = [by_id[i] for i in item_ids if i in by_id]
    seen: dict[str, ItemState] = {}
    while todo:
        cur = todo.pop()
        if cur.item_id in seen:
            continue
        seen[cur.item_id] = cur
        for other in state.items:
            if other.item_id in seen:
                continue
            if (other.claim_id == cur.claim_id or other.superseded_by == cur.item_id
                    or cur.superseded_by == other.item_id):
                todo.append(other)
    return sorted(seen.values(), key=lambda i: i.revision)


def forget(state: KeyState, item_ids: list[str], *, reason: str = "owner") -> Operation:
    """Events that forget the cascade of ``item_ids``.

    Raises:
        LegalHoldActive: any item of the cascade is under legal hold (nothing is written).
    """
    cascade = forget_cascade(state, item_ids)
    held = [i.item_id for i in cascade if i.legal_hold]
    if held:
        raise LegalHoldActive(
            f"Items {held} are under legal hold; an admin must release the hold before they "
            "can be forgotten.", item_ids=held)
    if not cascade:
        return Operation((), state.revision)
    rev = state.revision + 1
    events = [Event(EventType.ITEM_FORGOTTEN, {**_ref(state, i.item_id, rev),
                                               "claim_id": i.claim_id, "reason": reason})
              for i in cascade]
    # A conflict group reduced to one member is no longer a conflict.
    gone = {i.item_id for i in cascade}
    groups: dict[str, list[ItemState]] = {}
    for i in state.items:
        if i.conflict_group and i.status is ItemStatus.CONFLICT and i.item_id not in gone:
            groups.setdefault(i.conflict_group, []).append(i)
    touched = {i.conflict_group for i in cascade if i.conflict_group}
    for gid in touched:
        rest = groups.get(gid, [])
        if len(rest) == 1:
            events.append(Event(EventType.CONFLICT_RESOLVED, {
                "scope": str(state.scope), "key": state.key, "revision": rev,
                "group_id": gid, "keep": rest[0].item_id}))
    return Operation(tuple(events), rev, tuple(i.item_id for i in cascade))


def set_hold(state: KeyState, item_id: str, hold: bool) -> Operation:
    """Sets or releases a legal hold on an item (admin; recorded on the ledger)."""
    _item(state, item_id)
    rev = state.revision
    etype = EventType.HOLD_SET if hold else EventType.HOLD_RELEASED
    return Operation((Event(etype, _ref(state, item_id, rev)),), rev, (item_id,))


def set_retention(state: KeyState, item_id: str, keep_until: datetime | None) -> Operation:
    """Sets an item's ``keep_until`` (Log+Facts retention.keepUntil)."""
    _item(state, item_id)
    data = {**_ref(state, item_id, state.revision),
            "keep_until": to_iso(keep_until) if keep_until else None}
    return Operation((Event(EventType.RETENTION_SET, data),), state.revision, (item_id,))


def retract(state: KeyState, claim_id: str, invalid_at: datetime) -> Operation:
    """The user says a value is no longer true ("I don't live in Paris anymore").

    The live item of that claim ends at ``invalid_at`` with no successor; nothing happens when
    the claim is not live or the retraction is older than the item (history stays history).
    """
    live = [i for i in state.live() if i.claim_id == claim_id and i.valid_at <= invalid_at]
    if not live:
        return Operation((), state.revision)
    rev = state.revision + 1
    events = [Event(EventType.ITEM_SUPERSEDED, {**_ref(state, i.item_id, rev), "by": None,
                                                "invalid_at": to_iso(invalid_at)})
              for i in live]
    return Operation(tuple(events), rev, tuple(i.item_id for i in live))
