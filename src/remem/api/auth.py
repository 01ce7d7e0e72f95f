"""Authentication and per-memory, per-scope access for route handlers.

Handlers take one of the ``Reader``/``Writer``/``Admin``/``MemoryAdmin`` dependencies: each
authenticates the bearer token (401), binds it to the memory in the path (a token of another
memory, or a memory that does not exist, gives the same existence-neutral 404), and checks
the role (403). ``Access.item`` returns an item only when its scope is visible; a missing
item and an invisible one give the same 404 body.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, Path, Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from remem.errors import NotFound, NotFoundOrNotVisible
from remem.service.memory import Memory
from remem.service.results import ItemView
from remem.service.tokens import Principal, Role

bearer = HTTPBearer(auto_error=False, scheme_name="bearer",
                    description="A token from `remem token create`: rmm_<id>_<secret>.")

MemoryId = Annotated[str, Path(min_length=1, max_length=128, description="Memory id.")]


def hidden_memory(memory_id: str) -> NotFoundOrNotVisible:
    return NotFoundOrNotVisible(f"Memory {memory_id!r} was not found or is not visible to this "
                                "token.", memory=memory_id)


def hidden_item(item_id: str) -> NotFoundOrNotVisible:
    return NotFoundOrNotVisible(f"Item {item_id!r} was not found or is not visible to this "
                                "token.", item_id=item_id)


def authenticate(request: Request,
                 creds: Annotated[HTTPAuthorizationCredentials | None, Security(bearer)]
                 ) -> Principal:
    """The caller's principal. Raises Unauthenticated (401)."""
    return request.app.state.tokens.authenticate(creds.credentials if creds else None)


def bound_principal(memory_id: MemoryId,
                    principal: Annotated[Principal, Depends(authenticate)]) -> Principal:
    """The principal, when its token is bound to the memory in the path (else neutral 404)."""
    if principal.memory_id != memory_id:
        raise hidden_memory(memory_id)
    return principal


@dataclass
class Access:
    """A principal and the memory it reaches; scope checks for handlers."""

    principal: Principal
    memory: Memory

    @property
    def actor(self) -> str:
        return self.principal.actor

    def item(self, item_id: str) -> ItemView:
        """A visible item. Raises NotFoundOrNotVisible, same body for missing and invisible."""
        try:
            view = self.memory.get(item_id)
        except NotFound:
            raise hidden_item(item_id) from None
        if not self.principal.can_read(view.scope):
            raise hidden_item(item_id)
        return view

    def writable_item(self, item_id: str) -> ItemView:
        """A visible item the principal may write (403 when only readable)."""
        view = self.item(item_id)
        self.principal.require_write(view.scope)
        return view

    def listing_scope(self, scope: str | None) -> str | None:
        """The scope a listing is narrowed to: the subject's own when not given."""
        if scope is None:
            return self.principal.scope
        return self.principal.require_read(scope)


def _access(request: Request, memory_id: str, principal: Principal) -> Access:
    try:
        memory = request.app.state.store.memory(memory_id)
    except NotFound:
        raise hidden_memory(memory_id) from None
    return Access(principal, memory)


def _role_access(role: Role, action: str) -> Any:
    def dependency(request: Request, memory_id: MemoryId,
                   principal: Annotated[Principal, Depends(bound_principal)]) -> Access:
        access = _access(request, memory_id, principal)
        principal.require_role(role, action)
        return access
    return dependency


def _memory_admin_access(request: Request, memory_id: MemoryId,
                         principal: Annotated[Principal, Depends(bound_principal)]) -> Access:
    access = _access(request, memory_id, principal)
    principal.require_memory_admin("manage the memory")
    return access


Reader = Annotated[Access, Depends(_role_access(Role.READER, "read"))]
Writer = Annotated[Access, Depends(_role_access(Role.WRITER, "write"))]
Admin = Annotated[Access, Depends(_role_access(Role.ADMIN, "do this"))]
MemoryAdmin = Annotated[Access, Depends(_memory_admin_access)]
Bound = Annotated[Principal, Depends(bound_principal)]
Authenticated = Annotated[Principal, Depends(authenticate)]
