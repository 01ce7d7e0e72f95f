"""KIP 2.0 Memory Interface binding: one request shape, five intents (seed 002).

Request::

    {"kip_memory": "2.0", "operation": "observe|recall|revise|feedback|forget",
     "scope": {"task_ref": "<scope handle>", "context_refs": ["<scope handle>", ...]},
     "idempotency_key": "...", "requires": ["memory_basic"],
     "budget": {"max_output_tokens": N, "deadline_ms": N, "tokenizer": "o200k_base"},
     "input": {...}}

Binding choices (remem is the Brain and the Nexus): ``scope.task_ref`` is an exact remem scope
handle (``thread:t1``, ``user:alice``); ``context_refs`` add read scopes for recall. Unknown or
malformed scope fails, never widens. ``source_ref`` is the host's source identity; remem records
sources itself, so observe/revise/feedback carry the source bytes in ``input.text`` (plus
``role``, ``actor``, ``occurred_at``). Only ``memory_basic`` is advertised; any other bundle in
``requires`` fails ``UnsupportedCapability``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from remem.domain.timefmt import from_iso
from remem.errors import InvalidInput, PreconditionFailed, UnsupportedCapability
from remem.service.kip_requests import (
    KIP_VERSION,
    FeedbackInput,
    ForgetInput,
    KipRequest,
    ObserveInput,
    RecallInput,
    RecallTime,
    ReviseInput,
    parse_request,
)

SUPPORTED_BUNDLES = ("memory_basic",)
KNOWN_BUNDLES = ("memory_basic", "memory_experience", "memory_learning", "memory_durable",
                 "memory_exchange")
OPERATIONS = ("observe", "recall", "revise", "feedback", "forget")
MUTATIONS = ("observe", "revise", "feedback", "forget")
DEFAULT_MAX_OUTPUT_TOKENS = 1200
DEFAULT_DEADLINE_MS = 3000


def descriptor() -> dict[str, Any]:
    """What this binding advertises (honestly: memory_basic only)."""
    return {"kip_memory": KIP_VERSION, "bundles": list(SUPPORTED_BUNDLES),
            "tokenizers": ["o200k_base", "cl100k_base"], "default_tokenizer": "o200k_base",
            "defaults": {"max_output_tokens": DEFAULT_MAX_OUTPUT_TOKENS,
                         "deadline_ms": DEFAULT_DEADLINE_MS},
            "scope": "exact remem scope handles in scope.task_ref / scope.context_refs"}


def _time(text: str | None, field: str) -> datetime | None:
    return None if text is None else from_iso(text, field=field)


class KipBinding:
    """Serves KIP requests against one ``Memory`` (and so its principal)."""

    def __init__(self, memory: Any) -> None:
        self.memory = memory

    def handle(self, request: Any) -> dict[str, Any]:
        """Parses (``service.kip_requests``), then serves one request; the Memory's guard
        authorises the parsed scopes and references.

        Returns:
            ``{"kip_memory", "operation", "status", ...}``; status is succeeded | pending |
            partial | failed.

        Raises:
            InvalidInput, UnsupportedCapability, IdempotencyConflict, PreconditionFailed,
            CursorMismatch, NotFoundOrNotVisible, PermissionDenied, ResultLimitExceeded.
        """
        req, data = parse_request(request)
        for bundle in req.requires:
            if bundle not in SUPPORTED_BUNDLES:
                state = "known but not served" if bundle in KNOWN_BUNDLES else "unknown"
                raise UnsupportedCapability(f"bundle {bundle!r} is {state} here; this binding "
                                            f"serves {list(SUPPORTED_BUNDLES)}.", bundle=bundle)
        if req.operation in MUTATIONS and not req.idempotency_key:
            raise InvalidInput(f"{req.operation} is a mutation and needs idempotency_key.",
                               field="idempotency_key")
        body = getattr(self, "_" + req.operation)(req, data)
        return {"kip_memory": KIP_VERSION, "operation": req.operation, **body}

    # --- intents -----------------------------------------------------------------------------
    def _observe(self, req: KipRequest, d: ObserveInput) -> dict[str, Any]:
        r = self.memory.observe(req.scope.task_ref, d.text, role=d.role, actor=d.actor,
                                source_id=d.source_ref, run_id=d.run_ref,
                                occurred_at=_time(d.occurred_at, "input.occurred_at"),
                                kind=d.kind, idempotency_key=req.idempotency_key)
        return {"status": _status(r.phase), "receipt": r.to_dict()}

    def _recall(self, req: KipRequest, d: RecallInput) -> dict[str, Any]:
        query = d.query or d.goal
        if not query:
            raise InvalidInput("input.query is required.", field="input.query")
        task = req.scope.task_ref
        # resume is scoped to the current task only; otherwise task + context scopes
        scopes = [task] if d.mode == "resume" else list(dict.fromkeys(
            [task, *req.scope.context_refs]))
        t = d.time or RecallTime()
        if t.as_of_seq is not None:
            self._check_as_of(t.as_of_seq, d.after)
        budget = req.budget
        res = self.memory.recall(
            scopes, query,
            budget_tokens=budget.max_output_tokens or DEFAULT_MAX_OUTPUT_TOKENS,
            tokenizer=budget.tokenizer or "o200k_base",
            valid_at=_time(t.valid_at, "input.time.valid_at"), after=list(d.after),
            deadline_ms=DEFAULT_DEADLINE_MS if budget.deadline_ms is None
            else budget.deadline_ms)
        doc = res.to_dict()
        # "unknown" (nothing recorded matches) is distinct from a stated answer, even "no".
        knowledge = "found" if doc["items"] else ("evidence_only" if doc["sources"]
                                                   else "unknown")
        return {"status": doc.get("status", "succeeded"), "mode": d.mode,
                "action_eligible": doc.get("action_eligible", False), "knowledge": knowledge,
                "result": doc}

    def _check_as_of(self, as_of: int, after: list[str]) -> None:
        for rid in after:
            rc = self.memory.receipt(rid)
            if rc.available_seq is not None and rc.available_seq > as_of:
                raise PreconditionFailed(
                    f"Receipt {rid} became available at seq {rc.available_seq}, after the "
                    f"fixed as_of_seq {as_of}; drop as_of_seq or the barrier.", receipt=rid)
        if as_of < self.memory.store.head_seq(self.memory.id):
            raise UnsupportedCapability("historical reads by as_of_seq are not served; use "
                                        "time.valid_at for world-time recall.",
                                        field="input.time.as_of_seq")

    def _revise(self, req: KipRequest, d: ReviseInput) -> dict[str, Any]:
        out = self.memory.revise(req.scope.task_ref, d.key, d.value,
                                 change_kind=d.change_kind, kind=d.kind,
                                 source_ref=d.source_ref, text=d.text,
                                 changed_at=_time(d.changed_at, "input.changed_at"),
                                 expected_revision=d.expected_revision,
                                 idempotency_key=req.idempotency_key)
        return {"status": "succeeded", "result": out}

    def _feedback(self, req: KipRequest, d: FeedbackInput) -> dict[str, Any]:
        out = self.memory.feedback(req.scope.task_ref, d.text, role=d.role, actor=d.actor,
                                   source_ref=d.source_ref,
                                   target=d.decision_ref or d.attempt_ref,
                                   idempotency_key=req.idempotency_key)
        return {"status": "succeeded", "result": out}

    def _forget(self, req: KipRequest, d: ForgetInput) -> dict[str, Any]:
        self.memory.guard.write(req.scope.task_ref)
        report = self.memory.forget_ref(d.target_ref, mode=d.mode,
                                        caller_scope=req.scope.task_ref)
        status = "succeeded" if report["state"] == "completed" else (
            "failed" if report["state"] == "blocked" else "partial")
        return {"status": status, "result": report}


def _status(phase: str) -> str:
    return {"available": "succeeded", "failed": "failed"}.get(phase, "pending")


__all__ = ["KipBinding", "descriptor"]
