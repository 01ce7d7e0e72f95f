"""API bearer token rows (both backends; mixed into the stores).

Rows hold the token id, its memory, role, subject, an optional label, times, and the sha256
of the whole token; the token itself is never stored. See ``remem.service.tokens``.
"""

from __future__ import annotations

from typing import Any

from remem.errors import AlreadyExists
from remem.stores.sql.store import SqlStore
from remem.stores.sql.uow import is_unique_violation

_COLUMNS = ("token_id", "memory_id", "role", "subject", "secret_hash", "label", "created_at",
            "revoked_at", "tenant_id")


class SqlTokens(SqlStore):
    """Shared by ``SQLiteStore`` and ``PostgresStore`` through ``SqlStore``."""

    def create_token(self, row: dict[str, Any]) -> None:
        """Inserts a token row (keys: every column but ``revoked_at``).

        Raises:
            AlreadyExists: the token id is taken (random ids: practically never).
        """
        try:
            with self._write() as c:
                self._x(c, "INSERT INTO tokens(token_id, memory_id, role, subject, "
                           "secret_hash, label, created_at, tenant_id) "
                           "VALUES (?,?,?,?,?,?,?,?)",
                        (row["token_id"], row["memory_id"], row["role"], row["subject"],
                         row["secret_hash"], row.get("label"), row["created_at"],
                         row.get("tenant_id") or "default"))
        except Exception as exc:
            if not is_unique_violation(exc) and not is_unique_violation(exc.__cause__ or exc):
                raise
            raise AlreadyExists(f"Token id {row['token_id']!r} already exists.",
                                token_id=row["token_id"]) from exc

    def token(self, token_id: str) -> dict[str, Any] | None:
        """The token row (with ``secret_hash``), or None."""
        return self._one(f"SELECT {', '.join(_COLUMNS)} FROM tokens WHERE token_id=?",
                         (token_id,))

    def list_tokens(self, memory_id: str | None = None) -> list[dict[str, Any]]:
        """Token rows without ``secret_hash``, oldest first; all memories when None."""
        cols = [c for c in _COLUMNS if c != "secret_hash"]
        q = f"SELECT {', '.join(cols)} FROM tokens"
        args: tuple[Any, ...] = ()
        if memory_id is not None:
            q += " WHERE memory_id=?"
            args = (memory_id,)
        return self._all(q + " ORDER BY created_at, "
                         + self.dialect.bytewise("token_id"), args)

    def revoke_token(self, token_id: str, at: str) -> bool:
        """Sets ``revoked_at`` (kept if already set); False when no such token."""
        with self._write() as c:
            cur = self._x(c, "UPDATE tokens SET revoked_at=coalesce(revoked_at, ?) "
                             "WHERE token_id=?", (at, token_id))
            return cur.rowcount > 0
