"""Authentication for route handlers: a bearer token -> a principal -> its ``Memory``.

Handlers take ``Caller`` (the memory in the path, seen by the token's principal) or
``Authenticated`` (the principal alone). They decide nothing about access: every ``Memory``
method checks the principal against the parsed scopes and targets in the service (the one
access check). A token of another memory and a memory that does not exist give the same
existence-neutral 404.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Path, Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from remem.domain.access import Principal
from remem.errors import Unauthenticated
from remem.service.memory import Memory

bearer = HTTPBearer(auto_error=False, scheme_name="bearer",
                    description="A token from `remem token create`: rmm_<id>_<secret>.")

MemoryId = Annotated[str, Path(min_length=1, max_length=128, description="Memory id.")]


def authenticate(request: Request,
                 creds: Annotated[HTTPAuthorizationCredentials | None, Security(bearer)]
                 ) -> Principal:
    """The caller's principal. Raises Unauthenticated (401), also for two or more
    ``Authorization`` headers: a proxy or log reading another of them than the first (the
    one ``HTTPBearer`` reads) would see another caller than the one served."""
    if len(request.headers.getlist("authorization")) > 1:
        raise Unauthenticated("This request carries more than one Authorization header; "
                              "send exactly one Authorization header: 'Bearer rmm_...'.")
    return request.app.state.tokens.authenticate(creds.credentials if creds else None)


def caller_memory(request: Request, memory_id: MemoryId,
                  principal: Annotated[Principal, Depends(authenticate)]) -> Memory:
    """The memory in the path as the principal sees it (neutral 404 when out of reach)."""
    return request.app.state.store.memory(memory_id, principal=principal)


Caller = Annotated[Memory, Depends(caller_memory)]
Authenticated = Annotated[Principal, Depends(authenticate)]
