"""Memory admin (``/memories``) and tokens (``/memory/{memory_id}/tokens``).

An admin token with subject 'admin' manages its own memory: it may create the memory it is
bound to (tokens can be created before their memory), read and replace its config, delete
it (which also deletes its tokens), and create, list and revoke its tokens.
"""

from __future__ import annotations

from typing import Any

from fastapi import Body, Request

from remem.api.auth import Authenticated, Caller, MemoryId
from remem.api.routing import make_router
from remem.api.schemas import (
    MemoryCreateIn,
    MemoryDeletedOut,
    MemoryOut,
    TokenCreatedOut,
    TokenCreateIn,
    TokenOut,
)

router = make_router(["admin"])


@router.post("/memories", response_model=MemoryOut, status_code=201, summary="Create memory")
def create_memory(body: MemoryCreateIn, principal: Authenticated, request: Request) -> Any:
    """Creates the memory the admin token is bound to (config checked by its JSON Schema)."""
    memory = request.app.state.store.create_memory(body.memory_id, body.config,
                                                   principal=principal,
                                                   tenant_id=body.tenant_id)
    return {"memory_id": memory.id, "config": memory.config,
            "tenant_id": memory.ctx.tenant_id}


@router.get("/memories/{memory_id}", response_model=MemoryOut, summary="Get memory config")
def get_memory(memory_id: MemoryId, memory: Caller) -> Any:
    return {"memory_id": memory.id, "config": memory.memory_config(),
            "tenant_id": memory.ctx.tenant_id}


@router.put("/memories/{memory_id}/config", response_model=MemoryOut,
            summary="Replace memory config")
def update_config(memory_id: MemoryId, memory: Caller,
                  config: dict[str, Any] = Body(description="The whole new config.")) -> Any:
    return {"memory_id": memory_id, "config": memory.replace_config(config),
            "tenant_id": memory.ctx.tenant_id}


@router.delete("/memories/{memory_id}", response_model=MemoryDeletedOut,
               summary="Delete memory")
def delete_memory(memory_id: MemoryId, memory: Caller) -> Any:
    """Purges the memory's ledger and every row, its tokens included."""
    rows = memory.delete()
    return {"memory_id": memory_id, "deleted": True, "rows": rows}


@router.post("/memory/{memory_id}/tokens", response_model=TokenCreatedOut, status_code=201,
             summary="Create a token")
def create_token(memory_id: MemoryId, body: TokenCreateIn, memory: Caller) -> Any:
    """Creates a token of this memory; the response holds the token, shown once."""
    token, info = memory.create_token(body.role, body.subject, body.label)
    return {**info.to_dict(), "token": token}


@router.get("/memory/{memory_id}/tokens", response_model=list[TokenOut], summary="List tokens")
def list_tokens(memory_id: MemoryId, memory: Caller) -> Any:
    return [t.to_dict() for t in memory.list_tokens()]


@router.delete("/memory/{memory_id}/tokens/{token_id}", response_model=TokenOut,
               summary="Revoke a token")
def revoke_token(memory_id: MemoryId, token_id: str, memory: Caller) -> Any:
    return memory.revoke_token(token_id).to_dict()
