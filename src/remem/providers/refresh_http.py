"""The ``http-api`` refresh handler: a conditional GET of a cached fact's URL over httpx.

Policy (the same rule as model endpoints: the operator decides where the server connects,
a memory's writers never do):

- A URL is fetched only when the operator allowed it (``allowed``): an entry is either an
  http(s) URL prefix (scheme, host and port must equal the entry's, the path must start with
  its path: ``https://api.example.com/v1/``) or the word ``loopback`` (any http(s) URL whose
  host is ``localhost`` or a loopback IP literal). Nothing is allowed by default. Host names
  are compared as written; the operator who allows a name trusts its DNS.
- No redirects are followed (a 3xx answer is a failure), proxies from the environment are
  not used, every request has a timeout, and a body over ``max_bytes`` is refused.
- ``If-None-Match`` carries the stored etag: 304 -> ``unchanged``; 200 -> ``changed`` with
  the body (JSON when the content type says so, else UTF-8 text, trimmed); anything else ->
  ``failed`` with a reason that names no host, path or query.
"""

from __future__ import annotations

import ipaddress
import json
import threading
import time
from collections.abc import Iterable
from typing import Any

import httpx

from remem.errors import ConfigInvalid
from remem.ports import RefreshAnswer, RefreshCheck

DEFAULT_TIMEOUT_S = 5.0
DEFAULT_MAX_BYTES = 65_536
LOOPBACK = "loopback"


def _loopback_host(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _path_under(path: str, prefix: str) -> bool:
    """Whether the (decoded) ``path`` is under ``prefix``. httpx removes literal dot
    segments but keeps encoded ones (``/v1/%2e%2e/admin`` decodes to ``/v1/../admin``),
    which the source's server may resolve outside the prefix: any dot segment or
    backslash left after decoding is refused. A prefix without a trailing slash covers
    itself and what lies below it, not ``/v1evil``."""
    if "\\" in path or any(seg in (".", "..") for seg in path.split("/")):
        return False
    if prefix.endswith("/") or path == prefix:
        return path.startswith(prefix)
    return path.startswith(prefix + "/")


def _parse_allowed(entry: str) -> tuple[str, str, int | None, str] | str:
    if entry == LOOPBACK:
        return LOOPBACK
    try:
        url = httpx.URL(entry)
    except (httpx.InvalidURL, TypeError) as exc:
        raise ConfigInvalid(f"Refresh origin {entry!r} is not a URL; give an http(s) URL "
                            "prefix or 'loopback'.", path="refresh_origins") from exc
    if url.scheme not in ("http", "https") or not url.host or url.userinfo or url.query:
        raise ConfigInvalid(f"Refresh origin {entry!r} must be an http(s) URL prefix without "
                            "credentials or query, or 'loopback'.", path="refresh_origins")
    return url.scheme, url.host.lower(), url.port, url.path or "/"


class HttpRefreshHandler:
    """Refreshes ``http-api`` cached facts by conditional GET.

    Args:
        allowed: URL prefixes (and/or ``loopback``) the operator allows; empty: none.
        timeout_s: the most one request takes (a caller's shorter deadline wins).
        max_bytes: the largest body accepted.
        transport: an httpx transport (tests); None: the network.

    Raises:
        ConfigInvalid: an allowed entry is not an http(s) prefix or ``loopback``.
    """

    name = "http-api"

    def __init__(self, allowed: Iterable[str] = (), *, timeout_s: float = DEFAULT_TIMEOUT_S,
                 max_bytes: int = DEFAULT_MAX_BYTES, transport: Any = None) -> None:
        self.allowed = tuple(_parse_allowed(str(e).strip()) for e in allowed if str(e).strip())
        self.timeout_s = float(timeout_s)
        self.max_bytes = int(max_bytes)
        self.transport = transport
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()

    def _http(self) -> httpx.Client:
        """One client per handler, built on first use (building one loads the TLS trust
        store: ~0.3 s here) and reused; each request sets its own timeout."""
        if self._client is None:
            with self._lock:
                if self._client is None:
                    self._client = httpx.Client(follow_redirects=False, trust_env=False,
                                                transport=self.transport)
        return self._client

    def __repr__(self) -> str:  # entries may be internal names: count them only
        return f"HttpRefreshHandler(allowed={len(self.allowed)} entries)"

    def permits(self, uri: str | None) -> bool:
        """Whether the policy lets the server fetch ``uri``."""
        try:
            url = httpx.URL(uri or "")
        except (httpx.InvalidURL, TypeError):
            return False
        if url.scheme not in ("http", "https") or not url.host:
            return False
        host, port = url.host.lower(), url.port
        for entry in self.allowed:
            if entry == LOOPBACK:
                if _loopback_host(host):
                    return True
                continue
            scheme, ehost, eport, epath = entry
            if (url.scheme, host, port) == (scheme, ehost, eport) and \
                    _path_under(url.path or "/", epath):
                return True
        return False

    def check(self, req: RefreshCheck) -> RefreshAnswer:
        """One conditional GET within ``min(timeout_s, req.timeout_s)`` seconds."""
        if not self.permits(req.uri):
            return RefreshAnswer("failed", reason="the source URL is not allowed by the "
                                 "operator's refresh policy (an http(s) URL under an allowed "
                                 "prefix, or loopback when allowed)")
        budget = min(self.timeout_s, req.timeout_s)
        if budget <= 0:
            return RefreshAnswer("failed", reason="the refresh deadline had passed")
        headers = {"Accept": "application/json, text/plain;q=0.9, */*;q=0.1"}
        if req.etag:
            headers["If-None-Match"] = req.etag
        try:
            return self._get(str(req.uri), headers, budget)
        except httpx.TimeoutException:
            return RefreshAnswer("failed", reason=f"the source did not answer within "
                                 f"{budget:.3g} s")
        except httpx.HTTPError as exc:
            return RefreshAnswer("failed", reason=f"the source could not be reached "
                                 f"({type(exc).__name__})")

    def _get(self, uri: str, headers: dict[str, str], budget_s: float) -> RefreshAnswer:
        started = time.monotonic()
        with self._http().stream("GET", uri, headers=headers, follow_redirects=False,
                                 timeout=httpx.Timeout(budget_s)) as resp:
            etag = resp.headers.get("etag")
            if resp.status_code == 304:
                return RefreshAnswer("unchanged", etag=etag or None)
            if resp.status_code != 200:
                what = "a redirect, which is not followed" if 300 <= resp.status_code < 400 \
                    else "an error"
                return RefreshAnswer("failed", reason=f"the source answered HTTP "
                                     f"{resp.status_code} ({what})")
            body = bytearray()
            for chunk in resp.iter_bytes():
                body += chunk
                if len(body) > self.max_bytes:
                    return RefreshAnswer("failed", reason=f"the source's body is over "
                                         f"{self.max_bytes} bytes")
                if time.monotonic() - started > budget_s:
                    raise httpx.ReadTimeout("body too slow")
            return _answer(bytes(body), resp.headers.get("content-type", ""), etag)


def _answer(body: bytes, content_type: str, etag: str | None) -> RefreshAnswer:
    media = content_type.split(";", 1)[0].strip().lower()
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return RefreshAnswer("failed", reason="the source's body is not UTF-8 text or JSON")
    if media == "application/json" or media.endswith("+json"):
        try:
            value = json.loads(text)
        except ValueError:
            return RefreshAnswer("failed", reason="the source said JSON but its body does "
                                 "not parse")
    else:
        value = text.strip()
    return RefreshAnswer("changed", value=value, etag=etag or None)


__all__ = ["HttpRefreshHandler", "LOOPBACK"]
