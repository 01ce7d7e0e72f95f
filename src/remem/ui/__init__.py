"""The manage view: server-rendered pages at ``/ui`` in the same process as the API.

Pages (each calls the guarded ``Memory`` facade as the signed-in token's principal)::

    /ui/login                       sign in with a remem token (session cookie)
    /ui/memories                    the token's memory: create, config (memory admin)
    /ui/items                       items table: scope, key, kind, status, text; pages
    /ui/items/{id}                  timeline (SVG), sources, provenance, revision, actions
    /ui/conflicts                   open groups side by side; resolve by keeping one
    /ui/recall                      recall playground: model-facing text, tokens, coverage
    /ui/runs                        derive runs (memory admin), a receipt's phases
    /ui/status                      ledger head, verify, pending erasures, index health

Templates and assets ship inside this package (no CDN; works offline).
"""

from __future__ import annotations

from typing import Any

from starlette.staticfiles import StaticFiles


def mount_ui(app: Any) -> None:
    """Adds the manage view's routes and its static assets to the API app."""
    from remem.ui import admin, items, recall
    from remem.ui.render import STATIC

    for module in (admin, items, recall):
        app.include_router(module.router)
    app.mount("/ui/static", StaticFiles(directory=str(STATIC)), name="ui-static")


__all__ = ["mount_ui"]
