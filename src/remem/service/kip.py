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

from remem.domain.model import Scope
from remem.domain.timefmt import from_iso
from remem.errors import (
    InvalidInput,
    PreconditionFailed,
    UnsupportedCapability,
)

KIP_VERSION = "2.0"
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


def _fields(obj: Any, allowed: set[str], where: str) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise InvalidInput(f"{where} must be an object.", field=where)
    extra = set(obj) - allowed
    if extra:
        raise InvalidInput(f"{where} has unknown fields {sorted(extra)}.", field=where)
    return obj


def _scopes(scope: Any) -> tuple[str, list[str]]:
    s = _fields(scope or {}, {"task_ref", "context_refs"}, "scope")
    if "task_ref" not in s:
        raise InvalidInput("scope.task_ref is required: an exact scope handle such as "
                           "'user:alice' (remem never guesses or widens scope).",
                           field="scope.task_ref")
    task = str(Scope.parse(s["task_ref"]))
    ctx = [str(Scope.parse(c)) for c in s.get("context_refs", [])]
    return task, list(dict.fromkeys([task, *ctx]))


def _time(text: Any, field: str) -> datetime | None:
    if text is None:
        return None
    if not isinstance(text, str):
        raise InvalidInput(f"{field} must be an ISO-8601 time with a zone.", field=field)
    return from_iso(text, field=field)


class KipBinding:
    """Serves KIP requests against one Memory."""

    def __init__(self, memory: Any) -> None:
        self.memory = memory

    def handle(self, request: Any) -> dict[str, Any]:
        """Validates and serves one request.

        Returns:
            ``{"kip_memory", "operation", "status", ...}``; status is succeeded | pending |
            partial | failed.

        Raises:
            InvalidInput, UnsupportedCapability, IdempotencyConflict, PreconditionFailed,
            CursorMismatch, NotFoundOrNotVisible, ArtifactUnavailable, ResultLimitExceeded.
        """
        req = _fields(request, {"kip_memory", "operation", "scope", "idempotency_key",
                                "requires", "budget", "input", "space", "request_id"}, "request")
        if req.get("kip_memory") != KIP_VERSION:
            raise UnsupportedCapability(f"kip_memory {req.get('kip_memory')!r} is not "
                                        f"supported; use {KIP_VERSION!r}.", field="kip_memory")
        op = req.get("operation")
        if op not in OPERATIONS:
            raise InvalidInput(f"operation {op!r} is not one of {list(OPERATIONS)}.",
                               field="operation")
        for bundle in req.get("requires") or []:
            if bundle not in SUPPORTED_BUNDLES:
                state = "known but not served" if bundle in KNOWN_BUNDLES else "unknown"
                raise UnsupportedCapability(f"bundle {bundle!r} is {state} here; this binding "
                                            f"serves {list(SUPPORTED_BUNDLES)}.", bundle=bundle)
        if op in MUTATIONS and not req.get("idempotency_key"):
            raise InvalidInput(f"{op} is a mutation and needs idempotency_key.",
                               field="idempotency_key")
        budget = _fields(req.get("budget") or {}, {"max_output_tokens", "deadline_ms",
                                                   "tokenizer"}, "budget")
        task, scopes = _scopes(req.get("scope"))
        data = req.get("input") or {}
        body = getattr(self, "_" + op)(task, scopes, data, budget, req.get("idempotency_key"))
        return {"kip_memory": KIP_VERSION, "operation": op, **body}

    # --- intents -----------------------------------------------------------------------------
    def _observe(self, task, scopes, data, budget, key) -> dict[str, Any]:
        d = _fields(data, {"source_ref", "text", "role", "actor", "occurred_at", "kind",
                           "run_ref"}, "input")
        if not d.get("source_ref"):
            raise InvalidInput("input.source_ref is required.", field="input.source_ref")
        if not isinstance(d.get("text"), str):
            raise InvalidInput("input.text must carry the source's exact text.",
                               field="input.text")
        r = self.memory.observe(task, d["text"], role=d.get("role", "user"),
                                actor=d.get("actor"), source_id=d["source_ref"],
                                run_id=d.get("run_ref"),
                                occurred_at=_time(d.get("occurred_at"), "input.occurred_at"),
                                kind=d.get("kind", "user-message"), idempotency_key=key)
        return {"status": _status(r.phase), "receipt": r.to_dict()}

    def _recall(self, task, scopes, data, budget, key) -> dict[str, Any]:
        d = _fields(data, {"query", "target_ref", "mode", "goal", "context", "after", "detail",
                           "time"}, "input")
        mode = d.get("mode", "answer")
        if mode not in ("answer", "action", "resume"):
            raise InvalidInput("input.mode must be answer, action or resume.", field="input.mode")
        query = d.get("query") or d.get("goal")
        if not query:
            raise InvalidInput("input.query is required.", field="input.query")
        if mode == "resume":
            scopes = [task]  # resume is scoped to the current task only
        t = _fields(d.get("time") or {}, {"valid_at", "as_of_seq"}, "input.time")
        after = list(d.get("after") or [])
        as_of = t.get("as_of_seq")
        if as_of is not None:
            head = self.memory.store.head_seq(self.memory.id)
            for rid in after:
                rc = self.memory.intake.get(rid)
                if rc.available_seq is not None and rc.available_seq > as_of:
                    raise PreconditionFailed(
                        f"Receipt {rid} became available at seq {rc.available_seq}, after the "
                        f"fixed as_of_seq {as_of}; drop as_of_seq or the barrier.",
                        receipt=rid)
            if as_of < head:
                raise UnsupportedCapability("historical reads by as_of_seq are not served; use "
                                            "time.valid_at for world-time recall.",
                                            field="input.time.as_of_seq")
        res = self.memory.recall(
            scopes, query, budget_tokens=int(budget.get("max_output_tokens",
                                                       DEFAULT_MAX_OUTPUT_TOKENS)),
            tokenizer=budget.get("tokenizer", "o200k_base"),
            valid_at=_time(t.get("valid_at"), "input.time.valid_at"), after=after,
            deadline_ms=int(budget.get("deadline_ms", DEFAULT_DEADLINE_MS)))
        doc = res.to_dict()
        # "unknown" (nothing recorded matches) is distinct from a stated answer, even "no".
        knowledge = "found" if doc["items"] else ("evidence_only" if doc["sources"]
                                                   else "unknown")
        return {"status": doc.get("status", "succeeded"), "mode": mode,
                "action_eligible": doc.get("action_eligible", False), "knowledge": knowledge,
                "result": doc}

    def _revise(self, task, scopes, data, budget, key) -> dict[str, Any]:
        d = _fields(data, {"source_ref", "target_ref", "change_kind", "key", "value", "kind",
                           "text", "changed_at", "expected_revision"}, "input")
        change = d.get("change_kind", "unspecified")
        if change not in ("correction", "world_change", "unspecified"):
            raise InvalidInput("input.change_kind must be correction, world_change or "
                               "unspecified.", field="input.change_kind")
        if not d.get("key") or "value" not in d:
            raise InvalidInput("input.key and input.value name the revised claim.",
                               field="input.key")
        out = self.memory.revise(task, d["key"], d["value"], change_kind=change,
                                 kind=d.get("kind"), source_ref=d.get("source_ref"),
                                 text=d.get("text"),
                                 changed_at=_time(d.get("changed_at"), "input.changed_at"),
                                 expected_revision=d.get("expected_revision"),
                                 idempotency_key=key)
        return {"status": "succeeded", "result": out}

    def _feedback(self, task, scopes, data, budget, key) -> dict[str, Any]:
        d = _fields(data, {"source_ref", "decision_ref", "attempt_ref", "text", "role",
                           "actor"}, "input")
        out = self.memory.feedback(task, d.get("text"), role=d.get("role", "agent"),
                                   actor=d.get("actor"), source_ref=d.get("source_ref"),
                                   target=d.get("decision_ref") or d.get("attempt_ref"),
                                   idempotency_key=key)
        return {"status": "succeeded", "result": out}

    def _forget(self, task, scopes, data, budget, key) -> dict[str, Any]:
        d = _fields(data, {"target_ref", "mode"}, "input")
        mode = d.get("mode")
        if mode not in ("payload_only", "semantic"):
            raise InvalidInput("input.mode must be payload_only or semantic.",
                               field="input.mode")
        if not d.get("target_ref"):
            raise InvalidInput("input.target_ref is required.", field="input.target_ref")
        report = self.memory.forget_ref(d["target_ref"], mode=mode, caller_scope=task)
        status = "succeeded" if report["state"] == "completed" else (
            "failed" if report["state"] == "blocked" else "partial")
        return {"status": status, "result": report}


def _status(phase: str) -> str:
    return {"available": "succeeded", "failed": "failed"}.get(phase, "pending")


__all__ = ["KipBinding", "descriptor"]
