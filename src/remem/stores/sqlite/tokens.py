"""SQLite rows for API bearer tokens (mixed into ``SQLiteStore``).

Rows hold the token id, its memory, role, subject, an optional label, times, and the sha256
of the whole token; the token itself is never stored. See ``remem.service.tokens``.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from remem.errors import AlreadyExists

_COLUMNS = ("token_id", "memory_id", "role", "subject", "secret_hash", "label", "created_at",
            "revoked_at")


class SQLiteTokens:
    """Token storage; expects ``self._tx()`` and ``self.conn`` from ``SQLiteStore``."""

    conn: sqlite3.Connection

    def create_token(self, row: dict[str, Any]) -> None:
        """Inserts a token row (keys: every column but ``revoked_at``).

        Raises:
            AlreadyExists: the token id is taken (random ids: practically never).
        """
        with self._tx() as c:  # type: ignore[attr-defined]
            if c.execute("SELECT 1 FROM tokens WHERE token_id=?", (row["token_id"],)).fetchone():
                raise AlreadyExists(f"Token id {row['token_id']!r} already exists.",
                                    token_id=row["token_id"])
            c.execute("INSERT INTO tokens(token_id, memory_id, role, subject, secret_hash, label,"
                      " created_at) VALUES (?,?,?,?,?,?,?)",
                      (row["token_id"], row["memory_id"], row["role"], row["subject"],
                       row["secret_hash"], row.get("label"), row["created_at"]))

    def token(self, token_id: str) -> dict[str, Any] | None:
        """The token row (with ``secret_hash``), or None."""
        r = self.conn.execute(f"SELECT {', '.join(_COLUMNS)} FROM tokens WHERE token_id=?",
                              (token_id,)).fetchone()
        return dict(zip(_COLUMNS, r, strict=True)) if r else None

    def list_tokens(self, memory_id: str | None = None) -> list[dict[str, Any]]:
        """Token rows without ``secret_hash``, oldest first; all memories when None."""
        cols = [c for c in _COLUMNS if c != "secret_hash"]
        sql = f"SELECT {', '.join(cols)} FROM tokens"
        args: tuple[Any, ...] = ()
        if memory_id is not None:
            sql += " WHERE memory_id=?"
            args = (memory_id,)
        rows = self.conn.execute(sql + " ORDER BY created_at, token_id", args).fetchall()
        return [dict(zip(cols, r, strict=True)) for r in rows]

    def revoke_token(self, token_id: str, at: str) -> bool:
        """Sets ``revoked_at`` (kept if already set); False when no such token."""
        with self._tx() as c:  # type: ignore[attr-defined]
            cur = c.execute("UPDATE tokens SET revoked_at=coalesce(revoked_at, ?) "
                            "WHERE token_id=?", (at, token_id))
            return cur.rowcount > 0
