"""The KIP 2.0 Memory Interface over HTTP. Under ``/memory/{memory_id}``.

``POST /kip`` answers every KIP request with the schema's response document: HTTP 200 when
the request was answered (succeeded, pending or partial), and the remem error's 4xx status
with a ``failed`` KIP response (``error: {code, category, message, details}``) when it was
refused. A body that names no KIP operation gets the API's one error shape.
``GET /kip/descriptor`` is the binding's descriptor; ``POST /kip/sources`` stages a source.
"""

from __future__ import annotations

from typing import Any

from fastapi import Body
from fastapi.responses import JSONResponse

from remem.api.auth import Caller
from remem.api.routing import make_router
from remem.api.schemas import StageSourceIn
from remem.service.kip_responses import http_status

router = make_router(["kip"], prefix="/memory/{memory_id}")


@router.post("/kip", summary="KIP 2.0 Memory Interface")
def kip(memory: Caller, request: dict[str, Any] = Body(...)) -> Any:  # noqa: B008
    """One KIP request (observe, recall, revise, feedback, forget); see ``service.kip``.

    The service checks the request against the KIP schema, types it, then authorises the
    parsed task and context scopes, ``after`` receipts, sources and targets for the token.
    """
    document = memory.kip(request)
    return JSONResponse(document, status_code=http_status(document))


@router.get("/kip/descriptor", summary="KIP descriptor")
def descriptor(memory: Caller) -> Any:
    """Bundles, default budget, tokenizer, minimum_response_tokens, default space/scope."""
    return memory.kip_descriptor()


@router.post("/kip/sources", status_code=201, summary="Stage a source for KIP")
def stage_source(body: StageSourceIn, memory: Caller) -> Any:
    """Stages a host-captured source (exact text, identity, digest, role, actor, time) that
    KIP observe, revise and feedback then name by ``source_ref``."""
    return memory.stage_source(body.scope, body.text, source_ref=body.source_ref,
                               digest=body.digest, role=body.role, actor=body.actor,
                               occurred_at=body.occurred_at, kind=body.kind,
                               run_id=body.run_id, payload=body.payload,
                               caused_by_log_id=body.caused_by_log_id)


__all__ = ["router"]
