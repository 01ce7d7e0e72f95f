"""Items: list, remember, get, correct, history, forget, archive, restore, hold, retention,
and inspect of one key. Under ``/memory/{memory_id}``."""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import Query

from remem.api.auth import Caller
from remem.api.routing import make_router
from remem.api.schemas import (
    KEY_PATTERN,
    SCOPE_PATTERN,
    CorrectIn,
    ErasureReportOut,
    ForgetScopeIn,
    HistoryOut,
    HoldIn,
    HoldOut,
    InspectionOut,
    ItemOut,
    ItemStateOut,
    PageOut,
    RememberIn,
    RetentionIn,
    RetentionOut,
    UtcDatetime,
    WriteResultOut,
)
from remem.errors import InvalidInput

router = make_router(["items"], prefix="/memory/{memory_id}")
SCOPE_DOC = {"pattern": SCOPE_PATTERN}
KEY_DOC = {"pattern": KEY_PATTERN}

def _source(body: RememberIn | CorrectIn) -> dict[str, Any] | None:
    return body.source.model_dump(exclude_none=True) if body.source else None


@router.get("/items", response_model=PageOut, summary="List items")
def list_items(
    memory: Caller,
    scope: Annotated[str | None, Query(max_length=128, json_schema_extra=SCOPE_DOC,
                                       description="Default: the token's own scope (every "
                                       "scope for subject 'admin').")] = None,
    key: Annotated[str | None, Query(max_length=128, json_schema_extra=KEY_DOC)] = None,
    kind: Annotated[str | None, Query(max_length=32)] = None,
    status: Annotated[list[str] | None, Query(description="current, superseded, conflict, "
                                              "archived (repeatable) or all; default current "
                                              "and conflict.")] = None,
    cursor: Annotated[str | None, Query(max_length=1024)] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
    filters: Annotated[str | None, Query(max_length=8192, description="A JSON filter object "
                                         "(the recall body's 'filters'), e.g. "
                                         '{"metadata": {"app": "crm"}}.')] = None,
    now: Annotated[UtcDatetime | None, Query(description="Relative filter times resolve "
                                             "against it (default: the server clock).")] = None,
) -> Any:
    """Items of visible scopes, ordered by id; follow ``next_cursor`` until it is null.
    ``total`` counts every matching item."""
    wanted: Any = "all" if status == ["all"] else status
    page = memory.items(scope=scope, key=key, kind=kind, status=wanted, cursor=cursor,
                        limit=limit, filters=_json_filters(filters), now=now)
    return page.to_dict()


def _json_filters(text: str | None) -> Any:
    """The ``filters`` query parameter parsed as JSON (400 invalid_input when it is not)."""
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise InvalidInput("filters is not JSON; send an object such as "
                           '{"metadata": {"app": "crm"}}.', field="filters") from exc


@router.post("/items", response_model=WriteResultOut, summary="Remember")
def remember(body: RememberIn, memory: Caller) -> Any:
    """States a value of a key in a scope the token may write."""
    result = memory.remember(
        body.scope, body.key, body.value, kind=body.kind, valid_at=body.valid_at,
        valid_until=body.valid_until, source=_source(body),
        idempotency_key=body.idempotency_key, metadata=body.metadata,
        cached_source=body.cached_source.to_schema() if body.cached_source else None,
        priority=body.priority)
    return result.to_dict()


@router.get("/items/{item_id}", response_model=ItemOut, summary="Get an item")
def get_item(item_id: str, memory: Caller) -> Any:
    return memory.get(item_id).to_dict()


@router.put("/items/{item_id}", response_model=WriteResultOut, summary="Correct an item")
def correct_item(item_id: str, body: CorrectIn, memory: Caller) -> Any:
    """Corrects the item's key (the old value was never true) at ``expected_revision``."""
    result = memory.correct_item(
        item_id, body.value, expected_revision=body.expected_revision, kind=body.kind,
        source=_source(body), idempotency_key=body.idempotency_key, metadata=body.metadata)
    return result.to_dict()


@router.get("/items/{item_id}/history", response_model=HistoryOut, summary="Item history")
def item_history(item_id: str, memory: Caller) -> Any:
    """The item, its key's versions, provenance and the ledger events naming it."""
    return memory.history(item_id)


@router.post("/items/{item_id}/forget", response_model=ErasureReportOut, summary="Forget")
def forget_item(item_id: str, memory: Caller) -> Any:
    """Erases the item and every copy of its claim; returns the erasure report."""
    return memory.forget(item_id).to_dict()


@router.post("/forget-scope", response_model=ErasureReportOut, summary="Forget a whole scope")
def forget_scope(body: ForgetScopeIn, memory: Caller) -> Any:
    """Erases every item and source of one scope (owner/admin, or the scope's own writer);
    409 legal_hold_active when items are held (nothing erased)."""
    return memory.forget_scope(body.scope).to_dict()


@router.post("/items/{item_id}/archive", response_model=ItemStateOut, summary="Archive")
def archive_item(item_id: str, memory: Caller) -> Any:
    return memory.archive(item_id)


@router.post("/items/{item_id}/restore", response_model=ItemStateOut, summary="Restore")
def restore_item(item_id: str, memory: Caller) -> Any:
    return memory.restore(item_id)


@router.post("/items/{item_id}/hold", response_model=HoldOut, summary="Set a legal hold")
def hold_item(item_id: str, memory: Caller, body: HoldIn | None = None) -> Any:
    """Sets (``hold: true``, the default) or releases a legal hold; admin role."""
    return memory.set_legal_hold(item_id, body.hold if body else True)


@router.post("/items/{item_id}/hold/release", response_model=HoldOut,
             summary="Release a legal hold")
def release_hold(item_id: str, memory: Caller) -> Any:
    """Releases the item's legal hold (admin role; 403 otherwise)."""
    return memory.release_hold(item_id)


@router.post("/items/{item_id}/retention", response_model=RetentionOut,
             summary="Set retention")
def retain_item(item_id: str, body: RetentionIn, memory: Caller) -> Any:
    return memory.set_retention(item_id, keep_until=body.keep_until,
                                keep_days=body.keep_days)


@router.get("/inspect", response_model=InspectionOut, summary="Inspect a key")
def inspect_key(memory: Caller,
                scope: Annotated[str, Query(max_length=128, json_schema_extra=SCOPE_DOC)],
                key: Annotated[str, Query(max_length=128, json_schema_extra=KEY_DOC)]) -> Any:
    """Current value, revision, state, history and open conflicts of one key."""
    return memory.inspect(scope, key).to_dict()
