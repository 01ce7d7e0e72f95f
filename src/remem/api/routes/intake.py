"""Receipts, runs and the KIP 2.0 binding. Under ``/memory/{memory_id}``."""

from __future__ import annotations

from typing import Any

from fastapi import Body

from remem.api.auth import Caller
from remem.api.routing import make_router

router = make_router(["intake"], prefix="/memory/{memory_id}")


@router.get("/receipts/{receipt_id}", summary="Receipt progress")
def receipt(receipt_id: str, memory: Caller) -> Any:
    """Current phase of an intake: recorded, processed, available or failed (with reason)."""
    return memory.receipt(receipt_id).to_dict()


@router.get("/runs", summary="Job runs")
def runs(memory: Caller, limit: int = 50) -> Any:
    """Recent derive/consolidation runs with status and failure reason (memory admin)."""
    return {"runs": memory.runs(min(max(limit, 1), 500))}


@router.post("/kip", summary="KIP 2.0 Memory Interface")
def kip(memory: Caller, request: dict[str, Any] = Body(...)) -> Any:  # noqa: B008
    """One KIP request (observe, recall, revise, feedback, forget); see ``service.kip``.

    The service parses the request into typed models, then authorises the parsed task and
    context scopes, ``after`` receipts and forget targets for the token's principal.
    """
    return memory.kip(request)


__all__ = ["router"]
