"""Memory methods for captured input: observe (one and many), capture, deactivate, receipts,
and the KIP revise/feedback/forget-by-reference intents. Mixed into
:class:`remem.service.memory.Memory`; each asks the guard first."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from remem.domain.decision import check_priority
from remem.domain.filters import parse_metadata
from remem.domain.limits import MAX_SOURCE_ID_BYTES, check_text
from remem.errors import InvalidInput
from remem.service.forget import Forgetter
from remem.service.intake import Receipt


class IntakeMethods:
    """Observe, capture and deactivate (see :class:`remem.service.memory.Memory`)."""

    def observe(self, scope: str, text: str | None = None, *, role: str | None = None,
                actor: str | None = None,
                source_id: str | None = None, run_id: str | None = None,
                occurred_at: datetime | None = None, kind: str | None = None,
                idempotency_key: str | None = None, derive: bool = True,
                metadata: dict[str, Any] | None = None,
                capture: dict[str, Any] | None = None, procedural: bool = True,
                payload: dict[str, Any] | None = None,
                caused_by_log_id: str | None = None,
                priority: int | None = None) -> Receipt:
        """Records an immutable source and returns its durable receipt (KIP observe).

        The source is searchable evidence at once (hash-chained per run); a derive job then
        extracts the user's own statements into claims (inline in embedded mode, else by
        ``remem worker``) and moves the receipt recorded -> processed -> available.
        Same idempotency key (default: the source identity) + same meaning -> the original
        receipt (``replayed``); different meaning -> ``IdempotencyConflict``.
        ``metadata`` (see ``remember``) is kept with the source and inherited by the facts
        derived from it. ``capture`` (set by ``capture``: the captured span, ids only) is
        recorded on the derive run together with the caller's identity, frozen now.
        ``procedural=False`` (the KIP ``memory_basic`` binding): skill/lesson claims the
        extractor proposes are not written (counted ``unsupported`` on the derive run).
        The source is a schema LogEntry: ``kind`` one of the 13 log kinds (None: from
        ``role``; ``role`` None: from ``kind``, else ``user``), ``payload`` its kind-specific object (``text`` goes into it; unknown fields
        kept), ``caused_by_log_id`` a visible source of this memory (else
        ``NotFoundOrNotVisible``).
        ``priority`` (see ``remember``) is given to the facts derived from this source.
        """
        scope = self.guard.write(scope)
        if caused_by_log_id is not None:
            caused_by_log_id = self.guard.source(caused_by_log_id)["source_id"]
        metadata = parse_metadata(metadata)
        priority = check_priority(priority)
        if capture is not None:
            p = self.principal
            capture = {"span": dict(capture.get("span") or {}), "identity": {
                "scope": scope, "subject": p.subject, "role": p.role.value,
                "token_id": p.token_id}}
        check_text(source_id, "source_id", MAX_SOURCE_ID_BYTES)  # the caller's own id
        name = self.guard.scoped_name
        if self.principal.token_id is not None and self.principal.scope is not None:
            run_id = name(scope, run_id or "default")  # its own chain: no shared sequence
        elif run_id is not None:
            run_id = name(scope, run_id)  # never into another scope's namespaced run
        return self.ctx.intake.observe(scope, text, role=role, actor=actor,
                                       source_id=name(scope, source_id), run_id=run_id,
                                       occurred_at=occurred_at, kind=kind,
                                       idempotency_key=name(scope, idempotency_key),
                                       derive=derive, recorded_by=self._recorder(),
                                       metadata=metadata, capture=capture,
                                       procedural=procedural, payload=payload,
                                       caused_by_log_id=caused_by_log_id,
                                       priority=priority)

    def observe_many(self, scope: str, turns: list[dict[str, Any]], *,
                     run_id: str | None = None, derive: bool = True) -> list[Receipt]:
        """Records several turns of one scope at once: one embedding call and one transaction
        for all of them, then derive (inline in embedded mode, else by ``remem worker``).

        Args:
            turns: ``[{text, id?, role?, actor?, occurred_at?, kind?, idempotency_key?,
                metadata?, payload?, caused_by_log_id?}]``, oldest first; ``id`` is the source id (as ``observe``'s
                ``source_id``). At most ``service.intake.MAX_OBSERVE_MANY`` turns.

        Returns:
            one receipt per turn, in order; each has ``observe``'s idempotency (a replayed
            turn returns its original receipt with ``replayed``).

        Raises:
            InvalidInput: any turn is invalid (nothing written; ``index`` names it).
            IdempotencyConflict: a turn's key was used with another meaning (nothing written).
            PermissionDenied: the principal may not write ``scope``.
        """
        from remem.service.intake import parse_turns

        scope = self.guard.write(scope)
        name = self.guard.scoped_name
        if self.principal.token_id is not None and self.principal.scope is not None:
            run_id = name(scope, run_id or "default")  # its own chain: no shared sequence
        elif run_id is not None:
            run_id = name(scope, run_id)  # never into another scope's namespaced run
        entries = [replace(e, caused_by_log_id=self.guard.source(e.caused_by_log_id)[
            "source_id"]) if e.caused_by_log_id is not None else e  # a cause the caller sees
            for e in parse_turns(scope, turns, run_id=run_id, recorded_by=self._recorder(),
                                 name=name)]
        return self.ctx.intake.observe_many(entries, derive=derive)

    def revise(self, scope: str, key: str, value: Any, *, change_kind: str = "unspecified",
               **kw: Any) -> dict[str, Any]:
        """KIP revise: ``correction`` (never true) or ``world_change`` (from ``changed_at``)."""
        from remem.service.revise import revise

        return revise(self, self.guard.write(scope), key, value, change_kind=change_kind, **kw)

    def feedback(self, scope: str, text: str | None, **kw: Any) -> dict[str, Any]:
        """KIP feedback, stored as agent_statement or user_statement; never a grade."""
        from remem.service.revise import feedback

        scope = self.guard.write(scope)
        if kw.get("idempotency_key") is not None:
            kw["idempotency_key"] = self.guard.scoped_name(scope, kw["idempotency_key"])
        return feedback(self, scope, text, **kw)

    def forget_ref(self, target_ref: str, *, mode: str = "semantic",
                   caller_scope: str | None = None) -> dict[str, Any]:
        """KIP forget of an item or source reference (``semantic`` | ``payload_only``).

        Raises:
            NotFoundOrNotVisible: no item or source by that reference is visible (one answer
                for both). PermissionDenied: visible but not writable by the principal.
        """
        from remem.service.revise import forget_ref

        return forget_ref(self, target_ref, mode=mode, caller_scope=caller_scope)

    def forget_source(self, source_id: str, *,
                      scopes: list[str] | None = None) -> dict[str, Any]:
        """Erases one source's text, salt, full-text row and vector; its chain entry stays.
        ``scopes`` (memory-wide callers; None: every scope) limits which sources are seen."""
        row = self.guard.source(source_id)
        self.guard.write(row["scope"])
        return Forgetter(self).forget_source(row["source_id"],
                                             scopes=self._forget_scopes(scopes))

    def capture(self, scope: str, host_kind: str, host_id: str, turns: list[dict[str, Any]],
                *, expected_position: int | None = None) -> dict[str, Any]:
        """Captures a host conversation past its cursor (compare-and-set); see
        ``service.intake.capture``. Re-sending the same conversation duplicates nothing.
        A scoped caller's conversation ids, like its source ids, live under its scope."""
        from remem.service.intake import capture

        scope = self.guard.write(scope)
        return capture(self, scope, host_kind, self.guard.scoped_name(scope, host_id), turns,
                       expected_position=expected_position)

    def receipt(self, receipt_id: str) -> Receipt:
        """Current progress of a receipt (NotFoundOrNotVisible unless the caller reads its
        scope)."""
        return self.guard.receipt(receipt_id)

    def deactivate(self, scope: str, host_kind: str, host_id: str,
                   turns: list[dict[str, Any]] | None = None, *,
                   expected_position: int | None = None) -> dict[str, Any]:
        """A host session ends: captures its last ``turns`` (if any) and brings the memory's
        consolidation forward. Returns ``{"captured", "consolidation"}``; ``consolidation``
        is ``{"job_id", "kind", "run_at"}`` for a memory-wide caller and ``{"kind", "run_at"}``
        for a scoped one (the job is the memory's, not the scope's: its id is not given out).

        Raises:
            PermissionDenied: the principal may not write ``scope``.
            CursorMismatch: ``expected_position`` is not the conversation's cursor.
            InvalidInput: ``expected_position`` without turns (it guards their capture).
        """
        from remem.service.jobs.schedule import arm

        scope = self.guard.write(scope)
        if expected_position is not None and not turns:
            raise InvalidInput("expected_position guards the capture of turns; send the turns "
                               "with it, or leave it out (nothing was done).",
                               field="expected_position")
        captured = (self.capture(scope, host_kind, host_id, turns,
                                 expected_position=expected_position) if turns else None)
        consolidation = arm(self, "consolidate", now_=True)
        if self.guard.is_scoped:
            consolidation = {k: v for k, v in consolidation.items() if k != "job_id"}
        return {"captured": captured, "consolidation": consolidation}

    # --- recall ----------------------------------------------------------------------------
