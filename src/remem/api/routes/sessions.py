"""KickSide session lifecycle and the queryable contract. Under ``/memory/{memory_id}``.

``POST /deactivate`` ends a host session: its last turns (if sent) are captured and the
memory's consolidation is brought forward. ``POST /query`` returns current items of the
scopes nearest a text, each with ``meta.node_type``, ``meta.similarity`` and
``meta.created_at``. Both parse the body into a typed model and call one ``Memory`` method,
which checks the principal.
"""

from __future__ import annotations

from typing import Any

from remem.api.auth import Caller
from remem.api.routing import make_router
from remem.api.schemas_sessions import DeactivateIn, DeactivateOut, QueryIn, QueryOut

router = make_router(["memory"], prefix="/memory/{memory_id}")


@router.post("/deactivate", response_model=DeactivateOut, status_code=202,
             summary="End a session")
def deactivate(body: DeactivateIn, memory: Caller) -> Any:
    """Captures the session's last turns (writer of ``scope``) and brings consolidation
    forward (a worker runs it)."""
    turns = [t.model_dump(exclude_none=True, mode="json") for t in body.turns or []]
    return memory.deactivate(body.scope, body.host_kind, body.host_id, turns or None,
                             expected_position=body.expected_position)


@router.post("/query", response_model=QueryOut, summary="Query items (queryable)")
def query(body: QueryIn, memory: Caller) -> Any:
    """Current items of readable ``scopes`` nearest ``text`` by vector, best first."""
    return {"results": memory.query(body.scopes, body.text, limit=body.limit)}
