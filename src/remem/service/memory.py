"""Memory: the public Python API of one memory, for one principal.

Obtain one with ``remem.open(path).memory("m1")`` (the owner: every scope) or
``store.memory("m1", principal=p)`` / ``mem.as_principal(p)`` for a token's principal. Every
method asks the memory's :class:`~remem.service.guard.Guard` first — the one access check — on
the scopes it parsed and on the scopes of the items, sources and receipts named by id; then it
delegates to the memory's services (``MemoryContext``), built once per memory and cached.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from remem.domain import operations as ops
from remem.domain.access import Principal, Role, narrows
from remem.domain.decision import Judgement, check_priority
from remem.domain.filters import parse_metadata
from remem.domain.limits import MAX_DEADLINE_MS, check_text, refuse_surrogates
from remem.domain.model import Authority, Source, parse_key
from remem.errors import InvalidInput, NotFound, PermissionDenied
from remem.service import reads
from remem.service.cached_source import parse_cached_source
from remem.service.candidates import candidate, derived_key
from remem.service.forget import ErasureReport, Forgetter
from remem.service.guard import Guard, hidden
from remem.service.memory_admin import AdminMethods
from remem.service.memory_facts import FactMethods
from remem.service.memory_cached import CachedMethods
from remem.service.memory_interop import InteropMethods
from remem.service.memory_intake import IntakeMethods
from remem.service.recall_results import ContextResult, ProfileResult, RecallResult
from remem.service.results import Inspection, ItemView, Page, WriteResult
from remem.service.writer import WriteRequest


class Memory(IntakeMethods, AdminMethods, InteropMethods, FactMethods, CachedMethods):
    """One memory in a store, seen by one principal.

    Args:
        ctx: the memory's cached ``MemoryContext``.
        principal: who calls (default: the owner, every scope).
    """

    def __init__(self, ctx: Any, principal: Principal | None = None) -> None:
        self.ctx = ctx
        self.principal = principal or Principal.owner()
        self.guard = Guard(self.principal, ctx)

    def as_principal(self, principal: Principal) -> Memory:
        """The same memory seen by another principal (shares the cached context).

        Raises:
            PermissionDenied: this memory is seen by a token's principal and ``principal``
                reaches further (another token, scope or memory, a higher role, the owner):
                a token's view can only be narrowed (``domain.access.narrows``).
        """
        if not narrows(self.principal, principal):
            raise PermissionDenied(
                f"This memory is seen by token {self.principal.token_id} (role "
                f"{self.principal.role}, subject {self.principal.subject}); it can act only as "
                "that token with the same or a lower role and, for a scoped subject, the same "
                "scope.", subject=self.principal.subject)
        return Memory(self.ctx, principal)

    # --- the context's parts (read-only) ---------------------------------------------------
    id = property(lambda self: self.ctx.id)
    store = property(lambda self: self.ctx.store)
    clock = property(lambda self: self.ctx.clock)
    config = property(lambda self: self.ctx.config)
    owner = property(lambda self: self.ctx.owner)
    derive_mode = property(lambda self: self.ctx.derive_mode)
    writer = property(lambda self: self.ctx.writer)
    intake = property(lambda self: self.ctx.intake)
    sources = property(lambda self: self.ctx.sources)
    extractor = property(lambda self: self.ctx.extractor)
    judge = property(lambda self: self.ctx.judge)

    def _candidate(self, scope: str, key: str, value: Any, kind: Any, valid_at: Any,
                   source: Any, valid_until: Any) -> Any:
        """A validated candidate; a scoped token's cited source id is in its namespace (it
        can never cite, and so never erase or probe, another scope's source)."""
        cand = candidate(self.ctx, scope, key, value, kind, valid_at, source, valid_until)
        sid = self.guard.scoped_name(str(cand.scope), cand.source.id)
        if sid != cand.source.id:
            cand = replace(cand, source=replace(cand.source, id=sid))
        return cand

    def _recorder(self) -> str | None:
        """Who the ledger records as recording a source: a token always as itself (the
        speaker named in ``actor`` is content, never the audit identity)."""
        return self.principal.actor if self.principal.token_id is not None else None

    def _actor(self, actor: str | None) -> str:
        """The ledger actor: always a token's own id; an in-process caller may name one.

        Raises:
            InvalidInput: a named actor that is not valid text (checked even for a token).
        """
        check_text(actor, "actor", 256)
        if self.principal.token_id is None and actor:
            return actor
        return self.principal.actor

    # --- writes --------------------------------------------------------------------------
    def remember(self, scope: str, key: str, value: Any, *, kind: str | None = None,
                 valid_at: datetime | None = None, source: Source | dict | None = None,
                 valid_until: datetime | None = None, idempotency_key: str | None = None,
                 actor: str | None = None, authority: Authority = Authority.OWNER,
                 judgement: Judgement | None = None,
                 metadata: dict[str, Any] | None = None,
                 cached_source: dict[str, Any] | None = None,
                 slot_bounds: bool = False, priority: int | None = None) -> WriteResult:
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
            metadata: a small JSON object kept with the item (``domain.filters``: <= 32
                keys, <= 2,048 bytes, scalar or list values); returned in item views and
                recall, filterable; a superseding item without metadata inherits it.
            cached_source: makes the item a Kind-B cached fact: the Log+Facts Source block
                ``{kind, uri, freshness: {ttlSeconds, lastVerifiedAt, etag, sourceVersion},
                refresh: {strategy, handler, priority}}`` (``service.cached``), stored beside
                the item; recall labels it stale past its TTL; ``refresh`` re-reads it.
            slot_bounds: enforce the instantKV per-slot bounds (``service.slots``) at the
                ledger head inside the write's transaction (SlotFull when full).
            priority: integer 0..100, higher is more important (None: not given); the same
                claim restated with another priority revises the item (``item.revised``).

        Returns:
            WriteResult with outcome created | duplicate | superseded | conflict | stale |
            merged | forgotten.

        Raises:
            InvalidInput: bad scope/key/value/kind/source (nothing written).
            PermissionDenied: the principal may not write the scope.
            IdempotencyConflict: the key was used for a different request.
        """
        scope = self.guard.write(scope)
        cand = self._candidate(scope, key, value, kind, valid_at, source, valid_until)
        cached = parse_cached_source(cached_source) if cached_source is not None else None
        result = self.ctx.writer.write(WriteRequest(
            cand, authority, self._actor(actor), judgement=judgement,
            metadata=parse_metadata(metadata), slot_bounds=slot_bounds,
            priority=check_priority(priority),
            stated_valid_at=valid_at or cand.source.occurred_at,
            idempotency_key=self.guard.scoped_name(scope, idempotency_key)
            or derived_key("remember", cand, self.config),
            on_written=self.ctx.cached.written_hook(cached) if cached else None,
            extra_meaning={"cached_source": cached.to_schema()} if cached else None))
        if cached is not None and cached.refresh.strategy == "background":
            from remem.service.jobs.refresh import arm_refresh

            arm_refresh(self)
        return result

    def remember_many(self, statements: list[dict[str, Any]], *,
                      actor: str | None = None) -> list[WriteResult]:
        """Remembers several statements in one transaction (all validated first; all or
        nothing). Each dict takes ``remember``'s arguments: scope, key, value, kind,
        valid_at, source, valid_until, idempotency_key, metadata, priority, cached_source.

        Raises:
            InvalidInput: any statement is invalid (nothing written).
            PermissionDenied: a statement names a scope the principal may not write.
        """
        reqs = []
        for i, st in enumerate(_statements(statements)):
            try:
                self.guard.write(st["scope"])
                cand = self._candidate(st["scope"], st["key"], st.get("value"),
                                       st.get("kind"), st.get("valid_at"), st.get("source"),
                                       st.get("valid_until"))
                metadata = parse_metadata(st.get("metadata"))
                priority = check_priority(st.get("priority"))
                cached = (parse_cached_source(st["cached_source"])
                          if st.get("cached_source") is not None else None)
            except KeyError as exc:
                raise InvalidInput(f"statement {i} lacks {exc.args[0]!r}.", index=i,
                                   field=exc.args[0]) from exc
            except InvalidInput as exc:
                exc.details["index"] = i
                raise
            reqs.append(WriteRequest(
                cand, Authority.OWNER, self._actor(actor), metadata=metadata,
                priority=priority,
                stated_valid_at=st.get("valid_at") or cand.source.occurred_at,
                idempotency_key=self.guard.scoped_name(str(cand.scope),
                                                       st.get("idempotency_key"))
                or derived_key("remember", cand, self.config),
                on_written=self.ctx.cached.written_hook(cached) if cached else None,
                extra_meaning={"cached_source": cached.to_schema()} if cached else None))
        from remem.domain.textindex import item_text

        self.ctx.embedding.prime([item_text(r.candidate.key, r.candidate.value,
                                            r.candidate.source.text) for r in reqs])
        results = self.ctx.writer.write_many(reqs)
        if any(r.on_written is not None for r in reqs):  # a background one may be due
            from remem.service.jobs.refresh import arm_refresh

            arm_refresh(self)
        return results

    def correct(self, scope: str, key: str, value: Any, *, expected_revision: int,
                kind: str | None = None, source: Source | dict | None = None,
                replaces: str | None = None, idempotency_key: str | None = None,
                actor: str | None = None,
                metadata: dict[str, Any] | None = None,
                slot_bounds: bool = False, priority: int | None = None) -> WriteResult:
        """Corrects a key: the old value was never true (KIP change_kind correction).
        Without ``metadata`` the correction keeps the corrected item's; ``slot_bounds`` and
        ``priority`` as in ``remember``.

        Raises:
            RevisionMismatch: ``expected_revision`` is not the key's current revision.
            PermissionDenied: the principal may not write the scope.
        """
        scope = self.guard.write(scope)
        if kind is None:
            cur = [i for i in self.store.key_items(self.id, scope, parse_key(key))
                   if i.status == "current"]
            kind = cur[0].kind if cur else None
        cand = self._candidate(scope, key, value, kind, None, source, None)
        return self.ctx.writer.write(WriteRequest(
            cand, Authority.CORRECTION, self._actor(actor), metadata=parse_metadata(metadata),
            expected_revision=expected_revision, replaces=replaces, intent="correct",
            slot_bounds=slot_bounds, priority=check_priority(priority),
            stated_valid_at=cand.source.occurred_at,
            idempotency_key=self.guard.scoped_name(scope, idempotency_key)
            or derived_key("correct", cand, self.config)))

    def correct_item(self, item_id: str, value: Any, *, expected_revision: int,
                     **kw: Any) -> WriteResult:
        """Corrects the key of a visible, writable item (``replaces`` that item)."""
        rec = self.guard.writable_item(item_id)
        return self.correct(rec.scope, rec.key, value, expected_revision=expected_revision,
                            replaces=item_id, **kw)

    def resolve_conflict(self, group_id: str, keep: str, *,
                         actor: str | None = None) -> dict[str, Any]:
        """Keeps one item of a conflict group; the others are superseded by it (role admin).

        Raises:
            NotFoundOrNotVisible: no open group with that id visible to the caller.
            InvalidInput: the group is visible but ``keep`` is not one of its items
                (``field`` ``keep``; ``details.items`` lists them).
        """
        self.guard.role(Role.ADMIN, "resolve conflicts")
        refuse_surrogates(group_id, "group_id")
        try:
            rec = self.guard.item(keep)
        except NotFound:
            rec = None
        if rec is None or rec.conflict_group != group_id:
            group = reads.conflict_group(self.ctx, group_id, self.guard.readable)
            if group is None:
                raise hidden("Conflict group", group_id, "group_id")
            ids = [i["item_id"] for i in group["items"]]
            raise InvalidInput(f"Item {keep!r} is not one of the items of conflict group "
                               f"{group_id!r}; keep one of {ids}. Nothing was changed.",
                               field="keep", group_id=group_id, items=ids)
        self.guard.write(rec.scope)
        op = self.ctx.writer.operate(rec.scope, rec.key, self._actor(actor),
                                     lambda st, p: ops.resolve_conflict(st, group_id, keep))
        return {"group_id": group_id, "kept": keep, "revision": op.revision}

    def archive(self, item_id: str, *, actor: str | None = None) -> dict[str, Any]:
        """Archives an item (reversible): hidden from recall, profile and default listings."""
        rec = self.guard.writable_item(item_id)
        op = self.ctx.writer.operate(rec.scope, rec.key, self._actor(actor),
                                     lambda st, p: ops.archive(st, item_id))
        return {"item_id": item_id, "status": "archived", "revision": op.revision}

    def restore(self, item_id: str, *, actor: str | None = None) -> dict[str, Any]:
        """Restores an archived item to its prior status (or history if replaced meanwhile)."""
        rec = self.guard.writable_item(item_id)
        op = self.ctx.writer.operate(
            rec.scope, rec.key, self._actor(actor),
            lambda st, p: ops.restore(st, item_id, p.items[item_id].prior_status))
        after = self.store.item(self.id, item_id)
        return {"item_id": item_id, "status": after.status if after else None,
                "revision": op.revision}

    # --- forget, holds, retention (service.forget) ----------------------------------------
    def _forget_scopes(self, asked: list[str] | None = None) -> list[str] | None:
        """What a forget covers: a memory-wide principal every scope (None) or those it
        names; a scoped principal its own scope only (naming another is refused)."""
        if asked is not None:
            asked = [self.guard.write(s) for s in asked]
        if self.principal.scope is None:
            return asked
        return [self.principal.scope]

    def forget(self, item_id: str | None = None, *, scope: str | None = None,
               key: str | None = None, value: Any = None,
               expected_revision: int | None = None, actor: str | None = None,
               caller_scope: str | None = None,
               scopes: list[str] | None = None) -> ErasureReport:
        """Forgets for real: erases every copy and returns an ErasureReport.

        Address by ``item_id``, or by ``scope`` + ``key`` (+ ``value`` for one value of a multi
        key) with ``expected_revision``. ``caller_scope`` applies ForgetMemory authority. An
        owner's forget covers every scope of the memory (or the ``scopes`` it names); a scoped
        principal's covers its own. The report names the scopes covered.
        See ``service.forget.Forgetter.forget`` for errors.
        """
        if item_id is not None:
            self.guard.writable_item(item_id)
        elif scope is not None:
            scope = self.guard.write(scope)
        else:
            self.guard.role(Role.WRITER, "forget")
        return Forgetter(self).forget(item_id, scope=scope, key=key, value=value,
                                      expected_revision=expected_revision,
                                      actor=self._actor(actor), caller_scope=caller_scope,
                                      scopes=self._forget_scopes(scopes))

    def forget_scope(self, scope: str, *, actor: str | None = None) -> ErasureReport:
        """Forgets a whole scope: every item (any status but forgotten) and every source of
        ``scope``, with a tombstone per claim, in one ErasureReport (see
        ``service.forget_scope``). The scope is required: there is no memory-wide form.

        Raises:
            InvalidInput: no scope, or not a scope handle (nothing erased).
            PermissionDenied: a scoped caller naming another scope or below role writer; a
                memory-wide caller below role admin.
            LegalHoldActive: items of the scope are held (``details.held``); nothing erased.
        """
        from remem.service.forget_scope import forget_scope

        if not isinstance(scope, str) or not scope.strip():
            raise InvalidInput("Forgetting a scope needs the scope, e.g. 'user:alice'; there "
                               "is no memory-wide form.", field="scope")
        scope = self.guard.write(scope)
        if self.principal.scope is None:
            self.guard.role(Role.ADMIN, "forget a whole scope")
        return forget_scope(Forgetter(self), scope, actor=self._actor(actor))

    def set_legal_hold(self, item_id: str, hold: bool = True, *,
                       actor: str | None = None) -> dict[str, Any]:
        """Sets (or releases, ``hold=False``) a legal hold: forget/retention are blocked."""
        self.guard.role(Role.ADMIN, "set legal holds")
        self.guard.writable_item(item_id)
        return Forgetter(self).set_legal_hold(item_id, hold, actor=self._actor(actor))

    def set_retention(self, item_id: str, *, keep_until: datetime | None = None,
                      keep_days: int | None = None, actor: str | None = None) -> dict:
        """Sets an item's keep_until (or created_at + keep_days)."""
        self.guard.writable_item(item_id)
        return Forgetter(self).set_retention(item_id, keep_until=keep_until,
                                             keep_days=keep_days, actor=self._actor(actor))

    def run_retention(self, now: datetime | None = None) -> dict[str, Any]:
        """Erases expired items (actor system:retention); returns what it erased/blocked."""
        self.guard.manage("run retention")
        return Forgetter(self).run_retention(now)

    # --- sources and intake ----------------------------------------------------------------
    def recall(self, scopes: str | list[str], query: str, *, budget_tokens: int,
               tokenizer: str = "o200k_base", valid_at: datetime | None = None,
               kinds: list[str] | None = None, include_history: bool = False,
               limit: int = 30, after: list[str] | None = None,
               deadline_ms: int = 0, mode: str = "hybrid", filters: dict | None = None,
               now: datetime | None = None) -> RecallResult:
        """Hybrid recall (full text + vectors + key, fused) rendered within ``budget_tokens``.

        Returns items (constraints first), sources labelled ``source``, ``basis_seq``,
        ``truncated``, ``coverage`` and ``text``; the model-facing ``text`` counts at most
        ``budget_tokens`` tokens under ``tokenizer`` (the structured items beside it are not
        counted). ``valid_at`` recalls what held then.

        Raises:
            InvalidInput, PermissionDenied (a scope the caller may not read),
            UnsupportedCapability (tokenizer), ResultLimitExceeded (required constraints do not
            fit), EmbeddingMismatch, NotFoundOrNotVisible (an ``after`` receipt not visible).

        Kind-B cached facts carry ``cached`` freshness and stale ones say ``stale`` in the
        text; stale ``on-read`` facts are refreshed first within ``deadline_ms`` (default 2 s).

        ``after`` names receipts that must be available first (KIP read barrier): recall waits
        up to ``deadline_ms``; if they are not, the result has ``status`` pending (or partial
        for a failed receipt), ``action_eligible`` False and the unresolved receipts.

        ``mode``: hybrid (default) | lexical (full text + key) | vector. ``filters``: kind,
        key, status, ``valid_at`` / ``recorded_at`` windows and metadata conditions
        (``remem.domain.filters``); relative times resolve against ``now`` (default: the
        store clock). A filter that cannot be honoured raises InvalidInput. A ``deadline_ms``
        above ``MAX_DEADLINE_MS`` (60 s) waits that long at most.
        """
        for field, v in (("query", query), ("tokenizer", tokenizer), ("kinds", kinds),
                         ("after", after)):
            refuse_surrogates(v, field)
        deadline_ms = min(deadline_ms, MAX_DEADLINE_MS)
        scopes = self.guard.read(scopes)
        for rid in after or []:
            self.guard.receipt(rid)
        return self.ctx.cached.on_read(  # stale on-read cached facts refresh first
            lambda: self.ctx.recall.recall(scopes, query, budget_tokens=budget_tokens,
                                           tokenizer=tokenizer, valid_at=valid_at,
                                           kinds=kinds, include_history=include_history,
                                           limit=limit, after=after, deadline_ms=deadline_ms,
                                           mode=mode, filters=filters, now=now),
            deadline_ms=deadline_ms)

    def context(self, scopes: str | list[str], query: str, *, max_bytes: int = 8192,
                kinds: list[str] | None = None, valid_at: datetime | None = None,
                mode: str = "hybrid", filters: dict | None = None,
                now: datetime | None = None) -> ContextResult:
        """Relevant items within ``max_bytes`` UTF-8 bytes (instantKV: items + truncated);
        ``mode``, ``filters`` and ``now`` as in ``recall``."""
        refuse_surrogates(query, "query")
        refuse_surrogates(kinds, "kinds")
        return self.ctx.recall.context(self.guard.read(scopes), query, max_bytes=max_bytes,
                                       kinds=kinds, valid_at=valid_at, mode=mode,
                                       filters=filters, now=now)

    def profile(self, scopes: str | list[str], *, budget_tokens: int | None = None,
                max_bytes: int | None = None, tokenizer: str = "o200k_base",
                activation_id: str | None = None) -> ProfileResult:
        """The pinned profile (identity, rules, profile slots, preferences), deterministic;
        byte-identical for the same ``activation_id`` until a new activation."""
        refuse_surrogates(activation_id, "activation_id")
        refuse_surrogates(tokenizer, "tokenizer")
        return self.ctx.recall.profile(self.guard.read(scopes), budget_tokens=budget_tokens,
                                       max_bytes=max_bytes, tokenizer=tokenizer,
                                       activation_id=activation_id)

    def query(self, scopes: str | list[str], text: str, *, limit: int = 10
              ) -> list[dict[str, Any]]:
        """KickSide ``queryable``: current items of the scopes nearest ``text``, each with
        ``meta.node_type`` (kind), ``meta.similarity`` (cosine) and ``meta.created_at``."""
        from remem.service.queryable import query

        return query(self.ctx, self.guard.read(scopes), text, limit=limit)

    # --- reads ---------------------------------------------------------------------------
    def _item_record(self, item_id: str):
        """The item's record for internal use after the guard allowed the operation."""
        rec = self.store.item(self.id, item_id) if isinstance(item_id, str) else None
        if rec is None:
            raise hidden("Item", item_id, "item_id")
        return rec

    def get(self, item_id: str) -> ItemView:
        """One item with its value.

        Raises:
            NotFoundOrNotVisible: no such item, forgotten, or not readable by the caller.
        """
        return reads.views(self.ctx, [self.guard.item(item_id)])[0]

    def inspect(self, scope: str, key: str) -> Inspection:
        """Current value, revision, state, history and open conflicts of one key."""
        scope = self.guard.read(scope)[0]
        return reads.inspect(self.ctx, scope, parse_key(key))

    def items(self, *, scope: str | None = None, key: str | None = None,
              kind: str | None = None, status: str | list[str] | None = None,
              cursor: str | None = None, limit: int = 50, filters: dict | None = None,
              now: datetime | None = None) -> Page:
        """Lists items with filters and cursor pagination (never silently capped).

        Default statuses: current and conflict. ``status="all"`` lists every status. A scoped
        principal lists its own scope unless it names another readable one. ``filters`` and
        ``now`` as in ``recall`` (a status condition there lists from every status).
        Returns a Page whose ``next_cursor`` is None only when nothing more matches and whose
        ``total`` counts every matching item.
        """
        key = parse_key(key) if key is not None else None  # a malformed key is an error
        return reads.items(self.ctx, scope=self.guard.listing_scope(scope), key=key,
                           kind=kind, status=status, cursor=cursor, limit=limit,
                           filters=filters, now=now)

    def tz_offsets(self, item_ids: list[str]) -> dict[str, int]:
        """The UTC offset (minutes) each item's statement gave with its time, for showing its
        dates in the speaker's zone as recall's item lines do: ``{item_id: offset_min}`` for
        the visible items that have a non-zero one (others, and ids not visible, left out)."""
        recs = []
        for item_id in list(item_ids)[:1000]:
            try:
                recs.append(self.guard.item(item_id))
            except NotFound:
                continue
        return reads.tz_offsets(self.ctx, recs)

    def history(self, item_id: str) -> dict[str, Any]:
        """An item, its key's other versions, its provenance and the ledger events naming it."""
        return reads.history(self.ctx, self.guard.item(item_id))

    def conflicts(self, scope: str | None = None) -> list[dict[str, Any]]:
        """Open conflict groups: [{group_id, scope, key, items: [ItemView]}]."""
        groups = reads.conflicts(self.ctx, self.guard.listing_scope(scope))
        return [g for g in groups if self.guard.readable(g["scope"])]

    # --- Log+Facts export and import (service.logfacts_io) ---------------------------------
    def export_log_facts(self, *, tenant: str | None = None, progress: Any = None,
                         claim_key: bool = True) -> Any:
        """The memory as Log+Facts 1.3.0 JSON Lines: an iterator of ``bytes`` lines (log
        entries, facts, tombstones), each validated against the schema; streamed page by
        page. ``tenant`` fills ``scope.tenantId`` (default: the memory's tenant).
        ``progress(done, total)`` is called as records go out. Forgotten content is never
        exported; with tombstones the memory's claim key goes first (``claim_key=False`` leaves
        it out: the tombstones then cannot block the claims in another database).

        Raises:
            PermissionDenied: the caller is not the owner or a memory-wide admin, or a
                token names a tenant other than the memory's own.
            InvalidInput: a bad ``tenant``.
        """
        from remem.service.logfacts_io import export_lines

        self.guard.manage("export the memory")
        _check_tenant(tenant)
        self.guard.label_tenant(tenant, self.ctx.store.memory_tenant(self.ctx.id))
        return export_lines(self.ctx, tenant=tenant, progress=progress, claim_key=claim_key)

    def export_log_facts_to(self, out: Any, *, tenant: str | None = None,
                            progress: Any = None, claim_key: bool = True) -> Any:
        """Writes ``export_log_facts`` to a binary file object; returns a ``Summary``
        (records per type, bytes, seconds)."""
        from remem.service.logfacts_io import export_to

        self.guard.manage("export the memory")
        _check_tenant(tenant)
        self.guard.label_tenant(tenant, self.ctx.store.memory_tenant(self.ctx.id))
        return export_to(self.ctx, out, tenant=tenant, progress=progress, claim_key=claim_key)

    def import_log_facts(self, path: Any, *, progress: Any = None) -> Any:
        """Imports a Log+Facts JSON Lines file: every line is validated first (nothing is
        written if one fails: ``InvalidInput`` with ``details.line`` and ``details.field``,
        never the value), then the memory is rebuilt through the write path (decision,
        ledger, source chains, read model). Returns a ``Summary``.

        Raises:
            PermissionDenied: the caller is not the owner or a memory-wide admin.
            InvalidInput: a line is not valid (nothing written).
        """
        from pathlib import Path

        from remem.service.logfacts_import import import_file

        self.guard.manage("import into the memory")
        return import_file(self, Path(path), progress=progress)


__all__ = ["Memory"]


def _check_tenant(tenant: str | None) -> None:
    """An export's ``tenant`` is a tenant id (the rule memories and tokens follow), or None."""
    if tenant is not None:
        from remem.service.store import check_tenant_id

        check_tenant_id(tenant)


#: The fields of one ``remember_many`` statement (``remember``'s arguments).
_STATEMENT_FIELDS = frozenset({"scope", "key", "value", "kind", "valid_at", "source",
                               "valid_until", "idempotency_key", "metadata", "priority",
                               "cached_source"})


def _statements(statements: Any) -> list[dict[str, Any]]:
    """The statements of ``remember_many``, each an object of known fields (a field it
    does not have, such as ``expected_revision``, is never silently ignored).

    Raises:
        InvalidInput: not a list of objects, or a statement with an unknown field.
    """
    if not isinstance(statements, list):
        raise InvalidInput("statements must be a list of {scope, key, value, ...} objects.",
                           field="statements")
    for i, st in enumerate(statements):
        if not isinstance(st, dict):
            raise InvalidInput(f"statement {i} is not an object.", index=i, field="statements")
        unknown = sorted(set(st) - _STATEMENT_FIELDS)
        if unknown:
            raise InvalidInput(f"statement {i} has unknown fields {unknown}; allowed: "
                               f"{sorted(_STATEMENT_FIELDS)}.", index=i, field=unknown[0])
    return statements
