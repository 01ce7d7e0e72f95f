"""Conflict groups: list and resolve. Under ``/memory/{memory_id}``."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Query

from remem.api.auth import Caller
from remem.api.routing import make_router
from remem.api.schemas import SCOPE_PATTERN, ConflictGroupOut, ResolveIn, ResolveOut

router = make_router(["conflicts"], prefix="/memory/{memory_id}")


@router.get("/conflicts", response_model=list[ConflictGroupOut], summary="Open conflicts")
def list_conflicts(memory: Caller,
                   scope: Annotated[str | None, Query(
                       max_length=128, json_schema_extra={"pattern": SCOPE_PATTERN})] = None
                   ) -> Any:
    """Open conflict groups of one visible scope (default: the token's own)."""
    return memory.conflicts(scope)


@router.post("/conflicts/{group_id}/resolve", response_model=ResolveOut,
             summary="Resolve a conflict")
def resolve_conflict(group_id: str, body: ResolveIn, memory: Caller) -> Any:
    """Keeps one item of the group current; the others are superseded by it (admin role)."""
    return memory.resolve_conflict(group_id, body.keep)
