"""The FastAPI application: ``create_app(store)``.

Routes (every one but ``/healthz`` needs ``Authorization: Bearer rmm_...``); "admin*" is an
admin token whose subject is ``admin``::

    POST   /memories                               create the token's memory    admin*
    GET    /memories/{id}                          config                       admin*
    PUT    /memories/{id}/config                   replace config               admin*
    DELETE /memories/{id}                          delete memory and tokens     admin*
    GET    /memory/{id}/items                      list, filters, cursor        reader
    POST   /memory/{id}/items                      remember                     writer
    GET    /memory/{id}/items/{item_id}            get                          reader
    PUT    /memory/{id}/items/{item_id}            correct, expected_revision   writer
    GET    /memory/{id}/items/{item_id}/history    versions, provenance         reader
    POST   /memory/{id}/items/{item_id}/forget     erase, erasure report        writer
    POST   /memory/{id}/items/{item_id}/archive    archive                      writer
    POST   /memory/{id}/items/{item_id}/restore    restore                      writer
    POST   /memory/{id}/items/{item_id}/hold       legal hold                   admin
    POST   /memory/{id}/items/{item_id}/hold/release  release a legal hold       admin
    POST   /memory/{id}/items/{item_id}/retention  keep_until / keep_days       writer
    GET    /memory/{id}/inspect?scope=&key=        one key's state              reader
    POST   /memory/{id}/observe                    record a source, receipt     writer
    POST   /memory/{id}/recall                     hybrid recall, token budget  reader
    POST   /memory/{id}/context                    items within a byte budget   reader
    GET    /memory/{id}/profile?scopes=            pinned profile               reader
    GET    /memory/{id}/conflicts                  open conflict groups         reader
    POST   /memory/{id}/conflicts/{group}/resolve  keep one item                admin
    GET    /memory/{id}/status                     head, counts                 any, subject admin
    POST   /memory/{id}/apply                      instantKV proposals          writer
    GET    /memory/{id}/slots?scope=&max_bytes=    instantKV profile            reader
    POST   /memory/{id}/slots/context              instantKV context            reader
    GET    /memory/{id}/slots/{entity}/{attribute} instantKV inspect            reader
    POST   /memory/{id}/slots/{entity}/{attribute}/forget  instantKV forget     writer
    POST   /memory/{id}/resummarize                consolidation due now        admin*
    POST   /memory/{id}/deactivate                 session ends: capture, consolidate  writer
    POST   /memory/{id}/query                      queryable: items + meta      reader
    POST   /memory/{id}/tokens                     create token                 admin*
    GET    /memory/{id}/tokens                     list tokens                  admin*
    DELETE /memory/{id}/tokens/{token_id}          revoke token                 admin*

Receipts (``GET /memory/{id}/receipts/{receipt_id}``) and the KIP binding (``POST /kip``) come
with the intake issue.
"""

from __future__ import annotations

from importlib import metadata
from typing import Any

import anyio
from fastapi import FastAPI

from remem.api.errors import BodyLimit, install_error_handlers
from remem.api.headers import PrivateResponses
from remem.api.routing import StrictQueryRoute
from remem.api.schemas import HealthOut
from remem.service.tokens import Tokens

#: Largest request body accepted (bytes); the instantKV apply document limit.
MAX_BODY_BYTES = 65_536

DESCRIPTION = """Long-term memory for LLM agents over HTTP.

Every route except `/healthz` needs `Authorization: Bearer <token>` with a token from
`remem token create`. A token is bound to one memory, a role (reader, writer, admin) and a
subject ('admin' or a scope such as `user:alice`). Every error has the body
`{"error": {"code", "message", "retryable", "details"}}`; anything not visible to the token
is answered with the same 404 as something that does not exist. An unknown body field or a
query parameter the route does not declare (`?limt=5`) is refused with 422
`validation_failed` naming it, before authentication; nothing runs.
"""


def create_app(store: Any, *, max_body_bytes: int = MAX_BODY_BYTES,
               serialize: bool | None = None) -> FastAPI:
    """Builds the API over a ``RememStore``.

    Args:
        store: what ``remem.open`` returns; the app does not close it.
        max_body_bytes: larger request bodies get 413 before they are parsed.
        serialize: run requests one at a time (default: True for the SQLite backend, whose
            connection is shared between threads).
    """
    from remem.api.routes import ROUTERS

    # no /docs or /redoc: FastAPI's pages load scripts from a CDN on this origin (the manage
    # view's); the API is described by /openapi.json
    app = FastAPI(title="remem", version=_version(), description=DESCRIPTION,
                  docs_url=None, redoc_url=None,
                  openapi_tags=[{"name": n} for n in ("items", "conflicts", "memory",
                                                      "recall", "admin", "health")])
    if serialize is None:
        serialize = getattr(getattr(store, "adapter", None), "backend", "sqlite") == "sqlite"
    app.state.store = store
    app.state.tokens = Tokens(store)
    app.state.store_lock = anyio.Lock() if serialize else None
    install_error_handlers(app)
    from remem.api.routes.facts import LARGE_BODIES

    app.add_middleware(BodyLimit, max_bytes=max_body_bytes, larger=LARGE_BODIES)
    app.add_middleware(PrivateResponses)  # no-store, nosniff: bodies carry memory text
    for router in ROUTERS:
        app.include_router(router)
    from remem.ui import mount_ui

    mount_ui(app)  # the manage view at /ui (same principals, same guarded Memory)

    def healthz() -> Any:
        return {"ok": True}

    app.router.add_api_route("/healthz", healthz, methods=["GET"], response_model=HealthOut,
                             tags=["health"], summary="Liveness",
                             route_class_override=StrictQueryRoute)  # ?x=1 is refused too

    return app


def openapi_schema() -> dict[str, Any]:
    """The OpenAPI document of the app (no database is opened)."""
    import remem

    return create_app(remem.open(":memory:")).openapi()


def _version() -> str:
    try:
        return metadata.version("remem")
    except metadata.PackageNotFoundError:
        return "0.0.0"
