"""Memory methods for the published interfaces remem binds: the KIP Memory Interface
(``kip``, its descriptor, source staging) and the instantKV slots (inspect, profile, context,
forget). Mixed into :class:`remem.service.memory.Memory`; each asks the guard first."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from remem.domain.limits import MAX_SOURCE_ID_BYTES, check_text, refuse_surrogates
from remem.domain.model import parse_key
from remem.service import reads


class InteropMethods:
    """kip / kip_descriptor / stage_source / slot_* (see ``Memory``)."""

    guard: Any
    ctx: Any

    def kip(self, request: Any) -> dict[str, Any]:
        """Serves one KIP 2.0 Memory Interface request (see ``service.kip``) and returns the
        schema's response document; a refused request is a ``failed`` response (its error:
        ``{code, category, message, details}``). Raises only for a document that names no KIP
        operation (InvalidInput)."""
        from remem.service.kip import KipBinding

        return KipBinding(self).handle(request)

    def kip_descriptor(self, default_scope: str | None = None) -> dict[str, Any]:
        """What the KIP binding advertises to this caller (schema ``Descriptor``): bundles,
        default budget, tokenizer, minimum_response_tokens, default space and scope (the
        caller's own scope, or ``default_scope`` an interface binds, e.g. MCP's --scope)."""
        from remem.service.kip_descriptor import descriptor

        if default_scope is not None:
            default_scope = self.guard.read(default_scope)[0]
        return descriptor(self.id, default_scope or self.principal.scope)

    def stage_source(self, scope: str, text: str, *, source_ref: str,
                     digest: str | None = None, role: str = "user", actor: str | None = None,
                     occurred_at: datetime | None = None, kind: str | None = None,
                     run_id: str | None = None, payload: dict[str, Any] | None = None,
                     caused_by_log_id: str | None = None) -> dict[str, Any]:
        """Stages a host-captured source for KIP ``observe``/``revise``/``feedback``
        ``{source_ref}``: its exact text, identity (``source_ref``), ``digest``
        (``sha256:<hex>`` of the UTF-8 bytes, checked), role, actor and observed time. The
        source is recorded immutably (hash-chained, searchable as evidence); nothing is
        extracted until a KIP request names it. Staging the same source again is a replay.

        Returns:
            ``{"source_ref", "scope", "digest", "role", "actor", "occurred_at", "sequence"
            (its place in the run's chain), "replayed"}``.

        Raises:
            InvalidInput: bad text, ref, role or a digest that does not match the text.
            PermissionDenied: the principal may not write the scope.
            IdempotencyConflict: the ref was staged with other content.
        """
        from remem.service.sources import check_digest

        for field, v in (("text", text), ("digest", digest), ("role", role),
                         ("actor", actor), ("kind", kind), ("run_id", run_id)):
            refuse_surrogates(v, field)
        scope = self.guard.write(scope)
        if caused_by_log_id is not None:  # a visible source, else the neutral answer
            caused_by_log_id = self.guard.source(caused_by_log_id)["source_id"]
        check_text(source_ref, "source_ref", MAX_SOURCE_ID_BYTES)
        sha = check_digest(text, digest)
        name = self.guard.scoped_name
        if self.principal.token_id is not None and self.principal.scope is not None:
            run_id = name(scope, run_id or "default")
        rc = self.ctx.sources.observe(scope, text, role=role, actor=actor,
                                      source_id=name(scope, source_ref), run_id=run_id,
                                      occurred_at=occurred_at, kind=kind,
                                      recorded_by=self._recorder(), payload=payload,
                                      caused_by_log_id=caused_by_log_id)
        return {"source_ref": source_ref, "scope": rc.scope, "digest": sha, "role": rc.role,
                "actor": rc.actor, "occurred_at": rc.occurred_at, "sequence": rc.sequence,
                "replayed": rc.replayed}

    def _slot_scope(self, entity: str, default_scope: str | None) -> str:
        """The scope an instantKV entity names (``user``/``self``: the default scope)."""
        from remem.service.apply import _scope

        if default_scope is None:
            default_scope = self.principal.scope
        return _scope(entity, default_scope)

    def slot_inspect(self, entity: str, attribute: str, *,
                     default_scope: str | None = None) -> dict[str, Any]:
        """instantKV inspection of one slot (shape in ``service.slots``).

        Raises:
            NotFoundOrNotVisible: no such slot, or not readable by the caller.
        """
        from remem.service import slots

        scope = self.guard.read(self._slot_scope(entity, default_scope))[0]
        return slots.inspect_slot(self.ctx, scope, parse_key(attribute), entity,
                                  self.clock.now())

    def slot_profile(self, *, default_scope: str | None = None,
                     max_bytes: int = 8192) -> dict[str, Any]:
        """Every live slot of the default scope within ``max_bytes``: ``{items, truncated}``."""
        from remem.service import slots

        slots.check_max_bytes(max_bytes)
        scope = self.guard.read(self._slot_scope("user", default_scope))[0]
        return slots.pack(slots.profile_views(self.ctx, scope, self.clock.now()),
                          {scope: "user"}, max_bytes)

    def slot_context(self, query: str, *, default_scope: str | None = None,
                     max_bytes: int = 8192) -> dict[str, Any]:
        """Live slots relevant to ``query`` (ranked by recall) within ``max_bytes``."""
        from remem.service import slots

        slots.check_max_bytes(max_bytes)
        scope = self.guard.read(self._slot_scope("user", default_scope))[0]
        found = self.ctx.recall.context([scope], query, max_bytes=slots.MAX_MAX_BYTES)
        recs = [r for r in (self.store.item(self.id, d["id"]) for d in found.items) if r]
        views = slots.live_views(self.ctx, reads.views(self.ctx, recs), self.clock.now())
        return slots.pack(views, {scope: "user"}, max_bytes)

    def slot_forget(self, entity: str, attribute: str, *, expected_revision: int,
                    default_scope: str | None = None) -> dict[str, Any]:
        """Forgets one slot at ``expected_revision``: ``{status, key, erasure}`` where status
        is ``forgotten`` once erasure completed (else the report's state)."""
        from remem.service import slots

        scope = self._slot_scope(entity, default_scope)
        report = self.forget(scope=scope, key=attribute,
                             expected_revision=expected_revision).to_dict()
        return {"status": "forgotten" if report["state"] == "completed" else report["state"],
                "key": slots.slot_key(scope, parse_key(attribute)), "erasure": report}
