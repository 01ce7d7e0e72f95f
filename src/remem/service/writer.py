"""The write path: state at head -> decide -> commit at the expected head (bounded retry).

Every writer (remember, correct, apply, derive, owner operations) goes through ``Writer``.
Events, payloads and read-model rows of one decision commit in one transaction; on
``HeadMoved`` the writer reads the newer state and decides again, up to ``max_attempts``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from remem.domain.canonical import claim_id, digest, salted_digest
from remem.domain.decision import Decision, Judgement, decide
from remem.domain.events import Event, EventType
from remem.domain.fold import Projection, key_state
from remem.domain.keys import default_cardinality
from remem.domain.ledger import chain
from remem.domain.model import (Authority, Candidate, Cardinality, ItemStatus, KeyState,
                                OnChange, Outcome)
from remem.domain.operations import Operation
from remem.domain.timefmt import offset_min, to_iso
from remem.errors import HeadMoved, IdempotencyConflict
from remem.service.intake import scoped_key
from remem.service.results import WriteResult


@dataclass(frozen=True)
class WriteRequest:
    """A candidate plus everything the decision needs besides state."""

    candidate: Candidate
    authority: Authority
    actor: str
    judgement: Judgement | None = None
    expected_revision: int | None = None
    replaces: str | None = None
    idempotency_key: str | None = None
    intent: str = "remember"
    #: World time the caller stated (valid_at or source.occurred_at); None when it defaulted
    #: to "now", which is not part of the request's meaning (a retry must replay).
    stated_valid_at: datetime | None = None
    #: Item metadata (``domain.filters.parse_metadata``); None: not given, so an item that
    #: supersedes or corrects another inherits that one's metadata.
    metadata: dict[str, Any] | None = None
    #: The ledger head the judgement was formed at (derive): the commit happens only at that
    #: head; a moved head refuses the judged result instead of re-applying a stale verdict.
    judged_at_head: int | None = None
    #: The derive run forming the candidate, and where it was said (``{host_kind, host_id,
    #: event_id}``, ids only): recorded on ``item.added`` / ``provenance.added``.
    run_id: str | None = None
    provenance: tuple[dict[str, str], ...] = ()
    #: Fact attributes kept in the payload row (``domain.fact.FactAttrs.to_json``): type,
    #: blob content_ref, size, content_hash. None: a plain item.
    fact: dict[str, Any] | None = None
    #: Called in the write's transaction with (uow, result) once the decision committed (a
    #: cached fact's source row beside its item: ``service.cached``); not part of the meaning.
    on_written: Callable[[Any, WriteResult], None] | None = field(default=None, compare=False)
    #: instantKV per-slot bounds (``service.slots.check_room``): checked by the ``at_head``
    #: hooks inside the write's transaction, at the head the decision commits against.
    slot_bounds: bool = False
    #: The statement's priority (``decision.check_priority``; None: not given).
    priority: int | None = None
    #: More of the request's meaning for the idempotency digest (a cached fact's Source
    #: block, as given); None: nothing more.
    extra_meaning: Any = None


class Writer:
    """Commits decisions for one memory.

    Args:
        store: a Store (SQLite or PostgreSQL).
        memory_id: the memory written to.
        clock: returns aware UTC datetimes.
        policy: ``(key) -> (cardinality from config or None, on_change)``.
        on_commit: hooks called inside the transaction with (uow, projection, new payloads);
            the recall issue uses it to index text and vectors in the same transaction.
    """

    max_attempts = 5

    def __init__(self, store: Any, memory_id: str, clock: Any,
                 policy: Callable[[str], tuple[Cardinality | None, OnChange]]) -> None:
        self.store = store
        self.memory_id = memory_id
        self.clock = clock
        self.policy = policy
        self.on_commit: list[Callable[..., None]] = []
        #: Hooks called with the request before the transaction opens (e.g. to compute the
        #: embedding of the new item's text, so the write lock is not held while embedding).
        self.before_write: list[Callable[[WriteRequest], None]] = []
        #: Hooks called with (unit of work, request) inside the write's transaction once the
        #: head is read, before the decision (e.g. per-slot bounds): what they read is the state the
        #: decision commits against, and a moved head runs them again. They raise to refuse.
        self.at_head: list[Callable[[Any, WriteRequest], None]] = []
        self._claim_secret: tuple[bytes | None] | None = None
        #: Record later automatic statements of a current claim as occurrences (config
        #: ``occurrences``, on by default: ``service.config.occurrences_enabled``).
        self.occurrences = True

    @property
    def claim_secret(self) -> bytes | None:
        """The memory's claim-id secret, read once (None: a legacy memory, plain sha256)."""
        if self._claim_secret is None:
            self._claim_secret = (self.store.claim_secret(self.memory_id),)
        return self._claim_secret[0]

    def claim_id(self, scope: str, key: str, value: Any) -> str:
        """The claim id of a value under this memory's scheme (keyed, or legacy)."""
        return claim_id(self.memory_id, scope, key, value, secret=self.claim_secret)

    def write(self, req: WriteRequest) -> WriteResult:
        """Decides and commits one request in its own transaction (bounded HeadMoved retry)."""
        return self.write_many([req])[0]

    def write_many(self, reqs: list[WriteRequest]) -> list[WriteResult]:
        """Decides and commits requests in order, all in ONE transaction (batched intake).

        Each request still goes through the one decision against the state its predecessors
        left; a failure rolls back the whole batch (nothing half-applied). This is the bulk
        load path: a batch's ledger, label and payload rows are inserted together at the end
        of the transaction (``defer_inserts``/``flush``: PostgreSQL ``COPY``s the ledger), and
        the events, hashes and rows are byte-identical to writing the requests one at a time
        (``tests/contract/test_bulk_write_identity.py``).
        """
        for req in reqs:
            for hook in self.before_write:
                hook(req)
        _ = self.claim_secret  # read (once) before the transaction holds the write lock
        for attempt in range(self.max_attempts):
            try:
                with self.store.unit_of_work(self.memory_id) as uow:
                    if len(reqs) > 1:  # a batch: ledger and payload rows go in at once
                        uow.defer_inserts()
                        cids = self._prefetch(uow, reqs)
                    else:
                        cids = {}
                    results = [self._write_in(uow, req, cids.get(id(req))) for req in reqs]
                    uow.flush()
                    return results
            except HeadMoved:
                if attempt == self.max_attempts - 1 or any(
                        r.judged_at_head is not None for r in reqs):
                    raise  # a judged result is never re-applied on a newer state
        raise AssertionError("unreachable")

    def write_judged(self, build: Callable[[int], WriteRequest | None]) -> WriteResult | None:
        """Writes a request whose judgement was formed at the ledger head.

        ``build(head)`` reads the state at ``head``, asks the judge and returns the request
        (or None: nothing to write). The commit happens only at that head; when another
        writer moved it meanwhile, the judged result is refused and ``build`` runs again on
        the newer state (bounded by ``max_attempts``).

        Raises:
            HeadMoved: the head kept moving for every attempt (retryable).
        """
        for attempt in range(self.max_attempts):
            head = self.store.head_seq(self.memory_id)
            req = build(head)
            if req is None:
                return None
            try:
                return self.write(replace(req, judged_at_head=head))
            except HeadMoved:
                if attempt == self.max_attempts - 1:
                    raise
        raise AssertionError("unreachable")

    def _write_in(self, uow: Any, req: WriteRequest, cid: str | None = None) -> WriteResult:
        c = req.candidate
        scope, key = str(c.scope), c.key
        idem_digest = digest([req.intent, scope, key, c.value, c.kind.value,
                              to_iso(req.stated_valid_at) if req.stated_valid_at else None,
                              to_iso(c.valid_until) if c.valid_until else None,
                              c.source.id, c.source.text, c.source.role,
                              req.expected_revision, req.replaces]
                             + ([req.metadata] if req.metadata is not None else [])
                             + ([{k: v for k, v in req.fact.items() if k != "content_ref"}]
                                if req.fact is not None else [])  # a blob's name is no meaning
                             + ([{"priority": req.priority}] if req.priority is not None
                                else [])
                             + ([req.extra_meaning] if req.extra_meaning is not None else []))
        idem_key = scoped_key(scope, req.idempotency_key)  # per scope: two scopes, two requests
        if idem_key:
            found = uow.idempotency_get(idem_key)
            if found is not None:
                return _replay(found, idem_digest, req.idempotency_key, scope, key)
        head, _ = uow.head()
        if req.judged_at_head is not None and head != req.judged_at_head:
            raise HeadMoved(
                f"The ledger head moved from {req.judged_at_head} to {head} after the judge "
                "answered; its verdict is refused and the write is decided again.",
                judged_at_head=req.judged_at_head, head=head)
        for hook in self.at_head:
            hook(uow, req)
        cid = cid or self.claim_id(scope, key, c.value)  # a batch's: from ``_prefetch``
        proj = self._projection(uow, req, scope, key, cid)
        state = key_state(proj, scope, key)
        now = self.clock.now()
        salt = os.urandom(16)
        payload: dict[str, Any] = {"value": c.value, "quote": c.source.text}
        if req.metadata:
            payload["metadata"] = req.metadata
        card, on_change = self.policy(key)
        authority = req.authority
        if (req.intent == "import" and cid in state.tombstones
                and not any(i.claim_id == cid for i in state.live())):
            # An import (an old backup, a file made before a forget) never brings a forgotten
            # claim back: decided as the paths that never re-learn one (outcome forgotten).
            authority = Authority.ASSERT
        decision = decide(
            state, c, memory_id=self.memory_id, claim_secret=self.claim_secret,
            authority=authority, now=now,
            content_hash=salted_digest(salt, payload), judgement=req.judgement,
            expected_revision=req.expected_revision, replaces=req.replaces,
            on_change=on_change, cardinality=card, run_id=req.run_id,
            provenance=req.provenance, new_text=self._new_text(uow, proj, state, req, cid),
            occurrences=self.occurrences, priority=req.priority)
        result = self._commit(uow, head, proj, decision, req, scope, key, now, salt, payload)
        if req.on_written is not None:
            getattr(uow, "settle", lambda: None)()  # held rows first: it may read them
            req.on_written(uow, result)
        if idem_key and decision.outcome is not Outcome.FORGOTTEN:
            uow.idempotency_put(idem_key, idem_digest, result.to_dict(),
                                result.item_id, to_iso(now))
        return result

    def _prefetch(self, uow: Any, reqs: list[WriteRequest]) -> dict[int, str]:
        """Lets a store that can (PostgreSQL: ``prefetch_claims``) read the claim projections
        ``_projection`` starts from for a whole batch at once instead of one per request;
        returns the claim ids it computed (``{id(req): claim_id}``, reused by ``_write_in``)."""
        prefetch = getattr(uow, "prefetch_claims", None)
        if prefetch is None:
            return {}
        cids = {id(r): self.claim_id(str(r.candidate.scope), r.candidate.key, r.candidate.value)
                for r in reqs if r.judgement is None and r.replaces is None
                and r.authority is not Authority.CORRECTION}
        prefetch(list(dict.fromkeys(
            (str(r.candidate.scope), r.candidate.key, cids[id(r)])
            for r in reqs if id(r) in cids)))
        return cids

    def _projection(self, uow: Any, req: WriteRequest, scope: str, key: str,
                    cid: str) -> Projection:
        """The read model the decision needs. On a multi key, a statement without a judgement
        and not a correction is added unless its own claim is live or seen again (``decide``,
        ``_multi``): only that claim's items matter, so a key with thousands of values is not
        read whole for each new one. A claim item in conflict (settling it compares every
        live item) and every other write read the whole key."""
        if (req.judgement is not None or req.authority is Authority.CORRECTION
                or req.replaces is not None):
            return uow.projection_for(scope, key)
        proj = uow.projection_for(scope, key, cid)
        declared = proj.cardinality.get(proj.refs(scope, key)[1])
        card = (Cardinality(declared[0]) if declared
                else self.policy(key)[0] or default_cardinality(key))
        if card is Cardinality.MULTI and all(
                r.status != ItemStatus.CONFLICT.value for r in proj.items.values()):
            return proj
        return uow.projection_for(scope, key)

    def _new_text(self, uow: Any, proj: Projection, state: KeyState,
                  req: WriteRequest, cid: str) -> bool:
        """Whether an owner restates a current claim of the key with a new text (a quote other
        than its stored payload's); a value differing only in case or spacing is not one.
        Reads through the write's own transaction (no second connection while it holds the
        memory's write lock)."""
        if req.authority is not Authority.OWNER:
            return False
        c = req.candidate
        item = next((i for i in state.live() if i.claim_id == cid), None)
        if item is None:
            return False
        rec = proj.items.get(item.item_id)
        stored = uow.key_payloads(str(c.scope), c.key).get(rec.payload_id) \
            if rec is not None else None
        if not stored:
            return False
        return c.source.text is not None and stored.get("quote") != c.source.text

    def _commit(self, uow: Any, head: int, proj: Projection, decision: Decision,
                req: WriteRequest, scope: str, key: str, now: datetime, salt: bytes,
                payload: dict[str, Any]) -> WriteResult:
        new_payloads = []
        if decision.events:
            stored = append_events(uow, decision.events, actor=req.actor, at=to_iso(now),
                                   expected_seq=head)
            proj.apply_all(stored)
            if decision.new_item or decision.revised:
                added = next(e for e in decision.events
                             if e.type in (EventType.ITEM_ADDED, EventType.ITEM_REVISED))
                metadata = payload.get("metadata")
                if req.metadata is None:  # a revision keeps the item's own metadata
                    metadata = (_inherited_metadata(uow, proj, decision.item_id)
                                if decision.new_item
                                else uow.payload_metadata(decision.item_id))
                uow.put_payload(added.data["payload_id"], decision.item_id, payload["value"],
                                payload["quote"], salt, metadata, fact=req.fact,
                                tz_offset_min=offset_min(req.candidate.valid_at))
                new_payloads.append((decision.item_id, added.data["payload_id"], payload))
            uow.save(proj)
            for hook in self.on_commit:
                hook(uow, proj, new_payloads)
        rec = proj.items.get(decision.item_id) if decision.item_id else None
        return WriteResult(
            outcome=decision.outcome.value, scope=scope, key=key, revision=decision.revision,
            item_id=decision.item_id, claim_id=decision.claim_id,
            status=rec.status if rec else None, conflict_group=(
                rec.conflict_group if rec else decision.conflict_group))

    def operate(self, scope: str, key: str, actor: str,
                build: Callable[[KeyState, Projection], Operation],
                after: Callable[[Any, Projection, Operation], None] | None = None) -> Operation:
        """Runs an owner operation (resolve, archive, restore, forget, holds) at the head."""
        for attempt in range(self.max_attempts):
            try:
                with self.store.unit_of_work(self.memory_id) as uow:
                    head, _ = uow.head()
                    proj = uow.projection_for(scope, key)
                    op = build(key_state(proj, scope, key), proj)
                    if op.events:
                        stored = append_events(uow, op.events, actor=actor,
                                               at=to_iso(self.clock.now()), expected_seq=head)
                        proj.apply_all(stored)
                        if after is not None:  # before save: erasure reads rows save removes
                            after(uow, proj, op)
                        uow.save(proj)
                        for hook in self.on_commit:
                            hook(uow, proj, [])
                    return op
            except HeadMoved:
                if attempt == self.max_attempts - 1:
                    raise
        raise AssertionError("unreachable")

    def append_raw(self, events: list[Event], actor: str) -> None:
        """Appends events that change no key (e.g. memory.configured)."""
        with self.store.unit_of_work(self.memory_id) as uow:
            head, _ = uow.head()
            append_events(uow, events, actor=actor, at=to_iso(self.clock.now()),
                          expected_seq=head)


def append_events(uow: Any, events: list[Event], *, actor: str, at: str,
                  expected_seq: int) -> list[dict[str, Any]]:
    """Chains ``events`` after the unit of work's head (``domain.ledger.chain``) and has the
    store insert them; returns the stored events (seq, prev_hash, hash).

    Raises:
        HeadMoved: the head is no longer ``expected_seq``, or another writer took the seq
            (retryable: decide again).
    """
    stored = chain(events, uow.head(), memory_id=uow.memory_id, actor=actor, at=at,
                   expected_seq=expected_seq, labels=getattr(uow, "label_keys", None))
    uow.insert_events(stored)
    return stored


def _inherited_metadata(uow: Any, proj: Projection, item_id: str) -> dict[str, Any] | None:
    """The metadata of the item the new item superseded or corrected (None: there is none,
    or it had none)."""
    for rec in proj.items.values():
        if rec.superseded_by == item_id and rec.item_id != item_id:
            return uow.payload_metadata(rec.item_id)
    return None


def _replay(found: tuple[str, dict[str, Any]], idem_digest: str, idem_key: str,
            scope: str, key: str) -> WriteResult:
    stored_digest, result = found
    if stored_digest == "forgotten":  # the original write was erased: never learned again
        # (its marker names neither scope nor key: they are the request's own)
        return WriteResult(**{"scope": scope, "key": key, **result, "replayed": True})
    if stored_digest != idem_digest:
        raise IdempotencyConflict(
            f"Idempotency key {idem_key!r} was already used for a different request. Retry "
            "the original request unchanged, or use a new key for a new statement.",
            idempotency_key=idem_key)
    return WriteResult(**{**result, "replayed": True})
