"""The one JSON error shape for every non-2xx response, and the request size limit.

Every error body is ``{"error": {"code", "message", "retryable", "details"}}``: service errors
(``RememError.to_dict``), request validation (422 ``validation_failed``), unknown routes (404
``not_found``), wrong methods (405 ``method_not_allowed``), oversize bodies (413
``request_too_large``, answered before the body is parsed) and unexpected failures (500
``internal_error``, no details). ``HeadMoved`` (503) carries ``Retry-After``; 401 carries
``WWW-Authenticate: Bearer``.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from typing import Any

import anyio
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from remem.errors import HeadMoved, RememError, RequestTooLarge, Unauthenticated

log = logging.getLogger("remem.api")

RETRY_AFTER_SECONDS = 1


def error_body(code: str, message: str, *, retryable: bool = False,
               details: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "retryable": retryable,
                      "details": details or {}}}


def remem_error_response(exc: RememError) -> JSONResponse:
    headers = {}
    if isinstance(exc, HeadMoved):
        headers["Retry-After"] = str(RETRY_AFTER_SECONDS)
    if isinstance(exc, Unauthenticated):
        headers["WWW-Authenticate"] = "Bearer"
    return JSONResponse({"error": encodable(exc.to_dict())}, status_code=exc.http_status,
                        headers=headers)


_SURROGATES = re.compile("[\ud800-\udfff]")


def encodable(value: Any, depth: int = 0) -> Any:
    """The value with every lone surrogate (which UTF-8 cannot encode) replaced by U+FFFD,
    so an error that quotes the caller's input can always be sent."""
    if isinstance(value, str):
        return _SURROGATES.sub("\ufffd", value)
    if depth > 64:
        return None
    if isinstance(value, dict):
        return {encodable(k, depth + 1): encodable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [encodable(v, depth + 1) for v in value]
    return value


async def _remem_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RememError)
    return remem_error_response(exc)


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = [{"loc": [str(p) for p in e.get("loc", ())], "msg": e.get("msg", ""),
               "type": e.get("type", "")} for e in exc.errors()]
    first = errors[0] if errors else {"loc": [], "msg": "invalid request"}
    where = ".".join(first["loc"]) or "request"
    return JSONResponse(error_body(
        "validation_failed", f"Request is invalid at {where}: {first['msg']}. See details.errors "
        "and the OpenAPI schema.", details={"errors": errors}), status_code=422)


_HTTP_CODES = {400: "invalid_input", 404: "not_found", 405: "method_not_allowed"}


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    code = _HTTP_CODES.get(exc.status_code, "http_error")
    if exc.status_code == 404:
        message = f"No route {request.method} {request.url.path}; see /openapi.json."
    elif exc.status_code == 400:
        message = f"Request body could not be parsed ({exc.detail}); send a JSON document."
    elif exc.status_code == 405:
        message = f"Method {request.method} is not allowed on {request.url.path}."
    else:
        message = str(exc.detail)
    return JSONResponse(error_body(code, message), status_code=exc.status_code,
                        headers=getattr(exc, "headers", None))


async def _internal_error(request: Request, exc: Exception) -> JSONResponse:
    log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return JSONResponse(error_body("internal_error", "Internal server error; the request may "
                                   "not have completed. Check the server log."),
                        status_code=500)


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(RememError, _remem_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _internal_error)


class BodyLimit:
    """ASGI middleware: reads at most ``max_bytes`` of an HTTP request body before the app
    sees any of it; a larger body (by Content-Length or as received) gets 413.

    ``larger`` names the few routes that take bigger bodies: ``(method, path regex,
    max_bytes)``, e.g. fact content that goes to the blob store. The larger limit is only for
    a caller with a live bearer token (checked before the body is read): anyone else gets the
    ordinary limit, so an anonymous client cannot make the server buffer 64 MiB."""

    def __init__(self, app: ASGIApp, max_bytes: int,
                 larger: Sequence[tuple[str, str, int]] = ()) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.larger = [(m, re.compile(p), n) for m, p, n in larger]

    def _limit(self, scope: Scope) -> int:
        for method, path, max_bytes in self.larger:
            if scope.get("method") == method and path.fullmatch(scope.get("path", "")):
                return max_bytes
        return self.max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self._limit(scope)
        if limit > self.max_bytes and not await _authenticated(scope):
            limit = self.max_bytes
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            await self._reject(scope, send, declared, limit)
            return
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                await self._reject(scope, send, size, limit)
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _reject(self, scope: Scope, send: Send, size: int, limit: int) -> None:
        exc = RequestTooLarge(f"Request body is over {limit} bytes ({size} read); send "
                              "a smaller body.", limit=limit)
        data = json.dumps({"error": exc.to_dict()}).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(data)).encode()),
                                (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": data})


async def _authenticated(scope: Scope) -> bool:
    """True when the request carries a live bearer token (looked up as the routes do, under
    the store lock when the app serialises)."""
    header = dict(scope.get("headers", [])).get(b"authorization", b"").decode("latin-1")
    scheme, _, token = header.partition(" ")
    app = scope.get("app")
    tokens = getattr(getattr(app, "state", None), "tokens", None)
    if scheme.lower() != "bearer" or not token or tokens is None:
        return False

    def check() -> bool:
        try:
            tokens.authenticate(token.strip())
        except RememError:
            return False
        return True

    lock = getattr(app.state, "store_lock", None)
    if lock is None:
        return await anyio.to_thread.run_sync(check)
    async with lock:
        return await anyio.to_thread.run_sync(check)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None
