"""Kind-B cached facts: refresh one now, read its Source block. Under ``/memory/{memory_id}``.

Remembering a cached fact is ``POST /items`` with ``cached_source`` (routes/items.py).
"""

from __future__ import annotations

from typing import Any

from remem.api.auth import Caller
from remem.api.routing import make_router
from remem.api.schemas import RefreshOut

router = make_router(["items"], prefix="/memory/{memory_id}")


@router.post("/items/{item_id}/refresh", response_model=RefreshOut,
             summary="Refresh a cached fact")
def refresh_item(item_id: str, memory: Caller) -> Any:
    """Asks the cached fact's source now (any strategy; ``manual`` facts refresh only so).
    A new value supersedes the item through the decision; a failure labels it stale."""
    return memory.refresh(item_id)


@router.get("/items/{item_id}/cached-source", summary="A cached fact's Source block")
def cached_source(item_id: str, memory: Caller) -> Any:
    """The Source block in the Log+Facts shape plus ``stale`` and ``stale_reason``; null
    when the item is not a cached fact."""
    return memory.cached_source(item_id)
