"""Templates (Jinja2, autoescaped) and the route class that turns service errors into pages.

``UiRoute`` runs like the API's ``SerializedRoute`` (one request at a time on the embedded
SQLite store) and renders a ``RememError`` as an HTML page with the error's status and
message (a missing or stale sign-in redirects to the sign-in page instead).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from fastapi import Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, RedirectResponse
from jinja2 import Environment, FileSystemLoader, select_autoescape

from remem.api.routing import SerializedRoute
from remem.domain.timefmt import local_day
from remem.errors import RememError, Unauthenticated

HERE = Path(__file__).parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"

env = Environment(loader=FileSystemLoader(str(TEMPLATES)),
                  autoescape=select_autoescape(["html", "svg"], default=True),
                  trim_blocks=True, lstrip_blocks=True)


def _json(value: Any) -> str:
    """A stored value as compact JSON text (strings unquoted); escaped by the template."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _pretty(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, indent=2)


env.filters["value"] = _json
env.filters["pretty"] = _pretty
def _minute(iso: str | None, offset_minutes: int | None = None) -> str:
    """``2026-03-01 09:00`` (UTC) of a stored instant; with the UTC offset its statement gave,
    the time in that zone with the offset: ``2026-03-01 10:00 +01:00`` (as recall's item
    lines show the day in the speaker's zone)."""
    utc = (iso or "").replace("T", " ")[:16]
    if not offset_minutes or not iso:
        return utc
    try:
        at = datetime.fromisoformat(iso.replace("Z", "+00:00")).astimezone(
            timezone(timedelta(minutes=offset_minutes)))
    except (ValueError, OverflowError):
        return utc
    z = at.strftime("%z")
    return f"{at:%Y-%m-%d %H:%M} {z[:3]}:{z[3:]}"


env.filters["day"] = lambda s, offset_minutes=None: local_day(s or "", offset_minutes)
env.filters["minute"] = _minute

NAV = [("items", "Items", "/ui/items"), ("conflicts", "Conflicts", "/ui/conflicts"),
       ("recall", "Recall", "/ui/recall"), ("runs", "Runs", "/ui/runs"),
       ("status", "Status", "/ui/status"), ("memories", "Memories", "/ui/memories")]


def page(name: str, *, who: Any = None, status_code: int = 200, **ctx: Any) -> HTMLResponse:
    """Renders ``templates/<name>.html`` with the viewer and the nav."""
    html = env.get_template(f"{name}.html").render(who=who, nav=NAV, current=name, **ctx)
    return HTMLResponse(html, status_code=status_code, headers=_HEADERS)


_HEADERS = {
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self' data:; "
                               "script-src 'self'; form-action 'self'; frame-ancestors 'none';"
                               " base-uri 'none'",
}


def error_page(exc: RememError) -> HTMLResponse:
    return page("error", status_code=exc.http_status, code=exc.code, message=exc.message)


class UiRoute(SerializedRoute):
    """A serialised route whose service errors render as HTML pages."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def rendered(request: Request) -> Response:
            try:
                return await handler(request)
            except Unauthenticated:
                return RedirectResponse("/ui/login", status_code=303)
            except RememError as exc:
                return error_page(exc)
            except RequestValidationError as exc:
                where = ", ".join(".".join(str(p) for p in e.get("loc", ())[1:])
                                  for e in exc.errors()) or "the form"
                return page("error", status_code=422, code="invalid_input",
                            message=f"The form is invalid at {where}; nothing was changed.")

        return rendered
