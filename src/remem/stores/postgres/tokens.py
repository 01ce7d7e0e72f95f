"""PostgreSQL rows for API bearer tokens (mixed into ``PostgresStore``); mirrors
``stores/sqlite/tokens.py``. Only a sha256 of the whole token is stored."""

from __future__ import annotations

from typing import Any

from psycopg import errors as pgerr

from remem.errors import AlreadyExists

_COLUMNS = ("token_id", "memory_id", "role", "subject", "secret_hash", "label", "created_at",
            "revoked_at")


class PostgresTokens:
    """Token storage; expects ``self.db`` (``connection.Database``) from ``PostgresStore``."""

    def create_token(self, row: dict[str, Any]) -> None:
        """Inserts a token row (keys: every column but ``revoked_at``).

        Raises:
            AlreadyExists: the token id is taken (random ids: practically never).
        """
        try:
            with self.db.transaction() as c:  # type: ignore[attr-defined]
                c.execute("INSERT INTO tokens(token_id, memory_id, role, subject, secret_hash, "
                          "label, created_at) VALUES (%s,%s,%s,%s,%s,%s,%s)",
                          (row["token_id"], row["memory_id"], row["role"], row["subject"],
                           row["secret_hash"], row.get("label"), row["created_at"]))
        except pgerr.UniqueViolation as exc:
            raise AlreadyExists(f"Token id {row['token_id']!r} already exists.",
                                token_id=row["token_id"]) from exc

    def token(self, token_id: str) -> dict[str, Any] | None:
        """The token row (with ``secret_hash``), or None."""
        return self.db.fetchone(f"SELECT {', '.join(_COLUMNS)} FROM tokens "  # type: ignore
                                "WHERE token_id=%s", (token_id,))

    def list_tokens(self, memory_id: str | None = None) -> list[dict[str, Any]]:
        """Token rows without ``secret_hash``, oldest first; all memories when None."""
        cols = [c for c in _COLUMNS if c != "secret_hash"]
        sql = f"SELECT {', '.join(cols)} FROM tokens"
        args: tuple[Any, ...] = ()
        if memory_id is not None:
            sql += " WHERE memory_id=%s"
            args = (memory_id,)
        return self.db.fetchall(sql + ' ORDER BY created_at, token_id COLLATE "C"',  # type: ignore
                                args)

    def revoke_token(self, token_id: str, at: str) -> bool:
        """Sets ``revoked_at`` (kept if already set); False when no such token."""
        with self.db.transaction() as c:  # type: ignore[attr-defined]
            cur = c.execute("UPDATE tokens SET revoked_at=coalesce(revoked_at, %s) "
                            "WHERE token_id=%s", (at, token_id))
            return cur.rowcount > 0
