"""Memory-wide routes under ``/memory/{memory_id}``: status and apply (instantKV)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Query, Request

from remem.api.auth import Caller
from remem.api.routing import make_router
from remem.api.schemas import APPLY_BODY_SCHEMA, ApplyOut, ScheduledJobOut, StatusOut
from remem.service.apply import apply_document

router = make_router(["memory"], prefix="/memory/{memory_id}")


async def raw_body(request: Request) -> bytes:
    """The request body as bytes (already size-limited by the BodyLimit middleware)."""
    return await request.body()


_APPLY_SCHEMA = {"requestBody": {"required": True, "content": {
    "application/json": {"schema": APPLY_BODY_SCHEMA}}}}


@router.get("/status", response_model=StatusOut, summary="Memory status")
def memory_status(memory: Caller) -> Any:
    """Ledger head and item counts per status (memory-wide: subject 'admin' only)."""
    return memory.status()


@router.post("/apply", response_model=ApplyOut, summary="Apply instantKV proposals",
             response_model_exclude_unset=True,
             openapi_extra=_APPLY_SCHEMA)
def apply(memory: Caller, body: Annotated[bytes, Depends(raw_body)],
          scope: Annotated[str | None, Query(max_length=128, description="Scope of entity "
                                             "'user'/'self' (default: the token's own).")]
          = None) -> Any:
    """Validates every proposal and checks every scope is writable, then applies each."""
    return apply_document(memory, body, default_scope=scope)


@router.post("/resummarize", response_model=ScheduledJobOut, status_code=202,
             summary="Bring consolidation forward")
def resummarize(memory: Caller) -> Any:
    """Maintenance: the memory's consolidation becomes due now (a worker runs it)."""
    return memory.resummarize()
