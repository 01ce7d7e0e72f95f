"""instantKV slots for the drop-in CLI's remote mode (``remem --url``). Under
``/memory/{memory_id}/slots``; shapes in ``remem.service.slots``.

``scope`` is the scope the entity ``user`` names (default: the token's own scope).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Query
from pydantic import BaseModel, ConfigDict, Field, StrictInt

from remem.api.auth import Caller
from remem.api.routing import make_router
from remem.api.schemas import MAX_REVISION, ErasureReportOut

router = make_router(["memory"], prefix="/memory/{memory_id}/slots")

ScopeQuery = Annotated[str | None, Query(max_length=128, description="Scope of entity "
                                         "'user' (default: the token's own).")]
Name = Annotated[str, Field(min_length=1, max_length=128)]


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Out(BaseModel):
    model_config = ConfigDict(extra="allow")


class SlotContextIn(_In):
    query: str = Field(min_length=1, max_length=16_384)
    max_bytes: int = Field(default=8192, ge=128, le=65_536)
    scope: str | None = Field(default=None, max_length=128)


class SlotForgetIn(_In):
    expected_revision: StrictInt = Field(ge=0, le=MAX_REVISION)
    scope: str | None = Field(default=None, max_length=128)


class SlotItemOut(_Out):
    key: str
    revision: int
    entity: str
    attribute: str
    value: Any = None
    kind: str
    source: dict[str, Any] | None = None
    valid_until_ms: int | None = None


class SlotItemsOut(_Out):
    items: list[SlotItemOut]
    truncated: bool


class SlotInspectionOut(_Out):
    key: str
    revision: int
    scope: str
    entity: str
    attribute: str
    state: str = Field(examples=["current"])
    value: Any = None
    kind: str | None = None
    source: dict[str, Any] | None = None
    valid_until_ms: int | None = None
    history: list[dict[str, Any]]
    conflicts: list[dict[str, Any]]
    expired: bool


class SlotForgetOut(_Out):
    status: str = Field(examples=["forgotten"])
    key: str
    erasure: ErasureReportOut


@router.get("", response_model=SlotItemsOut, summary="instantKV profile")
def slot_profile(memory: Caller, scope: ScopeQuery = None,
                 max_bytes: Annotated[int, Query(ge=128, le=65_536)] = 8192) -> Any:
    """Every live slot of the scope within ``max_bytes`` (forgotten, expired and conflicted
    slots left out)."""
    return memory.slot_profile(default_scope=scope, max_bytes=max_bytes)


@router.post("/context", response_model=SlotItemsOut, summary="instantKV context")
def slot_context(body: SlotContextIn, memory: Caller) -> Any:
    """Live slots relevant to ``query`` within ``max_bytes``."""
    return memory.slot_context(body.query, default_scope=body.scope,
                               max_bytes=body.max_bytes)


@router.get("/{entity}/{attribute}", response_model=SlotInspectionOut,
            summary="instantKV inspect")
def slot_inspect(entity: str, attribute: str, memory: Caller, scope: ScopeQuery = None) -> Any:
    """One slot: value, revision, state, history, conflicts, expiry."""
    return memory.slot_inspect(entity, attribute, default_scope=scope)


@router.post("/{entity}/{attribute}/forget", response_model=SlotForgetOut,
             summary="instantKV forget")
def slot_forget(entity: str, attribute: str, body: SlotForgetIn, memory: Caller) -> Any:
    """Forgets one slot at ``expected_revision``; ``status`` forgotten plus the erasure
    report."""
    return memory.slot_forget(entity, attribute, expected_revision=body.expected_revision,
                              default_scope=body.scope)
