"""Router factory: one error schema for every documented status, strict JSON bodies, strict
query strings, and request serialisation.

A route with a JSON body parses it with :func:`remem.domain.jsondoc.loads` before FastAPI
sees it: invalid UTF-8, nesting over 64 deep, duplicate fields, NaN/Infinity and lone
surrogates get 400 ``invalid_input`` (never a RecursionError or a 500), and nothing runs.

A query parameter the route does not declare (``?limt=5``, ``?scope=`` on a route that takes
``scopes``) is refused as an unknown body field is: 422 ``validation_failed`` with
``details.errors[0].loc == ["query", name]`` and type ``extra_forbidden``, before anything
runs (:class:`StrictQueryRoute`; every route of the API and the manage view is one).

The embedded SQLite store shares one connection between threads, so its handlers (and the
token lookup) run one request at a time under an async lock; waiting requests hold no worker
thread. Stores that are safe for concurrent use (``app.state.store_lock is None``) skip it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.dependencies.models import Dependant
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute

from remem.api.schemas import ErrorOut
from remem.domain import jsondoc
from remem.errors import InvalidInput

_ERROR_STATUSES = {
    400: "Invalid input (instantKV limits); nothing was written.",
    401: "Missing or invalid bearer token.",
    403: "The token's role or subject does not allow this.",
    404: "Not found or not visible to this token (existence-neutral).",
    409: "Revision, idempotency, legal-hold or already-exists conflict.",
    413: "Request body over the size limit.",
    422: "Request does not match the schema: a missing or wrongly typed field, an unknown body "
         "field, or a query parameter the route does not declare; nothing was written.",
    503: "Retry later (see Retry-After).",
}
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorOut, "description": text} for status, text in _ERROR_STATUSES.items()
}


class StrictQueryRoute(APIRoute):
    """An APIRoute that refuses a query parameter it does not declare (422, before the
    handler, its dependencies or authentication run): a misspelt ``?limt=5`` is never
    silently the default. Its OpenAPI operation lists that 422 even when the route has no
    parameters of its own."""

    def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        responses = dict(kwargs.pop("responses", None) or {})
        responses.setdefault(422, ERROR_RESPONSES[422])
        super().__init__(path, endpoint, responses=responses, **kwargs)

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        declared = frozenset(query_names(self.dependant))
        repeatable = frozenset(query_names(self.dependant, lists_only=True))

        async def strict(request: Request) -> Response:
            refuse_unknown_query(request, declared, repeatable)
            return await handler(request)

        return strict


def query_names(dependant: Dependant, *, lists_only: bool = False) -> set[str]:
    """Every query parameter name a route declares: its own and its dependencies' (by the
    alias the request uses; the fields of a query-parameter model too). With ``lists_only``,
    only those that take a list (``?scopes=a&scopes=b``)."""
    names: set[str] = set()
    stack = [dependant]
    while stack:
        d = stack.pop()
        for f in d.query_params:
            model = getattr(f.field_info, "annotation", None)
            fields = getattr(model, "model_fields", None) if isinstance(model, type) else None
            if fields:
                names.update(m.alias or n for n, m in fields.items()
                             if not lists_only or _takes_list(m.annotation))
            elif not lists_only or _takes_list(model):
                names.add(f.alias)
        stack.extend(d.dependencies)
    return names


def _takes_list(annotation: Any) -> bool:
    """Whether an annotation is a list (or an optional list, or an Annotated one)."""
    import typing

    origin = typing.get_origin(annotation)
    if origin in (list, tuple, set, frozenset):
        return True
    return any(_takes_list(a) for a in typing.get_args(annotation)) if origin else False


def refuse_unknown_query(request: Request, declared: frozenset[str],
                         repeatable: frozenset[str] = frozenset()) -> None:
    """Raises the 422 of an unknown field for each query parameter not in ``declared``, and
    for each parameter given more than once that does not take a list (the last value would
    otherwise win silently, unlike a duplicate JSON field)."""
    names = [k for k, _ in request.query_params.multi_items()]
    unknown = [n for n in dict.fromkeys(names) if n not in declared]
    if unknown:
        raise RequestValidationError([{
            "type": "extra_forbidden", "loc": ("query", name),
            "msg": (f"Unknown query parameter; this route takes "
                    f"{', '.join(sorted(declared)) or 'none'}"), "input": None}
            for name in unknown])
    counts = Counter(names)  # one pass: a request may repeat a name thousands of times
    repeated = [n for n, c in counts.items() if c > 1 and n not in repeatable]
    if repeated:
        raise RequestValidationError([{
            "type": "duplicate_parameter", "loc": ("query", name),
            "msg": "Query parameter given more than once; this route takes it once",
            "input": None} for name in repeated])


class SerializedRoute(StrictQueryRoute):
    """An APIRoute whose JSON body is parsed strictly first and whose whole handling runs
    under ``app.state.store_lock`` when set (and, as every :class:`StrictQueryRoute`,
    refuses undeclared query parameters first)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        has_body = self.body_field is not None
        reads_own_body = bool((self.openapi_extra or {}).get("requestBody"))  # e.g. /apply

        async def serialized(request: Request) -> Response:
            if has_body and _is_json(request):
                body = await request.body()
                if body:  # FastAPI reads the cached parse instead of json.loads
                    request._json = _strict_json(body)
            elif not has_body and not reads_own_body and request.method in _BODY_METHODS:
                _refuse_a_body(await request.body(), request.method, self.path)
            lock = request.app.state.store_lock
            if lock is None:
                return await handler(request)
            async with lock:
                return await handler(request)

        return serialized


_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def _refuse_a_body(body: bytes, method: str, path: str) -> None:
    """A route without a request model takes no body: anything but nothing (or ``{}``) is
    400 ``invalid_input`` before the handler runs, so a field the route does not have
    (``expected_revision`` on a by-id forget) is never silently ignored."""
    if not body.strip() or body.strip() == b"{}":
        return
    raise InvalidInput(f"{method} {path} takes no request body; send none (or {{}}). A "
                       "field it does not have is refused, not ignored: nothing was done.",
                       field="body")


def _strict_json(body: bytes) -> Any:
    """The parsed body; a syntax error stays FastAPI's 422 ``json_invalid``."""
    try:
        return jsondoc.loads(body)
    except InvalidInput as exc:
        if exc.details.get("reason") != "syntax":
            raise
        raise RequestValidationError([{
            "type": "json_invalid", "loc": ("body", exc.details["position"]),
            "msg": "JSON decode error", "input": {}}]) from None


def _is_json(request: Request) -> bool:
    """As FastAPI decides: no content type, ``application/json`` or ``application/*+json``."""
    value = request.headers.get("content-type")
    if not value:
        return True
    kind = value.split(";", 1)[0].strip().lower()
    return kind == "application/json" or (kind.startswith("application/")
                                          and kind.endswith("+json"))


def make_router(tags: list[str], prefix: str = "") -> APIRouter:
    """An APIRouter with the error responses documented and serialised routes."""
    return APIRouter(prefix=prefix, tags=tags, responses=ERROR_RESPONSES,
                     route_class=SerializedRoute)
