"""``GET /memory/{memory_id}/export``: the memory as Log+Facts JSON Lines, streamed."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Query
from fastapi.responses import StreamingResponse

from remem.api.auth import Caller
from remem.api.routing import make_router

router = make_router(["memory"], prefix="/memory/{memory_id}")

NDJSON = "application/x-ndjson"


@router.get("/export", response_class=StreamingResponse, summary="Export (Log+Facts)",
            responses={200: {"description": "One Log+Facts 1.3.0 record per line.",
                             "content": {NDJSON: {"schema": {"type": "string"}}}}})
def export_log_facts(memory: Caller,
                     tenant: Annotated[str | None, Query(
                         min_length=1, max_length=128,
                         description="tenantId of every record (default: the memory's tenant).")] = None,
                     claim_key: Annotated[bool, Query(
                         description="With tombstones, carry the memory's claim key (false: "
                                     "an audit copy; its tombstones cannot block claims "
                                     "elsewhere).")] = True) -> Any:
    """Streams every log entry, fact and tombstone, each validated against the schema
    (owner or memory-wide admin; others get 403 before anything is sent)."""
    lines = memory.export_log_facts(tenant=tenant, claim_key=claim_key)  # the guard decides here, eagerly
    return StreamingResponse(lines, media_type=NDJSON)
