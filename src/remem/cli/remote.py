"""The CLI's HTTP client mode: ``remem --url http://127.0.0.1:PORT --secrets-file F ...``.

- ``--url`` must be a loopback HTTP origin (``http://127.0.0.1:8080``, ``http://[::1]:8080``,
  ``http://localhost:8080``): no path, query, credentials or other host. Redirects are
  rejected, never followed.
- ``--secrets-file`` is read, never sourced: the first ``INSTANTKV_APP_TOKEN=`` or
  ``REMEM_TOKEN=`` line gives the bearer token. The file must be private (no group or world
  permission bits). There is no token argument or environment override.
- Errors from the server come back as the same typed :class:`~remem.errors.RememError` (by
  code), so a remote command fails exactly like an embedded one. No diagnostic names the URL,
  the file's contents or the token.
"""

from __future__ import annotations

import ipaddress
import os
import stat
from typing import Any
from urllib.parse import quote, urlsplit

from remem.errors import (
    InvalidInput,
    PermissionDenied,
    RememError,
    StoreUnavailable,
    Unauthenticated,
)

TOKEN_NAMES = ("INSTANTKV_APP_TOKEN", "REMEM_TOKEN")
TIMEOUT_S = 30.0


def check_url(url: str) -> str:
    """The origin of a loopback ``http://`` URL, without a trailing slash.

    Raises:
        InvalidInput: another scheme or host, credentials, a path, query or fragment.
    """
    bad = InvalidInput("--url must be a loopback HTTP origin such as http://127.0.0.1:8080 "
                       "(no path, query or credentials).", field="url")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise bad from None
    if (parts.scheme != "http" or parts.username or parts.password or parts.query
            or parts.fragment or parts.path not in ("", "/") or not parts.hostname):
        raise bad
    host = parts.hostname
    if host != "localhost":
        try:
            if not ipaddress.ip_address(host).is_loopback:
                raise bad
        except ValueError:
            raise bad from None
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}" + (f":{port}" if port else "")


def read_token(path: str) -> str:
    """The bearer token of a private secrets file (never sourced; see the module doc).

    Raises:
        InvalidInput: the file cannot be read, is readable or writable by group/others, or
            holds no token line.
    """
    try:
        # O_NONBLOCK: opening a FIFO for reading must not wait for a writer (it is then
        # refused below as not a regular file); a regular file reads as usual
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise InvalidInput(f"--secrets-file cannot be read ({exc.strerror}); give the private "
                           "credentials file.", field="secrets_file") from None
    with os.fdopen(fd, "rb") as stream:
        mode = os.fstat(stream.fileno()).st_mode
        if not stat.S_ISREG(mode):
            raise InvalidInput("--secrets-file must be a regular file.", field="secrets_file")
        if mode & 0o077:
            raise InvalidInput("--secrets-file is accessible by group or others; make it "
                               "private (chmod 600) and rotate the token if it was shared.",
                               field="secrets_file")
        data = stream.read(65_536)
    for raw in data.decode("utf-8", "replace").splitlines():
        line = raw.strip()
        if line.startswith("export "):
            line = line[len("export "):].lstrip()
        name, sep, value = line.partition("=")
        if sep and name.strip() in TOKEN_NAMES:
            value = value.strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            if value:
                return value
    raise InvalidInput("--secrets-file holds no INSTANTKV_APP_TOKEN= or REMEM_TOKEN= line.",
                       field="secrets_file")


def _error_classes() -> dict[str, type[RememError]]:
    found: dict[str, type[RememError]] = {}
    todo: list[type[RememError]] = [RememError]
    while todo:
        cls = todo.pop()
        found.setdefault(cls.code, cls)
        todo.extend(cls.__subclasses__())
    return found


def raise_remote(status: int, body: Any) -> None:
    """Re-raises a server's error body as the RememError of its code."""
    err = body.get("error") if isinstance(body, dict) else None
    if not isinstance(err, dict) or not isinstance(err.get("code"), str):
        if status == 422:
            raise InvalidInput("The server rejected the request's shape; check the command's "
                               "arguments.", field="request")
        raise StoreUnavailable(f"The server answered HTTP {status} without an error body; "
                               "check that --url is a remem server.")
    cls = _error_classes().get(err["code"], RememError)
    exc = cls(str(err.get("message", "")), **(err.get("details") or {}))
    exc.code = err["code"]
    raise exc


class RemoteSlots:
    """The instantKV slot commands over HTTP (the same calls as ``LocalSlots``).

    Args:
        url: the checked loopback origin.
        token: the bearer token.
        memory_id: the namespace (memory id).
        scope: the scope entity ``user`` names (None: the token's own).
    """

    def __init__(self, url: str, token: str, memory_id: str, scope: str | None) -> None:
        import httpx

        self.scope = scope
        self._base = f"/memory/{quote(memory_id, safe='')}"
        self._client = httpx.Client(base_url=check_url(url), follow_redirects=False,
                                    timeout=TIMEOUT_S, trust_env=False,
                                    headers={"Authorization": f"Bearer {token}"})

    def _call(self, method: str, path: str, **kw: Any) -> Any:
        import httpx

        try:
            r = self._client.request(method, self._base + path, **kw)
        except httpx.TimeoutException:
            raise StoreUnavailable("The remem server did not answer in time. A submitted "
                                   "write may have committed: inspect, or retry the identical "
                                   "JSON.") from None
        except httpx.TransportError:
            raise StoreUnavailable("The remem server at --url is unreachable; start it "
                                   "(remem serve), then inspect or retry the identical JSON."
                                   ) from None
        if r.is_redirect:
            raise PermissionDenied("The server answered with a redirect; redirects are "
                                   "rejected. Point --url at the remem server itself.")
        try:
            body = r.json()
        except ValueError:
            body = None
        if r.status_code >= 400:
            if r.status_code == 401 and not isinstance(body, dict):
                raise Unauthenticated("The token was refused; check --secrets-file.")
            raise_remote(r.status_code, body)
        return body

    def _scope_params(self) -> dict[str, str]:
        return {} if self.scope is None else {"scope": self.scope}

    def apply(self, data: bytes) -> dict[str, Any]:
        return self._call("POST", "/apply", content=data, params=self._scope_params(),
                          headers={"Content-Type": "application/json"})

    def profile(self, max_bytes: int) -> dict[str, Any]:
        return self._call("GET", "/slots", params={**self._scope_params(),
                                                   "max_bytes": max_bytes})

    def context(self, query: str, max_bytes: int) -> dict[str, Any]:
        return self._call("POST", "/slots/context",
                          json={"query": query, "max_bytes": max_bytes, "scope": self.scope})

    def inspect(self, entity: str, attribute: str) -> dict[str, Any]:
        return self._call("GET", f"/slots/{quote(entity, safe='')}/{quote(attribute, safe='')}",
                          params=self._scope_params())

    def forget(self, entity: str, attribute: str, expected_revision: int) -> dict[str, Any]:
        return self._call("POST", f"/slots/{quote(entity, safe='')}/"
                                  f"{quote(attribute, safe='')}/forget",
                          json={"expected_revision": expected_revision, "scope": self.scope})

    def close(self) -> None:
        self._client.close()
