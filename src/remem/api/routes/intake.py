"""Receipts and runs (the KIP binding is in ``routes.kip``). Under ``/memory/{memory_id}``."""

from __future__ import annotations

from typing import Any

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


__all__ = ["router"]
