"""Observe, recall, context and profile. Under ``/memory/{memory_id}``.

Budgeted results are sent as the exact serialisation the service measured, so the bytes on
the wire are the ones that fit the budget (and a pinned profile is byte-identical).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Query
from fastapi.responses import Response

from remem.api.auth import Caller
from remem.api.routing import make_router
from remem.api.schemas import (
    ContextIn,
    ContextOut,
    ObserveIn,
    ProfileOut,
    ReceiptOut,
    RecallIn,
    RecallOut,
)

router = make_router(["recall"], prefix="/memory/{memory_id}")


def _measured(result: Any) -> Response:
    return Response(content=result.to_json().encode("utf-8"), media_type="application/json")


@router.post("/observe", response_model=ReceiptOut, status_code=202, summary="Observe")
def observe(body: ObserveIn, memory: Caller) -> Any:
    """Records a captured input (a source) durably and returns its receipt."""
    receipt = memory.observe(
        body.scope, body.text, role=body.role, source_id=body.source_id, run_id=body.run_id,
        occurred_at=body.occurred_at, kind=body.kind, idempotency_key=body.idempotency_key,
        metadata=body.metadata, payload=body.payload, caused_by_log_id=body.caused_by_log_id,
        priority=body.priority)
    return receipt.to_dict()


@router.post("/recall", response_model=RecallOut, summary="Recall",
             response_class=Response, responses={200: {"model": RecallOut,
                                                       "content": {"application/json": {}}}})
def recall(body: RecallIn, memory: Caller) -> Response:
    """Hybrid recall over visible scopes, rendered within ``budget_tokens``."""
    result = memory.recall(
        body.scopes, body.query, budget_tokens=body.budget_tokens,
        tokenizer=body.tokenizer, valid_at=body.valid_at, kinds=body.kinds,
        include_history=body.include_history, limit=body.limit,
        after=body.after, deadline_ms=body.deadline_ms, mode=body.mode, filters=body.filters,
        now=body.now)
    return _measured(result)


@router.post("/context", response_model=ContextOut, summary="Context (byte budget)",
             response_class=Response, responses={200: {"model": ContextOut,
                                                       "content": {"application/json": {}}}})
def context(body: ContextIn, memory: Caller) -> Response:
    """Relevant items within ``max_bytes`` UTF-8 bytes (instantKV context)."""
    result = memory.context(body.scopes, body.query,
                                   max_bytes=body.max_bytes, kinds=body.kinds,
                                   valid_at=body.valid_at, mode=body.mode,
                                   filters=body.filters, now=body.now)
    return _measured(result)


@router.get("/profile", response_model=ProfileOut, summary="Pinned profile",
            response_class=Response, responses={200: {"model": ProfileOut,
                                                      "content": {"application/json": {}}}})
def profile(
    memory: Caller,
    scopes: Annotated[list[str], Query(min_length=1, max_length=16,
                                       description="Repeat for each scope.")],
    budget_tokens: Annotated[int | None, Query(ge=1, le=1_000_000)] = None,
    max_bytes: Annotated[int | None, Query(ge=1, le=1_000_000)] = None,
    tokenizer: Annotated[str, Query(max_length=64)] = "o200k_base",
    activation_id: Annotated[str | None, Query(max_length=128)] = None,
) -> Response:
    """Identity, rules, profile slots and preferences; byte-identical per activation."""
    result = memory.profile(scopes, budget_tokens=budget_tokens,
                                   max_bytes=max_bytes, tokenizer=tokenizer,
                                   activation_id=activation_id)
    return _measured(result)
