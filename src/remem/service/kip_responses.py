"""KIP 2.0 response envelopes: status, receipt, progress, result, and KIP errors.

Every document built here validates against the schema's ``Response`` (tests check each one):

- a mutation (observe, revise, feedback, forget) answers ``succeeded`` only when its progress
  is ``available`` (forget: also erasure ``completed`` and disposition ``erased``);
  ``recorded``/``processed`` give ``pending``; a terminal failure gives ``failed`` with the
  error; a forget whose erasure is pending or partial gives ``partial``;
- a recall has no receipt or progress; its ``result`` is the briefing (``kip_briefing``);
- a refused request is ``{"status": "failed", "error": {"code", "category", "message",
  "details"}}``; ``details.remem_code`` is remem's own error code and the HTTP status comes
  from it (:func:`http_status`).
"""

from __future__ import annotations

from typing import Any

from remem import errors as E
from remem.service.kip_requests import KIP_VERSION

#: remem error class -> (KIP code, KIP category). "Missing" and "not visible" share one entry.
KIP_ERRORS: dict[type[E.RememError], tuple[str, str]] = {
    E.RequestTooLarge: ("RequestTooLarge", "resource"),
    E.InvalidInput: ("InvalidInput", "data"),
    E.NotFound: ("NotFoundOrNotVisible", "data"),
    E.RevisionMismatch: ("VersionConflict", "transaction"),
    E.IdempotencyConflict: ("IdempotencyConflict", "transaction"),
    E.ClaimForgotten: ("ClaimForgotten", "epistemic"),
    E.PreconditionFailed: ("PreconditionFailed", "transaction"),
    E.CursorMismatch: ("CursorMismatch", "protocol"),
    E.HeadMoved: ("HeadMoved", "transaction"),
    E.PermissionDenied: ("NotAuthorized", "governance"),
    E.LegalHoldActive: ("LegalHoldActive", "governance"),
    E.UnsupportedCapability: ("UnsupportedCapability", "protocol"),
    E.ResultLimitExceeded: ("ResultLimitExceeded", "resource"),
    E.ArtifactUnavailable: ("ArtifactUnavailable", "artifact"),
}


def kip_error(exc: E.RememError) -> dict[str, Any]:
    """The KIP ``Error`` object of a remem error (same message; remem's code in details)."""
    code, category = next((v for cls, v in KIP_ERRORS.items() if isinstance(exc, cls)),
                          (type(exc).__name__, "system"))
    details = {"remem_code": exc.code, "retryable": exc.retryable,
               **{k: v for k, v in exc.details.items() if _jsonable(v)}}
    return {"code": code, "category": category, "message": exc.message or code,
            "details": details}


def _jsonable(v: Any) -> bool:
    return v is None or isinstance(v, str | int | float | bool | list | dict)


def envelope(operation: str, status: str, request_id: str | None = None,
             **parts: Any) -> dict[str, Any]:
    """``{"kip_memory", "request_id"?, "operation", "status", ...parts}`` (None parts left
    out)."""
    doc: dict[str, Any] = {"kip_memory": KIP_VERSION}
    if request_id is not None:
        doc["request_id"] = request_id
    doc.update(operation=operation, status=status)
    doc.update({k: v for k, v in parts.items() if v is not None})
    return doc


def failed(operation: str, exc: E.RememError, request_id: str | None = None) -> dict[str, Any]:
    """A refused request as a ``failed`` response."""
    return envelope(operation, "failed", request_id, error=kip_error(exc))


def receipt(ref: str, operation: str, space_id: str, accepted_seq: int) -> dict[str, Any]:
    return {"receipt_ref": ref, "operation": operation, "space_id": space_id,
            "accepted_seq": accepted_seq}


def progress(ref: str, phase: str, *, disposition: str | None = None,
             resolved_seq: int | None = None, available_seq: int | None = None,
             reason: str | None = None) -> dict[str, Any]:
    """A schema-valid ``Progress``: recorded carries no sequence or disposition; processed and
    available carry theirs; failed carries an error built from ``reason``."""
    out: dict[str, Any] = {"receipt_ref": ref, "phase": phase}
    if phase in ("processed", "available"):
        out["disposition"] = disposition or "evidence_only"
        out["resolved_seq"] = resolved_seq if resolved_seq is not None else 0
    if phase == "available":
        out["available_seq"] = available_seq if available_seq is not None else out[
            "resolved_seq"]
    if phase == "failed":
        text = (reason or "processing failed")[:4000]
        out["reason"] = text
        out["error"] = {"code": "ProcessingFailed", "category": "system", "message": text}
    return out


def receipt_progress(rc: Any) -> dict[str, Any]:
    """The ``Progress`` of an intake ``Receipt``."""
    return progress(rc.receipt_id, rc.phase, disposition=rc.disposition,
                    resolved_seq=rc.resolved_seq, available_seq=rc.available_seq,
                    reason=rc.reason)


def mutation_status(phase: str) -> str:
    """succeeded only when available; failed when failed; else pending."""
    return {"available": "succeeded", "failed": "failed"}.get(phase, "pending")


def formation(summary: str, refs: list[str]) -> dict[str, Any]:
    """A ``FormationResult``."""
    return {"summary": summary[:4000] or "nothing formed",
            "memory_refs": list(dict.fromkeys(refs))[:128]}


def http_status(document: dict[str, Any]) -> int:
    """200 for any answered request; a failed response takes its remem error's HTTP status."""
    if document.get("status") != "failed" or "error" not in document:
        return 200
    code = document["error"].get("details", {}).get("remem_code")
    return _STATUS.get(code, 400)


def raise_for_failure(document: dict[str, Any]) -> dict[str, Any]:
    """The document, unless it is a ``failed`` response: then the remem error it reports
    (same class, message and details) is raised — for Python callers who prefer exceptions."""
    if document.get("status") != "failed" or "error" not in document:
        return document
    err = document["error"]
    details = dict(err.get("details") or {})
    code = details.pop("remem_code", None)
    details.pop("retryable", None)
    raise _CLASSES.get(code, E.RememError)(err["message"], **details)


def _classes(cls: type[E.RememError]) -> dict[str, type[E.RememError]]:
    out = {cls.code: cls}
    for sub in cls.__subclasses__():
        out.update(_classes(sub))
    return out


def _codes(cls: type[E.RememError]) -> dict[str, int]:
    out = {cls.code: cls.http_status}
    for sub in cls.__subclasses__():
        out.update(_codes(sub))
    return out


_STATUS = _codes(E.RememError)
_CLASSES = _classes(E.RememError)

__all__ = ["envelope", "failed", "formation", "http_status", "kip_error", "mutation_status",
           "progress", "raise_for_failure", "receipt", "receipt_progress"]
