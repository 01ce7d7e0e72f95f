"""Receipts and runs (the KIP binding is in ``routes.kip``). Under ``/memory/{memory_id}``."""

from __future__ import annotations

from typing import Any

from remem.api.auth import Caller
from remem.api.routing import make_router
from remem.api.schemas import ObserveManyIn, ObserveManyOut

router = make_router(["intake"], prefix="/memory/{memory_id}")


@router.get("/receipts/{receipt_id}", summary="Receipt progress")
def receipt(receipt_id: str, memory: Caller) -> Any:
    """Current phase of an intake: recorded, processed, available or failed (with reason)."""
    return memory.receipt(receipt_id).to_dict()


@router.get("/runs", summary="Job runs")
def runs(memory: Caller, limit: int = 50) -> Any:
    """Recent derive/consolidation runs with status and failure reason (memory admin)."""
    return {"runs": memory.runs(min(max(limit, 1), 500))}


@router.post("/observe_many", response_model=ObserveManyOut, status_code=202,
             summary="Observe a batch")
def observe_many(body: ObserveManyIn, memory: Caller) -> Any:
    """Records up to 256 turns of one scope in one transaction (one embedding call) and
    returns one receipt per turn, in order; an invalid turn records none of them."""
    turns = [t.model_dump(exclude_none=True) for t in body.turns]
    receipts = memory.observe_many(body.scope, turns, run_id=body.run_id)
    return {"receipts": [r.to_dict() for r in receipts]}


__all__ = ["router"]
