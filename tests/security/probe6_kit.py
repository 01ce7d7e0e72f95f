"""Helpers of the round-6 outsider probe (``test_probe6_*``): the round-4 ``Probe`` (two
tenants, tokens of every role, a real ``remem serve`` on loopback) over a PostgreSQL
database as well as an SQLite file, and the bytes of a database's files."""

from __future__ import annotations

from pathlib import Path

from security.probe4_kit import Probe


class UrlProbe(Probe):
    """``Probe`` on any database URL (``remem serve --db postgresql://...``)."""

    def __init__(self, url: str, server_env: dict[str, str] | None = None) -> None:
        super().__init__(None, server_env, db=url)


def sqlite_bytes(path: str) -> bytes:
    """The SQLite main file and its WAL (when present), as the server left them."""
    out = Path(path).read_bytes()
    wal = Path(path + "-wal")
    return out + (wal.read_bytes() if wal.exists() else b"")
