"""Facts as the Log+Facts schema states them: remember one, read its schema record, read its
full content (blob included). Under ``/memory/{memory_id}``.

``POST /facts`` takes bodies up to the blob limit (``LARGE_BODIES``: the app's body-size
middleware lets this one route through with more than the usual 64 KiB).
"""

from __future__ import annotations

from typing import Any

from fastapi.responses import JSONResponse

from remem.api.auth import Caller
from remem.api.routing import make_router
from remem.api.schemas import WriteResultOut
from remem.api.schemas_facts import FactContentOut, FactIn, FactOut
from remem.domain.limits import MAX_BLOB_BYTES

router = make_router(["items"], prefix="/memory/{memory_id}")

#: (method, path regex, max body bytes): the content limit plus room for the JSON around it.
LARGE_BODIES = [("POST", r"/memory/[^/]+/facts", MAX_BLOB_BYTES + 1024 * 1024)]


@router.post("/facts", response_model=WriteResultOut, summary="Remember a fact")
def remember_fact(body: FactIn, memory: Caller) -> Any:
    """States a schema Fact in a scope the token may write: a pack-defined ``type``,
    ``retention`` {keepUntil | keepDays, legalHold (admin)}, content up to 64 KB inline and
    up to 64 MiB in the blob store. Bad input is 400/422 and writes nothing."""
    result = memory.remember_fact(
        body.scope, body.key, body.content, type=body.type, kind=body.kind,
        retention=body.retention.to_service() if body.retention else None,
        source=body.source.model_dump(exclude_none=True) if body.source else None,
        cached_source=body.cached_source.to_schema() if body.cached_source else None,
        valid_at=body.valid_at, idempotency_key=body.idempotency_key, metadata=body.metadata)
    return result.to_dict()


@router.get("/facts/{item_id}", response_model=FactOut, summary="A fact's schema record")
def get_fact(item_id: str, memory: Caller) -> Any:
    """The item as a schema Fact record (``$defs/Fact`` of the shared schema), exactly."""
    return JSONResponse(memory.fact(item_id))


@router.get("/facts/{item_id}/content", response_model=FactContentOut,
            summary="A fact's full content")
def fact_content(item_id: str, memory: Caller) -> Any:
    """The fact's whole content value, read from its blob when it has one."""
    return {"item_id": item_id, "content": memory.fact_content(item_id)}
