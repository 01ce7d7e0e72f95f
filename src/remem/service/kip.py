"""KIP 2.0 Memory Interface binding: one request shape, five intents (seed 002).

Requests and responses are the wire schema's (``remem/specs/kip``; see ``kip_requests``,
``kip_responses``). Binding choices (remem is the Brain and the Nexus):

- ``scope.task_ref`` is an exact remem scope handle (``user:alice``, ``thread:t1``); omitted, it
  is the caller's own scope when it has exactly one (the descriptor's ``default_scope``);
  ``context_refs`` add read scopes for recall. Unknown or malformed scope fails, never widens.
  ``space.id``, when given, must be this memory's id.
- ``source_ref`` names a source the host staged first (``Memory.stage_source``: exact text,
  identity, sha256 digest, role, actor, time) in the task scope. A missing, invisible or
  other-scope source fails ``NotFoundOrNotVisible`` (one answer).
- Only ``memory_basic`` is served: another bundle in ``requires``, recall ``mode: attention``,
  ``change_kind: misrecorded``, historical ``as_of_seq`` and procedural mutations (a staged
  source whose formation would write a ``skill``/``lesson``) answer ``UnsupportedCapability``.
- A refused request is a ``failed`` response with a KIP error; only a document that is not a
  KIP request at all (no recognisable operation) raises.
"""

from __future__ import annotations

from typing import Any

from remem.errors import InvalidInput, RememError, UnsupportedCapability
from remem.service import kip_responses as R
from remem.service.guard import hidden
from remem.service.kip_descriptor import CONTRACT, SUPPORTED_BUNDLES, contract_revision, \
    known_bundles
from remem.service.kip_requests import (
    FeedbackInput,
    ForgetInput,
    KipRequest,
    ObserveInput,
    ReviseInput,
    operation_of,
    parse_request,
    request_id_of,
)

MUTATIONS = ("observe", "revise", "feedback", "forget")


class KipBinding:
    """Serves KIP requests against one ``Memory`` (and so its principal)."""

    def __init__(self, memory: Any) -> None:
        self.memory = memory

    def handle(self, document: Any) -> dict[str, Any]:
        """One request -> one schema-valid response document.

        Returns:
            ``{"kip_memory", "operation", "status", ...}``; status is succeeded | pending |
            partial | failed (``error`` then says why: InvalidInput, UnsupportedCapability,
            IdempotencyConflict, PreconditionFailed, CursorMismatch, NotFoundOrNotVisible,
            NotAuthorized, ResultLimitExceeded, ...).

        Raises:
            InvalidInput: the document names no KIP operation (no response shape applies).
        """
        op = operation_of(document)
        if op is None:
            parse_request(document)  # raises the precise reason
            raise InvalidInput("operation must be one of observe, recall, revise, feedback, "
                               "forget.", field="operation")
        try:
            req, data = parse_request(document)
            self._check_capabilities(req)
            return getattr(self, "_" + op)(req, data)
        except RememError as exc:
            return R.failed(op, exc, request_id_of(document))

    def _check_capabilities(self, req: KipRequest) -> None:
        for bundle in req.requires:
            if bundle not in SUPPORTED_BUNDLES:
                state = "known but not served" if bundle in known_bundles() else "unknown"
                raise UnsupportedCapability(f"bundle {bundle!r} is {state} here; this binding "
                                            f"serves {list(SUPPORTED_BUNDLES)}.", bundle=bundle)
        if req.requires_contract not in (None, CONTRACT, contract_revision()):
            raise UnsupportedCapability(f"contract {req.requires_contract[:64]!r} is not "
                                        f"served; this binding implements {CONTRACT} "
                                        f"({contract_revision()}).", field="requires_contract")
        if req.space is not None and (req.space.id != self.memory.id or req.space.uri):
            raise hidden("Space", req.space.id or req.space.uri, "space")

    def task(self, req: KipRequest) -> str:
        """The resolved task scope: ``scope.task_ref``, else the caller's only scope."""
        task = req.scope.task_ref or self.memory.principal.scope
        if task is None:
            raise InvalidInput("scope.task_ref is required: this caller has no single default "
                               "scope (name an exact scope handle such as user:alice).",
                               field="scope.task_ref")
        return task

    def staged(self, ref: str, scope: str) -> dict[str, Any]:
        """The staged source ``ref`` in ``scope``, or the one existence-neutral answer."""
        row = self.memory.guard.find_source(ref)
        if row is None or row["scope"] != scope or row.get("text") is None:
            raise hidden("Source", ref, "input.source_ref")
        return row

    # --- intents -----------------------------------------------------------------------------
    def _observe(self, req: KipRequest, d: ObserveInput) -> dict[str, Any]:
        from remem.service.kip_intents import observe

        return observe(self, req, d)

    def _recall(self, req: KipRequest, d: Any) -> dict[str, Any]:
        from remem.service.kip_briefing import Briefer

        task = self.task(req)
        return Briefer(self.memory, req, d, task).respond()

    def _revise(self, req: KipRequest, d: ReviseInput) -> dict[str, Any]:
        from remem.service.kip_intents import revise

        return revise(self, req, d)

    def _feedback(self, req: KipRequest, d: FeedbackInput) -> dict[str, Any]:
        from remem.service.kip_intents import feedback

        return feedback(self, req, d)

    def _forget(self, req: KipRequest, d: ForgetInput) -> dict[str, Any]:
        from remem.service.kip_intents import forget

        return forget(self, req, d)


__all__ = ["KipBinding"]
