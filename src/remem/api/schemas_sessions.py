"""Request and response models of the KickSide session routes (``api/routes/sessions.py``):
deactivate a host session, and the queryable contract. Unknown request fields are 422."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from remem.api.schemas import (
    MAX_SOURCE_ID_BYTES,
    Scopes,
    ScopeStr,
    UtcDatetime,
    _In,
    _Out,
)


# --- KickSide: session deactivate and the queryable contract -------------------------------
class CapturedTurnIn(_In):
    """One persisted turn of a host conversation (its ``id`` is the host's message id)."""

    id: str = Field(min_length=1, max_length=MAX_SOURCE_ID_BYTES)
    role: str = Field(max_length=32, examples=["user"])
    text: str = Field(min_length=1, max_length=16_384)
    occurred_at: UtcDatetime | None = None


class DeactivateIn(_In):
    """A host session ends: its last turns (optional) are captured and the memory's
    consolidation is brought forward."""

    scope: str = ScopeStr
    host_id: str = Field(min_length=1, max_length=512, description="The host's conversation "
                         "(session) id: the capture cursor's name.")
    host_kind: str = Field(default="chat", min_length=1, max_length=128)
    turns: list[CapturedTurnIn] | None = Field(default=None, max_length=256,
                                       description="The conversation's tail, oldest first; "
                                       "turns past the cursor are captured.")
    expected_position: int | None = Field(default=None, ge=0,
                                          description="The capture cursor last seen "
                                          "(compare-and-set).")


class ConsolidationOut(_Out):
    """The memory's consolidation, brought forward. ``job_id`` only for a memory-wide
    caller: a scoped writer is not given the memory's job ids."""

    kind: str
    run_at: str
    job_id: str | None = None


class DeactivateOut(_Out):
    captured: dict[str, Any] | None
    consolidation: ConsolidationOut


class QueryIn(_In):
    scopes: list[str] = Scopes
    text: str = Field(min_length=1, max_length=16_384)
    limit: int = Field(default=10, ge=1, le=100)


class QueryMetaOut(_Out):
    node_type: str = Field(description="The item's kind.")
    similarity: float = Field(description="Cosine of the query and the item's text (4 places).")
    created_at: str = Field(description="When the item was written (ISO-8601 UTC).")


class QueryResultOut(_Out):
    id: str
    scope: str
    key: str
    value: Any
    kind: str
    valid_at: str
    meta: QueryMetaOut


class QueryOut(_Out):
    """Current items of the scopes nearest the text, best first (KickSide ``queryable``)."""

    results: list[QueryResultOut]
