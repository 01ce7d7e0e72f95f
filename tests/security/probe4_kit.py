"""Helpers of the round-4 outsider probe (``test_probe4_*``): a real ``remem serve`` on
loopback over a real SQLite file with two tenants, and tokens of every role.

Memories: ``m1`` (tenant ``acme``) and ``m2`` (tenant ``globex``). Principals by name::

    root  admin/admin of m1      aa  admin/user:alice of m1   aw  writer/user:alice of m1
    ar    reader/user:alice      bw  writer/user:bob of m1    m2root  admin/admin of m2
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

import remem
from remem.service.tokens import Tokens
from remem.testing.served import Server

PRINCIPALS = {
    "root": ("m1", "admin", "admin"), "aa": ("m1", "admin", "user:alice"),
    "aw": ("m1", "writer", "user:alice"), "ar": ("m1", "reader", "user:alice"),
    "bw": ("m1", "writer", "user:bob"), "m2root": ("m2", "admin", "admin"),
}


class Probe:
    """The served database, its tokens and ``call(principal, method, path, **httpx kw)``."""

    def __init__(self, tmp: Path | None, server_env: dict[str, str] | None = None, *,
                 db: str | None = None) -> None:
        self.db = db if db is not None else str(tmp / "probe.db")  # db: any database URL
        store = remem.open(self.db)
        try:
            store.create_memory("m1", tenant_id="acme")
            store.create_memory("m2", tenant_id="globex")
            tokens = Tokens(store)
            self.tokens = {n: tokens.create(*spec, label=n)[0] for n, spec in PRINCIPALS.items()}
        finally:
            store.close()
        self.server = Server(self.db, env=server_env)
        self.http = httpx.Client(base_url=self.server.base, timeout=60)

    def call(self, principal: str | None, method: str, path: str, **kw: Any) -> httpx.Response:
        headers = dict(kw.pop("headers", {}))
        if principal:
            headers["Authorization"] = f"Bearer {self.tokens[principal]}"
        return self.http.request(method, path, headers=headers, **kw)

    def ok(self, principal: str, method: str, path: str, **kw: Any) -> Any:
        r = self.call(principal, method, path, **kw)
        assert r.status_code < 300, f"{method} {path}: {r.status_code} {r.text}"
        return r.json()

    def close(self) -> None:
        self.http.close()
        self.server.stop()
