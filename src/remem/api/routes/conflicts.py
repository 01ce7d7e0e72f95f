"""Conflict groups: list and resolve. Under ``/memory/{memory_id}``."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Query

from remem.api.auth import Admin, Reader
from remem.api.routing import make_router
from remem.api.schemas import SCOPE_PATTERN, ConflictGroupOut, ResolveIn, ResolveOut
from remem.errors import NotFoundOrNotVisible

router = make_router(["conflicts"], prefix="/memory/{memory_id}")


@router.get("/conflicts", response_model=list[ConflictGroupOut], summary="Open conflicts")
def list_conflicts(access: Reader,
                   scope: Annotated[str | None, Query(
                       max_length=128, json_schema_extra={"pattern": SCOPE_PATTERN})] = None
                   ) -> Any:
    """Open conflict groups of one visible scope (default: the token's own)."""
    groups = access.memory.conflicts(access.listing_scope(scope))
    return [g for g in groups if access.principal.can_read(g["scope"])]


@router.post("/conflicts/{group_id}/resolve", response_model=ResolveOut,
             summary="Resolve a conflict")
def resolve_conflict(group_id: str, body: ResolveIn, access: Admin) -> Any:
    """Keeps one item of the group current; the others are superseded by it (admin role)."""
    hidden = NotFoundOrNotVisible(
        f"Conflict group {group_id!r} was not found, is not visible to this token, or does "
        f"not contain item {body.keep!r}.", group_id=group_id, keep=body.keep)
    try:
        item = access.item(body.keep)
    except NotFoundOrNotVisible:
        raise hidden from None
    if item.conflict_group != group_id:
        raise hidden
    access.principal.require_write(item.scope)
    return access.memory.resolve_conflict(group_id, body.keep, actor=access.actor)
