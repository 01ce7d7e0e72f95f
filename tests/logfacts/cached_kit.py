"""Shared parts of the cached-fact tests: a real HTTP source on loopback, stores on both
backends, and a registered ``http-api`` handler that allows loopback only."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

import remem
from remem.providers import registry
from remem.providers.refresh_http import HttpRefreshHandler
from remem.service.clock import FixedClock

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


class SourceServer:
    """An HTTP server on 127.0.0.1 that answers like an external API.

    ``resources[path] = {"body": ..., "etag": ..., "type": ..., "status": ..., "delay_s": ...}``;
    a GET whose If-None-Match equals the etag gets 304. Every request is logged as
    ``(path, if_none_match)``.
    """

    def __init__(self) -> None:
        self.resources: dict[str, dict[str, Any]] = {}
        self.log: list[tuple[str, str | None]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                try:
                    self._answer()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            def _answer(self) -> None:
                inm = self.headers.get("If-None-Match")
                server.log.append((self.path, inm))
                res = server.resources.get(self.path)
                if res is None:
                    self.send_response(404)
                    self.end_headers()
                    return
                time.sleep(res.get("delay_s", 0))
                status = res.get("status", 200)
                if status == 200 and res.get("etag") and inm == res["etag"]:
                    self.send_response(304)
                    self.send_header("ETag", res["etag"])
                    self.end_headers()
                    return
                body = res.get("body", "")
                raw = (json.dumps(body) if res.get("type", "application/json")
                       == "application/json" else str(body)).encode()
                self.send_response(status)
                self.send_header("Content-Type", res.get("type", "application/json"))
                if res.get("etag"):
                    self.send_header("ETag", res["etag"])
                if res.get("location"):
                    self.send_header("Location", res["location"])
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def url(self, path: str) -> str:
        return self.base + path

    def __enter__(self) -> SourceServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def source_server() -> Iterator[SourceServer]:
    with SourceServer() as s:
        yield s


@pytest.fixture
def loopback_handler() -> Iterator[HttpRefreshHandler]:
    """Registers an ``http-api`` handler allowing loopback only (the operator's choice),
    and restores the registry afterwards."""
    saved = dict(registry.REFRESH_HANDLERS)
    handler = HttpRefreshHandler(["loopback"], timeout_s=5)
    registry.register_refresh_handler("http-api", handler)
    yield handler
    registry.REFRESH_HANDLERS.clear()
    registry.REFRESH_HANDLERS.update(saved)


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(T0)


@pytest.fixture
def cstore(store_url: str, clock: FixedClock) -> Iterator[remem.RememStore]:
    s = remem.open(store_url, clock=clock)
    yield s
    s.close()


@pytest.fixture
def cmem(cstore: remem.RememStore, loopback_handler: HttpRefreshHandler) -> remem.Memory:
    return cstore.create_memory("m1")


def block(uri: str, strategy: str = "manual", *, ttl: int | None = 60,
          etag: str | None = None, priority: int | None = None) -> dict[str, Any]:
    """A Source block in the schema's shape."""
    fresh: dict[str, Any] = {}
    if ttl is not None:
        fresh["ttlSeconds"] = ttl
    if etag is not None:
        fresh["etag"] = etag
    refresh: dict[str, Any] = {"strategy": strategy}
    if priority is not None:
        refresh["priority"] = priority
    return {"kind": "http-api", "uri": uri, "freshness": fresh, "refresh": refresh}
