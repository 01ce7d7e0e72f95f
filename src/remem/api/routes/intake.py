"""Receipts, runs and the KIP 2.0 binding. Under ``/memory/{memory_id}``."""

from __future__ import annotations

from typing import Any

from fastapi import Body

from remem.api.auth import Access, Admin, Reader, Writer  # noqa: F401
from remem.api.routing import make_router
from remem.errors import NotFoundOrNotVisible

router = make_router(["intake"], prefix="/memory/{memory_id}")


def _visible_receipt(access: Access, receipt_id: str) -> dict[str, Any]:
    """A receipt of this memory in a scope the principal reads; else the neutral 404."""
    r = access.memory.receipt(receipt_id)
    if not access.principal.can_read(r.scope):
        raise NotFoundOrNotVisible(f"No receipt {receipt_id!r} visible here.",
                                   receipt_id=receipt_id)
    return r.to_dict()


@router.get("/receipts/{receipt_id}", summary="Receipt progress")
def receipt(receipt_id: str, access: Reader) -> Any:
    """Current phase of an intake: recorded, processed, available or failed (with reason)."""
    return _visible_receipt(access, receipt_id)


@router.get("/runs", summary="Job runs")
def runs(access: Admin, limit: int = 50) -> Any:
    """Recent derive/consolidation runs with status and failure reason."""
    access.principal.require_memory_admin("list runs")
    return {"runs": access.memory.runs(min(max(limit, 1), 500))}


@router.post("/kip", summary="KIP 2.0 Memory Interface")
def kip(access: Reader, request: dict[str, Any] = Body(...)) -> Any:  # noqa: B008
    """One KIP request (observe, recall, revise, feedback, forget); see ``service.kip``.

    The task scope must be readable by the principal (recall) or writable (mutations); the
    receipts named in ``after`` must be visible.
    """
    op = request.get("operation") if isinstance(request, dict) else None
    scope = ((request.get("scope") or {}).get("task_ref")
             if isinstance(request, dict) and isinstance(request.get("scope"), dict) else None)
    if isinstance(scope, str):
        if op == "recall":
            access.principal.require_read(scope)
            ctx = (request.get("scope") or {}).get("context_refs") or []
            for c in ctx if isinstance(ctx, list) else []:
                access.principal.require_read(c)
            for rid in (request.get("input") or {}).get("after") or []:
                _visible_receipt(access, rid)
        else:
            access.principal.require_write(scope)  # writer role and own scope
    return access.memory.kip(request)


__all__ = ["router", "Writer"]
