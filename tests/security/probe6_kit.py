"""Helpers of the round-6 outsider probe (``test_probe6_*``): the round-4 ``Probe`` (two
tenants, tokens of every role, a real ``remem serve`` on loopback) over a PostgreSQL
database as well as an SQLite file, and the bytes of a database's files."""

from __future__ import annotations

from pathlib import Path

import httpx

import remem
from remem.service.tokens import Tokens
from remem.testing.served import Server
from security.probe4_kit import PRINCIPALS, Probe


class UrlProbe(Probe):
    """``Probe`` on any database URL (``remem serve --db postgresql://...``)."""

    def __init__(self, url: str, server_env: dict[str, str] | None = None) -> None:
        self.db = url
        store = remem.open(url)
        try:
            store.create_memory("m1", tenant_id="acme")
            store.create_memory("m2", tenant_id="globex")
            tokens = Tokens(store)
            self.tokens = {n: tokens.create(*spec, label=n)[0] for n, spec in PRINCIPALS.items()}
        finally:
            store.close()
        self.server = Server(url, env=server_env)
        self.http = httpx.Client(base_url=self.server.base, timeout=60)


def sqlite_bytes(path: str) -> bytes:
    """The SQLite main file and its WAL (when present), as the server left them."""
    out = Path(path).read_bytes()
    wal = Path(path + "-wal")
    return out + (wal.read_bytes() if wal.exists() else b"")
