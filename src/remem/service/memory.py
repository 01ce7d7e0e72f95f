"""Memory: the public Python API of one memory (short methods that delegate).

Obtain one with ``remem.open(path).memory("m1")``. Every write goes through ``Writer`` and the
one decision; reads join read-model rows with payloads.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from remem.domain import operations as ops
from remem.domain.decision import Judgement
from remem.domain.limits import parse_kind, validate_candidate
from remem.domain.model import (
    Authority,
    Candidate,
    ItemStatus,
    Kind,
    Scope,
    Source,
    parse_key,
)

from remem.errors import InvalidInput, NotFound
from remem.service.config import key_policy
from remem.service.embedding import EmbeddingService
from remem.service.recall import RecallService
from remem.service.recall_results import (
    ContextResult,
    ProfileResult,
    RecallResult,
)
from remem.service.sources import SourceService
from remem.service.forget import ErasureReport, Forgetter
from remem.service.intake import Intake, Receipt
from remem.providers.registry import build_extractor, build_judge
from remem.service.results import Inspection, ItemView, Page, WriteResult
from remem.service.writer import WriteRequest, Writer

DEFAULT_ACTOR = "owner"


class Memory:
    """One memory in a store.

    Args:
        store: the storage adapter.
        memory_id: the memory's id.
        clock: injected clock (``SystemClock`` by default, set by ``RememStore``).
    """

    def __init__(self, store: Any, memory_id: str, clock: Any, *, owner: Any = None,
                 derive_mode: str = "inline") -> None:
        self.store = store
        self.id = memory_id
        self.clock = clock
        self.owner = owner  # the RememStore (job runner needs it)
        self.derive_mode = derive_mode
        self.config = store.memory_config(memory_id)
        self.writer = Writer(store, memory_id, clock, self._policy)
        self.intake = Intake(self)
        self.extractor = build_extractor(self.config.get("extraction"))
        self.judge = build_judge(self.config.get("judge"))
        self._embedding = EmbeddingService(self)  # indexes new items in the write transaction
        self._embedding.attach(self.writer)
        self._recall = RecallService(self, self._embedding)
        self._sources = SourceService(self, self._embedding)
        self.sources = self._sources

    def _policy(self, key: str):
        return key_policy(self.config, key)

    # --- writes --------------------------------------------------------------------------
    def _candidate(self, scope: str, key: str, value: Any, kind: str | Kind | None,
                   valid_at: datetime | None, source: Source | dict | None,
                   valid_until: datetime | None) -> Candidate:
        src = _source(source)
        key = parse_key(key)
        if kind is None:
            kind = self.config.get("keys", {}).get(key, {}).get("kind", "fact")
        at = valid_at or src.occurred_at or self.clock.now()
        cand = Candidate(scope=Scope.parse(scope), key=key, value=value,
                         kind=kind if isinstance(kind, Kind) else parse_kind(kind),
                         valid_at=at, source=src, valid_until=valid_until)
        validate_candidate(cand)
        return cand

    def remember(self, scope: str, key: str, value: Any, *, kind: str | None = None,
                 valid_at: datetime | None = None, source: Source | dict | None = None,
                 valid_until: datetime | None = None, idempotency_key: str | None = None,
                 actor: str = DEFAULT_ACTOR, authority: Authority = Authority.OWNER,
                 judgement: Judgement | None = None) -> WriteResult:
        """States a value of a key in a scope (explicit owner remember).

        Args:
            scope: ``user:alice``, ``agent:bot``, ...
            key: snake_case topic (``home_city``).
            value: JSON value (<= 1,024 bytes).
            kind: identity | rule | profile_slot | fact | preference | skill | lesson
                (default from config, else fact).
            valid_at: world time the value holds from (default: source.occurred_at, else now).
            source: ``Source`` or dict {id, text, role, occurred_at}.
            idempotency_key: same key + same request -> original result (replayed=True);
                derived from the source id when not given.

        Returns:
            WriteResult with outcome created | duplicate | superseded | conflict | stale |
            merged | forgotten.

        Raises:
            InvalidInput: bad scope/key/value/kind/source (nothing written).
            IdempotencyConflict: the key was used for a different request.
        """
        cand = self._candidate(scope, key, value, kind, valid_at, source, valid_until)
        return self.writer.write(WriteRequest(
            cand, authority, actor, judgement=judgement,
            stated_valid_at=valid_at or cand.source.occurred_at,
            idempotency_key=idempotency_key or _derived_key("remember", cand, self.config)))

    def remember_many(self, statements: list[dict[str, Any]], *,
                      actor: str = DEFAULT_ACTOR) -> list[WriteResult]:
        """Remembers several statements in one transaction (all validated first; all or
        nothing). Each dict takes ``remember``'s arguments: scope, key, value, kind,
        valid_at, source, valid_until, idempotency_key.

        Raises:
            InvalidInput: any statement is invalid (nothing written).
        """
        reqs = []
        for i, st in enumerate(statements):
            try:
                cand = self._candidate(st["scope"], st["key"], st.get("value"), st.get("kind"),
                                       st.get("valid_at"), st.get("source"),
                                       st.get("valid_until"))
            except KeyError as exc:
                raise InvalidInput(f"statement {i} lacks {exc.args[0]!r}.", index=i,
                                   field=exc.args[0]) from exc
            except InvalidInput as exc:
                exc.details["index"] = i
                raise
            reqs.append(WriteRequest(
                cand, Authority.OWNER, actor,
                stated_valid_at=st.get("valid_at") or cand.source.occurred_at,
                idempotency_key=st.get("idempotency_key") or _derived_key("remember", cand,
                                                                         self.config)))
        from remem.domain.textindex import item_text

        self._embedding.prime([item_text(r.candidate.key, r.candidate.value,
                                         r.candidate.source.text) for r in reqs])
        return self.writer.write_many(reqs)

    def correct(self, scope: str, key: str, value: Any, *, expected_revision: int,
                kind: str | None = None, source: Source | dict | None = None,
                replaces: str | None = None, idempotency_key: str | None = None,
                actor: str = DEFAULT_ACTOR) -> WriteResult:
        """Corrects a key: the old value was never true (KIP change_kind correction).

        Raises:
            RevisionMismatch: ``expected_revision`` is not the key's current revision.
        """
        if kind is None:
            cur = [i for i in self.store.key_items(self.id, scope, key) if i.status == "current"]
            kind = cur[0].kind if cur else None
        cand = self._candidate(scope, key, value, kind, None, source, None)
        return self.writer.write(WriteRequest(
            cand, Authority.CORRECTION, actor, expected_revision=expected_revision,
            replaces=replaces, intent="correct", stated_valid_at=cand.source.occurred_at,
            idempotency_key=idempotency_key or _derived_key("correct", cand, self.config)))

    def resolve_conflict(self, group_id: str, keep: str, *, actor: str = DEFAULT_ACTOR) -> dict:
        """Keeps one item of a conflict group; the others are superseded by it."""
        rec = self._item_record(keep)
        op = self.writer.operate(rec.scope, rec.key, actor,
                                 lambda st, p: ops.resolve_conflict(st, group_id, keep))
        return {"group_id": group_id, "kept": keep, "revision": op.revision}

    def archive(self, item_id: str, *, actor: str = DEFAULT_ACTOR) -> dict:
        """Archives an item (reversible): hidden from recall, profile and default listings."""
        rec = self._item_record(item_id)
        op = self.writer.operate(rec.scope, rec.key, actor, lambda st, p: ops.archive(st, item_id))
        return {"item_id": item_id, "status": "archived", "revision": op.revision}

    def restore(self, item_id: str, *, actor: str = DEFAULT_ACTOR) -> dict:
        """Restores an archived item to its prior status (or history if replaced meanwhile)."""
        rec = self._item_record(item_id)
        op = self.writer.operate(rec.scope, rec.key, actor,
                                 lambda st, p: ops.restore(st, item_id, p.items[item_id].prior_status))
        after = self.store.item(self.id, item_id)
        return {"item_id": item_id, "status": after.status if after else None,
                "revision": op.revision}

    # --- forget, holds, retention (service.forget) ----------------------------------------
    def forget(self, item_id: str | None = None, *, scope: str | None = None,
               key: str | None = None, value: Any = None,
               expected_revision: int | None = None, actor: str = DEFAULT_ACTOR,
               caller_scope: str | None = None,
               scopes: Sequence[str] | None = None) -> ErasureReport:
        """Forgets for real: erases every copy and returns an ErasureReport.

        Address by ``item_id``, or by ``scope`` + ``key`` (+ ``value`` for one value of a multi
        key) with ``expected_revision``. ``caller_scope`` applies ForgetMemory authority.
        ``scopes``: None covers the whole memory (sources of every scope containing the
        value are redacted); a list covers only those scopes (the report names them).
        See ``service.forget.Forgetter.forget`` for errors.
        """
        return Forgetter(self).forget(item_id, scope=scope, key=key, value=value,
                                      expected_revision=expected_revision, actor=actor,
                                      caller_scope=caller_scope, scopes=scopes)

    def set_legal_hold(self, item_id: str, hold: bool = True, *, actor: str = "admin") -> dict:
        """Sets (or releases, ``hold=False``) a legal hold: forget/retention are blocked."""
        return Forgetter(self).set_legal_hold(item_id, hold, actor=actor)

    def set_retention(self, item_id: str, *, keep_until: datetime | None = None,
                      keep_days: int | None = None, actor: str = DEFAULT_ACTOR) -> dict:
        """Sets an item's keep_until (or created_at + keep_days)."""
        return Forgetter(self).set_retention(item_id, keep_until=keep_until,
                                             keep_days=keep_days, actor=actor)

    def run_retention(self, now: datetime | None = None) -> dict[str, Any]:
        """Erases expired items (actor system:retention); returns what it erased/blocked."""
        return Forgetter(self).run_retention(now)

    # --- sources and recall (issue 4) ---------------------------------------------------
    def observe(self, scope: str, text: str, *, role: str = "user", actor: str | None = None,
                source_id: str | None = None, run_id: str | None = None,
                occurred_at: datetime | None = None, kind: str = "user-message",
                idempotency_key: str | None = None, derive: bool = True) -> Receipt:
        """Records an immutable source and returns its durable receipt (KIP observe).

        The source is searchable evidence at once (hash-chained per run); a derive job then
        extracts the user's own statements into claims (inline in embedded mode, else by
        ``remem worker``) and moves the receipt recorded -> processed -> available.
        Same idempotency key (default: the source identity) + same meaning -> the original
        receipt (``replayed``); different meaning -> ``IdempotencyConflict``.
        """
        return self.intake.observe(scope, text, role=role, actor=actor, source_id=source_id,
                                   run_id=run_id, occurred_at=occurred_at, kind=kind,
                                   idempotency_key=idempotency_key, derive=derive)

    def revise(self, scope: str, key: str, value: Any, *, change_kind: str = "unspecified",
               **kw: Any) -> dict[str, Any]:
        """KIP revise: ``correction`` (never true) or ``world_change`` (from ``changed_at``)."""
        from remem.service.revise import revise

        return revise(self, scope, key, value, change_kind=change_kind, **kw)

    def feedback(self, scope: str, text: str | None, **kw: Any) -> dict[str, Any]:
        """KIP feedback, stored as agent_statement or user_statement; never a grade."""
        from remem.service.revise import feedback

        return feedback(self, scope, text, **kw)

    def forget_ref(self, target_ref: str, *, mode: str = "semantic",
                   caller_scope: str | None = None) -> dict[str, Any]:
        """KIP forget of an item or source reference (``semantic`` | ``payload_only``)."""
        from remem.service.revise import forget_ref

        return forget_ref(self, target_ref, mode=mode, caller_scope=caller_scope)

    def forget_source(self, source_id: str, *,
                      scopes: Sequence[str] | None = None) -> dict[str, Any]:
        """Erases one source's text, salt, full-text row and vector; its chain entry stays.
        ``scopes`` (None: whole memory) limits which sources are visible."""
        return Forgetter(self).forget_source(source_id, scopes=scopes)

    def kip(self, request: dict[str, Any]) -> dict[str, Any]:
        """Serves one KIP 2.0 Memory Interface request (see ``service.kip``)."""
        from remem.service.kip import KipBinding

        return KipBinding(self).handle(request)

    def capture(self, scope: str, host_kind: str, host_id: str, turns: list[dict[str, Any]],
                *, expected_position: int | None = None) -> dict[str, Any]:
        """Captures a host conversation past its cursor (compare-and-set); see
        ``service.intake.capture``. Re-sending the same conversation duplicates nothing."""
        from remem.service.intake import capture

        return capture(self, scope, host_kind, host_id, turns,
                       expected_position=expected_position)

    def receipt(self, receipt_id: str) -> Receipt:
        """Current progress of a receipt (NotFoundOrNotVisible outside this memory)."""
        return self.intake.get(receipt_id)

    def run_jobs(self, max_jobs: int | None = None) -> list[dict[str, Any]]:
        """Runs this memory's due jobs in-process (derive, consolidate); returns outcomes."""
        from remem.service.jobs.runner import Worker

        return Worker(self.owner).run_until_idle(self.id, max_jobs=max_jobs)

    def runs(self, limit: int = 50) -> list[dict[str, Any]]:
        """Recent job runs with status and failure reason (``remem runs``)."""
        return self.store.list_runs(self.id, limit)

    def consolidate_now(self) -> str:
        """Brings the memory's consolidation forward; returns the job id."""
        from remem.service.jobs.consolidate import schedule_consolidation

        return schedule_consolidation(self, now_=True)

    def recall(self, scopes: str | list[str], query: str, *, budget_tokens: int,
               tokenizer: str = "o200k_base", valid_at: datetime | None = None,
               kinds: list[str] | None = None, include_history: bool = False,
               limit: int = 30, after: list[str] | None = None,
               deadline_ms: int = 0) -> RecallResult:
        """Hybrid recall (full text + vectors + key, fused) rendered within ``budget_tokens``.

        Returns items (constraints first), sources labelled ``source``, ``basis_seq``,
        ``truncated``, ``coverage`` and ``text``; ``result.to_json()`` counts at most
        ``budget_tokens`` tokens under ``tokenizer``. ``valid_at`` recalls what held then.

        Raises:
            InvalidInput, UnsupportedCapability (tokenizer), ResultLimitExceeded (required
            constraints do not fit), EmbeddingMismatch, NotFoundOrNotVisible (an ``after``
            receipt of another memory).

        ``after`` names receipts that must be available first (KIP read barrier): recall waits
        up to ``deadline_ms``; if they are not, the result has ``status`` pending (or partial
        for a failed receipt), ``action_eligible`` False and the unresolved receipts.
        """
        return self._recall.recall(scopes, query, budget_tokens=budget_tokens,
                                   tokenizer=tokenizer, valid_at=valid_at, kinds=kinds,
                                   include_history=include_history, limit=limit, after=after,
                                   deadline_ms=deadline_ms)

    def context(self, scopes: str | list[str], query: str, *, max_bytes: int = 8192,
                kinds: list[str] | None = None, valid_at: datetime | None = None
                ) -> ContextResult:
        """Relevant items within ``max_bytes`` UTF-8 bytes (instantKV: items + truncated)."""
        return self._recall.context(scopes, query, max_bytes=max_bytes, kinds=kinds,
                                    valid_at=valid_at)

    def profile(self, scopes: str | list[str], *, budget_tokens: int | None = None,
                max_bytes: int | None = None, tokenizer: str = "o200k_base",
                activation_id: str | None = None) -> ProfileResult:
        """The pinned profile (identity, rules, profile slots, preferences), deterministic;
        byte-identical for the same ``activation_id`` until a new activation."""
        return self._recall.profile(scopes, budget_tokens=budget_tokens, max_bytes=max_bytes,
                                    tokenizer=tokenizer, activation_id=activation_id)

    def reembed(self, *, batch_size: int = 64, progress=None) -> dict[str, Any]:
        """Recomputes every vector with the configured embedder and switches atomically."""
        return self._embedding.reembed(batch_size=batch_size, progress=progress)

    # --- reads ---------------------------------------------------------------------------
    def _item_record(self, item_id: str):
        rec = self.store.item(self.id, item_id)
        if rec is None:
            raise NotFound(f"No item {item_id!r} in memory {self.id!r}.", item_id=item_id)
        return rec

    def _views(self, recs: list) -> list[ItemView]:
        payloads = self.store.payloads(self.id, [r.payload_id for r in recs])
        return [ItemView.build(r, payloads.get(r.payload_id)) for r in recs]

    def get(self, item_id: str) -> ItemView:
        """One item with its value.

        Raises:
            NotFound: no such item (or it was forgotten).
        """
        return self._views([self._item_record(item_id)])[0]

    def inspect(self, scope: str, key: str) -> Inspection:
        """Current value, revision, state, history and open conflicts of one key."""
        Scope.parse(scope)
        parse_key(key)
        meta = self.store.key_meta(self.id, scope, key)
        views = self._views(self.store.key_items(self.id, scope, key))
        current = [v for v in views if v.status == ItemStatus.CURRENT]
        conflicts = [v for v in views if v.status == ItemStatus.CONFLICT]
        history = sorted((v for v in views if v.status in (ItemStatus.SUPERSEDED,
                                                          ItemStatus.ARCHIVED)),
                         key=lambda v: (v.revision, v.valid_at), reverse=True)
        if conflicts:
            state = "conflict"
        elif current:
            state = "current"
        elif meta["tombstones"] and not views:
            state = "forgotten"
        elif any(v.status == ItemStatus.ARCHIVED for v in views):
            state = "archived"
        elif views:
            state = "superseded"
        else:
            state = "empty"
        single = meta["cardinality"] != "multi"
        top = current[0] if current else None
        if state == "forgotten":
            history, conflicts = [], []
        return Inspection(
            scope=scope, key=key, state=state, revision=meta["revision"],
            cardinality=meta["cardinality"],
            value=(top.value if single else [v.value for v in current]) if top else None,
            current=current, history=history, conflicts=conflicts,
            kind=top.kind if top else None,
            source={"id": top.source_id, "text": top.quote, "role": top.source_role}
            if top else None, valid_until=top.valid_until if top else None)

    def items(self, *, scope: str | None = None, key: str | None = None,
              kind: str | None = None, status: str | list[str] | None = None,
              cursor: str | None = None, limit: int = 50) -> Page:
        """Lists items with filters and cursor pagination (never silently capped).

        Default statuses: current and conflict. ``status="all"`` lists every status.
        Returns a Page whose ``next_cursor`` is None only when nothing more matches.
        """
        if not 1 <= limit <= 1000:
            raise InvalidInput("limit must be between 1 and 1000.", field="limit")
        if scope is not None:
            Scope.parse(scope)
        statuses = _statuses(status)
        after = _decode_cursor(cursor)
        recs = self.store.items(self.id, scope=scope, key=key, kind=kind, statuses=statuses,
                                after=after, limit=limit + 1)
        more = len(recs) > limit
        recs = recs[:limit]
        nxt = _encode_cursor(recs[-1].item_id) if more and recs else None
        return Page(self._views(recs), nxt)

    def history(self, item_id: str) -> dict[str, Any]:
        """An item, its key's other versions, its provenance and the ledger events naming it."""
        rec = self._item_record(item_id)
        versions = self._views(self.store.key_items(self.id, rec.scope, rec.key))
        events = [e for e in self.store.events(self.id)
                  if e["data"].get("item_id") == item_id
                  or item_id in e["data"].get("item_ids", [])
                  or item_id in (e["data"].get("by"), e["data"].get("keep"),
                                 e["data"].get("into"))]
        return {"item": self.get(item_id).to_dict(),
                "versions": [v.to_dict() for v in versions],
                "provenance": self.store.provenance(self.id, item_id),
                "events": [{k: e[k] for k in ("seq", "type", "data", "actor", "at")}
                           for e in events]}

    def conflicts(self, scope: str | None = None) -> list[dict[str, Any]]:
        """Open conflict groups: [{group_id, scope, key, items: [ItemView]}]."""
        groups: dict[str, dict[str, Any]] = {}
        cursor = None
        while True:
            page = self.items(scope=scope, status="conflict", cursor=cursor, limit=1000)
            for v in page.items:
                g = groups.setdefault(v.conflict_group, {"group_id": v.conflict_group,
                                                         "scope": v.scope, "key": v.key,
                                                         "items": []})
                g["items"].append(v.to_dict())
            if page.next_cursor is None:
                return list(groups.values())
            cursor = page.next_cursor

    def status(self) -> dict[str, Any]:
        """Ledger head, item counts per status, owed erasure scrubs and the claim-id scheme
        (``keyed``: HMAC-SHA256 with the memory's secret; ``legacy``: plain sha256)."""
        return {"memory": self.id, "head_seq": self.store.head_seq(self.id),
                "items": self.store.status_counts(self.id),
                "pending_erasures": self.store.pending_erasures(self.id),
                "claim_ids": "legacy" if self.writer.claim_secret is None else "keyed"}


def _source(source: Source | dict | None) -> Source:
    if source is None:
        return Source()
    if isinstance(source, Source):
        return source
    if not isinstance(source, dict):
        raise InvalidInput("source must be an object {id, text, role, occurred_at}.",
                           field="source")
    unknown = set(source) - {"id", "text", "role", "occurred_at"}
    if unknown:
        raise InvalidInput(f"source has unknown fields {sorted(unknown)}.", field="source")
    occurred = source.get("occurred_at")
    if isinstance(occurred, str):
        from remem.domain.timefmt import from_iso

        occurred = from_iso(occurred, field="source.occurred_at")
    return Source(id=source.get("id"), text=source.get("text"),
                  role=source.get("role") or "owner", occurred_at=occurred)


def _derived_key(intent: str, cand: Candidate, config: dict) -> str | None:
    """Idempotency key from the source identity: one slot per (scope, key) for single keys,
    per (scope, key, value) for multi keys (one source may state several values)."""
    if not cand.source.id:
        return None
    card, _ = key_policy(config, cand.key)
    from remem.domain.keys import default_cardinality
    from remem.domain.canonical import normalize_value

    slot = [intent, str(cand.scope), cand.key, cand.source.id]
    if (card or default_cardinality(cand.key)).value == "multi":
        slot.append(json.dumps(normalize_value(cand.value), sort_keys=True))
    return "src:" + json.dumps(slot)


def _statuses(status: str | list[str] | None) -> list[str] | None:
    if status is None:
        return [ItemStatus.CURRENT.value, ItemStatus.CONFLICT.value]
    if status == "all":
        return None
    wanted = [status] if isinstance(status, str) else list(status)
    for s in wanted:
        if s not in {x.value for x in ItemStatus}:
            raise InvalidInput(f"status {s!r} is not one of "
                               + ", ".join(x.value for x in ItemStatus) + " or 'all'.",
                               field="status")
    return wanted


def _encode_cursor(item_id: str) -> str:
    return base64.urlsafe_b64encode(json.dumps({"after": item_id}).encode()).decode()


def _decode_cursor(cursor: str | None) -> str | None:
    if cursor is None:
        return None
    try:
        after = json.loads(base64.urlsafe_b64decode(cursor.encode()))["after"]
        if not isinstance(after, str):
            raise TypeError("after must be an item id")
        return after
    except (ValueError, KeyError, TypeError) as exc:
        raise InvalidInput("cursor is not one this API returned; start again without it.",
                           field="cursor") from exc
