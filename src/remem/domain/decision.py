"""The one decision: (key state, candidate, authority, judgement) -> events.

Every writer goes through ``decide`` (DESIGN.md "Write path"; KickSide engine/decision.lua):

- a tombstoned claim is never learned again by AUTOMATIC or ASSERT paths (outcome forgotten);
- the same claim already live -> NOOP "seen again": provenance added, last-confirmed advanced;
- CORRECTION checks ``expected_revision`` first and supersedes the live value(s), taking over
  their world interval (KIP change_kind correction: the old value was never true);
- single key, different value: the later ``valid_at`` wins; an older statement is stored as
  history (outcome stale), never as current truth. Otherwise OWNER supersedes (or conflicts
  when the key's ``on_change`` is conflict), ASSERT records a conflict (instantKV), AUTOMATIC
  follows the judge's verdict (SUPERSEDE, MERGE, NOOP, CONFLICT) or the rule judge;
- multi key: ADD, unless the judge matches the candidate to an existing item;
- a CONFLICT always names the complete group;
- the same claim restated with another ``priority`` revises the current item
  (``item.revised`` with the new priority, and a new payload when the owner's text is new).

Pure: ids are derived from inputs, time comes in as ``now``; nothing reads a clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from remem.domain.canonical import claim_id as make_claim_id
from remem.domain.canonical import sha256_hex
from remem.domain.events import Event, EventType
from remem.domain.keys import default_cardinality
from remem.domain.model import (
    Authority,
    Candidate,
    Cardinality,
    ItemState,
    ItemStatus,
    KeyState,
    OnChange,
    Outcome,
    Verdict,
)
from remem.domain.timefmt import to_iso
from remem.errors import InvalidInput, NotFound, RevisionMismatch


@dataclass(frozen=True)
class Judgement:
    """A judge's verdict where the rules leave a choice.

    Attributes:
        verdict: ADD | SUPERSEDE | MERGE | NOOP | CONFLICT.
        target: the existing item id the verdict relates to (MERGE/SUPERSEDE/NOOP on a multi
            key); None lets the rules pick the live value of a single key.
    """

    verdict: Verdict
    target: str | None = None


@dataclass(frozen=True)
class Decision:
    """What a write does.

    Attributes:
        outcome: the result name reported to the caller.
        events: the events to append (empty when nothing changes).
        item_id: the item the candidate became, or the existing item it matched.
        revision: the key's revision after the decision.
        new_item: True when ``item_id`` is new and needs its payload stored.
        claim_id: the candidate's claim id.
        conflict_group: the group id when the outcome is a conflict.
        revised: True when the matched item got a new payload (``item.revised``).
    """

    outcome: Outcome
    events: tuple[Event, ...]
    item_id: str | None
    revision: int
    new_item: bool
    claim_id: str
    conflict_group: str | None = None
    revised: bool = False


#: Bounds of an item's priority (an integer, higher is more important).
MIN_PRIORITY, MAX_PRIORITY = 0, 100


def check_priority(priority: object) -> int | None:
    """``priority`` as given (None: not given).

    Raises:
        InvalidInput: not an integer between MIN_PRIORITY and MAX_PRIORITY.
    """
    if priority is None:
        return None
    if not isinstance(priority, int) or isinstance(priority, bool) \
            or not MIN_PRIORITY <= priority <= MAX_PRIORITY:
        raise InvalidInput(f"priority must be an integer between {MIN_PRIORITY} and "
                           f"{MAX_PRIORITY} (higher is more important).", field="priority")
    return priority


def _derive_id(prefix: str, *parts: object) -> str:
    return prefix + sha256_hex("\x1f".join(map(str, parts)).encode())[:24]


def rule_judgement(state: KeyState, on_change: OnChange) -> Judgement:
    """The deterministic judge used when no model is configured: the key's ``on_change``."""
    return Judgement(Verdict.CONFLICT if on_change is OnChange.CONFLICT else Verdict.SUPERSEDE)


def decide(
    state: KeyState,
    candidate: Candidate,
    *,
    memory_id: str,
    claim_secret: bytes | None,
    authority: Authority,
    now: datetime,
    content_hash: str,
    judgement: Judgement | None = None,
    expected_revision: int | None = None,
    replaces: str | None = None,
    on_change: OnChange | None = None,
    cardinality: Cardinality | None = None,
    run_id: str | None = None,
    provenance: tuple[dict[str, str], ...] = (),
    new_text: bool = False,
    occurrences: bool = False,
    priority: int | None = None,
) -> Decision:
    """Decides what a candidate does to its key.

    Args:
        state: the key's state at the ledger head.
        candidate: the proposed claim occurrence.
        memory_id: the memory (part of the claim id).
        claim_secret: the memory's claim-id secret (None: a legacy memory's plain sha256
            claim ids); see ``canonical.claim_id``.
        authority: who writes (see ``Authority``).
        now: the decision time (provenance ``seen_at``); not used as world time.
        content_hash: salted digest of the candidate's payload (computed by the service).
        judgement: the judge's verdict for AUTOMATIC writes; None uses the rule judge.
        expected_revision: required for CORRECTION; compared with ``state.revision``.
        replaces: for a CORRECTION of a multi key, the item it corrects.
        on_change: the key's policy from config (overrides the declared one).
        cardinality: the cardinality from config for a key never declared before.
        run_id: the derive run forming the candidate (recorded on ``item.added``).
        provenance: where it was said, ``({host_kind, host_id, event_id}, ...)`` (ids only;
            on ``item.added``, and the first on a "seen again" ``provenance.added``).
        new_text: the candidate restates a current claim with a new text (another quote); an
            OWNER restatement then revises the item's text (``item.revised``, same claim, new
            payload) besides "seen again".
        occurrences: the memory records each later statement of a current claim by an
            automatic path as a new item (an occurrence, its own ``valid_at``, linked to the
            claim by ``claim_id`` and ``occurrence_of``) instead of provenance only.
        priority: the statement's priority (None: not given); a new item carries it, and a
            restatement of a current claim with another priority revises the item
            (``item.revised``; never an occurrence: the priority belongs to the claim).

    Returns:
        The Decision; ``events`` is empty for outcomes that write nothing.

    Raises:
        RevisionMismatch: CORRECTION with a stale ``expected_revision``.
        InvalidInput: CORRECTION of a multi key without ``replaces``.
        NotFound: ``replaces`` names no live item of the key.
    """
    scope, key = str(candidate.scope), candidate.key
    cid = make_claim_id(memory_id, scope, key, candidate.value, secret=claim_secret)
    if authority is Authority.CORRECTION:
        if expected_revision is None:
            raise InvalidInput(
                f"A correction of {key!r} needs expected_revision; inspect the key and pass "
                "its current revision.", field="expected_revision")
        if expected_revision != state.revision:
            raise RevisionMismatch(
                f"Correction of {key!r} expected revision {expected_revision}, but the current "
                f"revision is {state.revision}. Inspect the key, review it, and retry with "
                f"revision {state.revision}.",
                key=key, expected_revision=expected_revision, current_revision=state.revision,
            )

    revision = state.revision + 1
    events: list[Event] = []
    card = state.cardinality
    if card is None:
        card = cardinality or default_cardinality(key)
        events.append(Event(EventType.KEY_DECLARED, {
            "key": key, "cardinality": card.value,
            "on_change": (on_change or OnChange.SUPERSEDE).value}))
    policy = on_change or state.on_change

    def noop(outcome: Outcome, item_id: str | None = None) -> Decision:
        return Decision(outcome, (), item_id, state.revision, False, cid)

    # Forgotten claims are never learned again by automatic paths or plain asserts.
    if cid in state.tombstones and authority in (Authority.AUTOMATIC, Authority.ASSERT):
        return noop(Outcome.FORGOTTEN)

    # Same claim already live, or history covering the same world time: seen again.
    seen = _seen_again(state, cid, candidate.valid_at)
    reprioritised = (seen is not None and priority is not None
                     and seen.status is ItemStatus.CURRENT and seen.priority != priority
                     and not _settles(state, seen, candidate, authority, replaces))
    if reprioritised:
        text = new_text and authority is Authority.OWNER
        return _revised(state, candidate, seen, cid, now, content_hash if text else None,
                        provenance, priority=priority)
    occurrence_of = None
    if seen is not None and occurrences and _is_occurrence(state, seen, candidate, authority):
        occurrence_of, seen = seen.item_id, None
    if seen is not None and not _settles(state, seen, candidate, authority, replaces):
        if new_text and authority is Authority.OWNER and seen.status is ItemStatus.CURRENT:
            return _revised(state, candidate, seen, cid, now, content_hash, provenance)
        return _seen(state, candidate, seen, cid, now, provenance)

    item_id = _derive_id("itm_", memory_id, scope, key, revision, cid)
    added = Event(EventType.ITEM_ADDED, {
        "item_id": item_id, "claim_id": cid, "scope": scope, "key": key,
        "kind": candidate.kind.value, "cardinality": card.value, "revision": revision,
        "valid_at": to_iso(candidate.valid_at),
        "valid_until": to_iso(candidate.valid_until) if candidate.valid_until else None,
        "payload_id": _derive_id("pl_", item_id, revision), "content_hash": content_hash,
        "source_id": candidate.source.id, "source_role": candidate.source.role,
        "authority": authority.value,
        **({"run_id": run_id} if run_id else {}),
        **({"provenance": [dict(p) for p in provenance]} if provenance else {}),
        **({"occurrence_of": occurrence_of} if occurrence_of else {}),
        **({"priority": priority} if priority is not None else {}),
    })
    if occurrence_of is not None:  # the claim stays current; this statement is its own item
        return Decision(Outcome.DUPLICATE, (*events, added), item_id, revision, True, cid)

    def made(outcome: Outcome, more: list[Event], group: str | None = None,
             valid_at: datetime | None = None) -> Decision:
        first = added
        if valid_at is not None:
            first = Event(EventType.ITEM_ADDED, {**added.data, "valid_at": to_iso(valid_at)})
        return Decision(outcome, (*events, first, *more), item_id, revision, True, cid, group)

    live = state.live()
    if authority is Authority.CORRECTION:
        targets = live if card is Cardinality.SINGLE else _targets(state, replaces, key)
        if not targets:
            return made(Outcome.CORRECTED, [])
        start = min(t.valid_at for t in targets)
        return made(Outcome.CORRECTED, [
            _superseded(t, scope, key, revision, by=item_id, invalid_at=t.valid_at,
                        correction=True) for t in targets
        ], valid_at=start)

    if card is Cardinality.MULTI:
        return _multi(state, judgement, made, scope, key, revision, item_id, candidate, cid, now,
                      provenance)

    if not live:
        return made(Outcome.CREATED, [])
    newest = _newest(live)
    if candidate.valid_at < newest:
        # Older than the newest observation of the live value(s): history, never current.
        owner = max(live, key=_confirmed)
        return made(Outcome.STALE, [Event(EventType.ITEM_SUPERSEDED, {
            "item_id": item_id, "scope": scope, "key": key, "revision": revision,
            "by": owner.item_id, "invalid_at": to_iso(newest)})])

    if authority is Authority.OWNER:
        verdict = Verdict.CONFLICT if policy is OnChange.CONFLICT else Verdict.SUPERSEDE
    elif authority is Authority.ASSERT:
        verdict = Verdict.CONFLICT
    else:
        verdict = (judgement or rule_judgement(state, policy)).verdict

    group = live[0].conflict_group
    if verdict is Verdict.NOOP:
        return _seen(state, candidate, live[0], cid, now, provenance)
    if verdict is Verdict.CONFLICT:
        group = group or _derive_id("grp_", memory_id, scope, key, revision)
        ids = [t.item_id for t in live] + [item_id]
        return made(Outcome.CONFLICT, [Event(EventType.ITEM_CONFLICTED, {
            "scope": scope, "key": key, "revision": revision, "item_ids": ids,
            "group_id": group})], group=group)
    if verdict is Verdict.MERGE:
        return made(Outcome.MERGED, [Event(EventType.ITEM_MERGED, {
            "scope": scope, "key": key, "revision": revision,
            "item_ids": [t.item_id for t in live], "into": item_id})])
    # SUPERSEDE (and ADD on a single key means replace)
    return made(Outcome.SUPERSEDED, [
        _superseded(t, scope, key, revision, by=item_id,
                    invalid_at=candidate.valid_at, resolved_conflict=t.conflict_group)
        for t in live
    ])


def _confirmed(item: ItemState) -> datetime:
    """World time of the newest statement of the item (its valid_at, or a later restatement)."""
    return item.confirmed_at or item.valid_at


def _newest(live: list[ItemState]) -> datetime:
    return max(_confirmed(t) for t in live)


def _settles(state: KeyState, seen: ItemState, candidate: Candidate, authority: Authority,
             replaces: str | None) -> bool:
    """Whether a restated claim is written anew instead of being "seen again".

    A correction naming ``replaces`` always is; a correction restating one member of an open
    conflict settles it; so does the owner, unless the statement is older than the newest
    live observation (then it could only be history, and restating it again must stay a NOOP).
    """
    if authority is Authority.CORRECTION and replaces is not None:
        return True
    if authority not in (Authority.OWNER, Authority.CORRECTION):
        return False
    if seen.status is not ItemStatus.CONFLICT:
        return False
    return authority is Authority.CORRECTION or candidate.valid_at >= _newest(state.live())


def _seen_again(state: KeyState, cid: str, valid_at: datetime) -> ItemState | None:
    for item in state.items:
        if item.claim_id != cid:
            continue
        if item.status in (ItemStatus.CURRENT, ItemStatus.CONFLICT):
            return item
        if item.status is ItemStatus.SUPERSEDED and not _never_true(item):
            if item.valid_at <= valid_at and (item.invalid_at is None or valid_at < item.invalid_at):
                return item
    return None


def _never_true(item: ItemState) -> bool:
    return item.invalid_at is not None and item.invalid_at <= item.valid_at


def _seen(state: KeyState, candidate: Candidate, item: ItemState, cid: str,
          now: datetime, provenance: tuple[dict[str, str], ...] = ()) -> Decision:
    host = {k: provenance[0][k] for k in ("host_kind", "host_id", "event_id")
            if provenance and provenance[0].get(k) is not None}
    ev = Event(EventType.PROVENANCE_ADDED, {
        "item_id": item.item_id, "scope": str(state.scope), "key": state.key,
        "source_id": candidate.source.id, "source_role": candidate.source.role,
        "seen_at": to_iso(now), "valid_at": to_iso(candidate.valid_at), **host})
    return Decision(Outcome.DUPLICATE, (ev,), item.item_id, state.revision, False, cid)


def _is_occurrence(state: KeyState, seen: ItemState, candidate: Candidate,
                   authority: Authority) -> bool:
    """A later automatic statement of a current claim (after its newest statement)."""
    if authority is not Authority.AUTOMATIC or seen.status is not ItemStatus.CURRENT:
        return False
    same = [i for i in state.live() if i.claim_id == seen.claim_id]
    return candidate.valid_at > max(_confirmed(i) for i in same)


def _revised(state: KeyState, candidate: Candidate, item: ItemState, cid: str, now: datetime,
             content_hash: str | None, provenance: tuple[dict[str, str], ...], *,
             priority: int | None = None) -> Decision:
    """Same claim in new words (``content_hash``: a new payload for the item) and/or with a
    new ``priority``; plus the statement's provenance."""
    revision = state.revision + 1
    data: dict[str, object] = {"item_id": item.item_id, "scope": str(state.scope),
                               "key": state.key, "revision": revision}
    if content_hash is not None:
        data.update(payload_id=_derive_id("pl_", item.item_id, revision),
                    content_hash=content_hash)
    if priority is not None:
        data["priority"] = priority
    seen = _seen(state, candidate, item, cid, now, provenance)
    return Decision(Outcome.DUPLICATE, (Event(EventType.ITEM_REVISED, data), *seen.events),
                    item.item_id, revision, False, cid, revised=content_hash is not None)


def _superseded(t: ItemState, scope: str, key: str, revision: int, *, by: str,
                invalid_at: datetime, resolved_conflict: str | None = None,
                correction: bool = False) -> Event:
    data = {"item_id": t.item_id, "scope": scope, "key": key, "revision": revision, "by": by,
            "invalid_at": to_iso(invalid_at)}
    if resolved_conflict:
        data["resolved_conflict"] = resolved_conflict
    if correction:
        data["correction"] = True
    return Event(EventType.ITEM_SUPERSEDED, data)


def _targets(state: KeyState, replaces: str | None, key: str) -> list[ItemState]:
    if replaces is None:
        raise InvalidInput(
            f"{key!r} is a multi-valued key; name the item to correct with replaces=<item_id>.",
            field="replaces")
    found = [i for i in state.live() if i.item_id == replaces]
    if not found:
        raise NotFound(f"No live item {replaces!r} under key {key!r} to correct.",
                       item_id=replaces)
    return found


def _multi(state: KeyState, judgement: Judgement | None, made, scope: str, key: str,
           revision: int, item_id: str, candidate: Candidate, cid: str,
           now: datetime, provenance: tuple[dict[str, str], ...] = ()) -> Decision:
    if judgement is None or judgement.verdict is Verdict.ADD:
        return made(Outcome.CREATED, [])
    target = next((i for i in state.live() if i.item_id == judgement.target), None)
    if target is None:
        return made(Outcome.CREATED, [])
    if judgement.verdict is Verdict.CONFLICT:  # the target's group, or a new one of two
        group = target.conflict_group or _derive_id("grp_", state.scope, key, revision, cid)
        members = [i.item_id for i in state.live() if group and i.conflict_group == group]
        ids = (members or [target.item_id]) + [item_id]
        return made(Outcome.CONFLICT, [Event(EventType.ITEM_CONFLICTED, {
            "scope": scope, "key": key, "revision": revision, "item_ids": ids,
            "group_id": group})], group=group)
    if judgement.verdict is Verdict.NOOP:
        return _seen(state, candidate, target, cid, now, provenance)
    if judgement.verdict is Verdict.MERGE:
        return made(Outcome.MERGED, [Event(EventType.ITEM_MERGED, {
            "scope": scope, "key": key, "revision": revision,
            "item_ids": [target.item_id], "into": item_id})])
    return made(Outcome.SUPERSEDED, [_superseded(
        target, scope, key, revision, by=item_id, invalid_at=candidate.valid_at)])
