"""Router factory: one error schema for every documented status, and request serialisation.

The embedded SQLite store shares one connection between threads, so its handlers (and the
token lookup) run one request at a time under an async lock; waiting requests hold no worker
thread. Stores that are safe for concurrent use (``app.state.store_lock is None``) skip it.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.routing import APIRoute

from remem.api.schemas import ErrorOut

_ERROR_STATUSES = {
    400: "Invalid input (instantKV limits); nothing was written.",
    401: "Missing or invalid bearer token.",
    403: "The token's role or subject does not allow this.",
    404: "Not found or not visible to this token (existence-neutral).",
    409: "Revision, idempotency, legal-hold or already-exists conflict.",
    413: "Request body over the size limit.",
    422: "Request does not match the schema.",
    503: "Retry later (see Retry-After).",
}
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorOut, "description": text} for status, text in _ERROR_STATUSES.items()
}


class SerializedRoute(APIRoute):
    """An APIRoute whose whole handling runs under ``app.state.store_lock`` when set."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def serialized(request: Request) -> Response:
            lock = request.app.state.store_lock
            if lock is None:
                return await handler(request)
            async with lock:
                return await handler(request)

        return serialized


def make_router(tags: list[str], prefix: str = "") -> APIRouter:
    """An APIRouter with the error responses documented and serialised routes."""
    return APIRouter(prefix=prefix, tags=tags, responses=ERROR_RESPONSES,
                     route_class=SerializedRoute)
