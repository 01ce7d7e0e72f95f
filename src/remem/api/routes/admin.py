"""Memory admin (``/memories``) and tokens (``/memory/{memory_id}/tokens``).

An admin token with subject 'admin' manages its own memory: it may create the memory it is
bound to (tokens can be created before their memory), read and replace its config, delete
it (which also deletes its tokens), and create, list and revoke its tokens.
"""

from __future__ import annotations

from typing import Any

from fastapi import Body, Request

from remem.api.auth import Authenticated, MemoryAdmin, MemoryId
from remem.api.routing import make_router
from remem.api.schemas import (
    MemoryCreateIn,
    MemoryDeletedOut,
    MemoryOut,
    TokenCreatedOut,
    TokenCreateIn,
    TokenOut,
)
from remem.errors import PermissionDenied

router = make_router(["admin"])


@router.post("/memories", response_model=MemoryOut, status_code=201, summary="Create memory")
def create_memory(body: MemoryCreateIn, principal: Authenticated, request: Request) -> Any:
    """Creates the memory the admin token is bound to (config checked by its JSON Schema)."""
    principal.require_memory_admin("create a memory")
    if body.memory_id != principal.memory_id:
        raise PermissionDenied(f"This token is bound to another memory; it may create only "
                               f"its own, not {body.memory_id!r}.", memory=body.memory_id)
    memory = request.app.state.store.create_memory(body.memory_id, body.config)
    return {"memory_id": memory.id, "config": memory.config}


@router.get("/memories/{memory_id}", response_model=MemoryOut, summary="Get memory config")
def get_memory(memory_id: MemoryId, access: MemoryAdmin) -> Any:
    return {"memory_id": access.memory.id, "config": access.memory.config}


@router.put("/memories/{memory_id}/config", response_model=MemoryOut,
            summary="Replace memory config")
def update_config(memory_id: MemoryId, access: MemoryAdmin, request: Request,
                  config: dict[str, Any] = Body(description="The whole new config.")) -> Any:
    request.app.state.store.update_config(memory_id, config)
    return {"memory_id": memory_id, "config": request.app.state.store.memory(memory_id).config}


@router.delete("/memories/{memory_id}", response_model=MemoryDeletedOut,
               summary="Delete memory")
def delete_memory(memory_id: MemoryId, access: MemoryAdmin, request: Request) -> Any:
    """Purges the memory's ledger and every row, its tokens included."""
    rows = request.app.state.store.delete_memory(memory_id)
    return {"memory_id": memory_id, "deleted": True, "rows": rows}


@router.post("/memory/{memory_id}/tokens", response_model=TokenCreatedOut, status_code=201,
             summary="Create a token")
def create_token(memory_id: MemoryId, body: TokenCreateIn, access: MemoryAdmin,
                 request: Request) -> Any:
    """Creates a token of this memory; the response holds the token, shown once."""
    token, info = request.app.state.tokens.create(memory_id, body.role, body.subject,
                                                  body.label)
    return {**info.to_dict(), "token": token}


@router.get("/memory/{memory_id}/tokens", response_model=list[TokenOut], summary="List tokens")
def list_tokens(memory_id: MemoryId, access: MemoryAdmin, request: Request) -> Any:
    return [t.to_dict() for t in request.app.state.tokens.list(memory_id)]


@router.delete("/memory/{memory_id}/tokens/{token_id}", response_model=TokenOut,
               summary="Revoke a token")
def revoke_token(memory_id: MemoryId, token_id: str, access: MemoryAdmin,
                 request: Request) -> Any:
    return request.app.state.tokens.revoke(token_id, memory_id=memory_id).to_dict()
