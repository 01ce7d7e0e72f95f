"""Response headers every API response carries: ``Cache-Control: no-store`` and
``X-Content-Type-Options: nosniff``.

API bodies carry memory text (items, recall results, exports, fact content, error details);
a browser or a client-side HTTP cache in an agent host must not keep a copy that outlives a
forget. A response that already sets a header (the manage view's pages and static assets)
keeps its own value.
"""

from __future__ import annotations

from typing import Any

DEFAULTS = ((b"cache-control", b"no-store"), (b"x-content-type-options", b"nosniff"))


class PrivateResponses:
    """Pure ASGI middleware adding :data:`DEFAULTS` to each HTTP response lacking them."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_defaults(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                headers += [(n, v) for n, v in DEFAULTS if n not in present]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_defaults)
