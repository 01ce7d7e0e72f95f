"""API bearer tokens: each authenticates to a ``Principal`` (rules in ``domain.access``).

A token reads ``rmm_<token_id>_<secret>``. Only ``sha256(token)`` is stored; authentication
looks the row up by id and compares digests with ``hmac.compare_digest``. Each token is bound
to one memory, one role and one subject:

- role ``reader`` reads; ``writer`` also writes (remember, correct, apply, forget, archive,
  restore, retention); ``admin`` also sets legal holds and resolves conflicts, and with subject
  ``admin`` manages the memory (config, tokens, delete).
- subject ``admin`` reaches every scope of the memory; a scope subject such as ``user:alice``
  reads its own scope and every ``agent:*`` scope of the memory, and writes only its own scope.
  So agent scopes (identity, rules) are written only by their agent or by an ``admin`` subject.
- a token of memory M reaches nothing in memory N.
- a subject is ``admin`` or a canonical scope handle (``Scope.parse``): no wildcards
  (``user:*``, ``*``), no case or whitespace variants. A stored token whose subject is not
  (one made before this rule) no longer authenticates.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from typing import Any

from remem.domain.access import ADMIN_SUBJECT, Principal, Role
from remem.domain.jsondoc import has_lone_surrogate, lone_surrogate
from remem.domain.model import Scope
from remem.domain.timefmt import to_iso
from remem.errors import InvalidInput, NotFoundOrNotVisible, Unauthenticated

TOKEN_PREFIX = "rmm"
_TOKEN_RE = re.compile(r"rmm_([0-9a-f]{16})_[A-Za-z0-9_-]{20,128}")
_DUMMY_HASH = hashlib.sha256(b"rmm_none_none").hexdigest()
_BAD_TOKEN = ("Missing or invalid bearer token; send 'Authorization: Bearer rmm_...' with a "
              "token from `remem token create`.")


@dataclass(frozen=True)
class TokenInfo:
    """A token's public row (never the token or its hash)."""

    token_id: str
    memory_id: str
    role: str
    subject: str
    label: str | None
    created_at: str
    revoked_at: str | None
    tenant_id: str = "default"

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class Tokens:
    """Creates, lists, revokes and authenticates tokens of one database.

    Args:
        store: a ``RememStore`` (its adapter stores the rows, its clock stamps them).
    """

    def __init__(self, store: Any) -> None:
        self.adapter = store.adapter
        self.clock = store.clock

    def create(self, memory_id: str, role: str, subject: str,
               label: str | None = None, *,
               tenant_id: str | None = None) -> tuple[str, TokenInfo]:
        """Creates a token; the memory need not exist yet (an admin token may create it).
        The token is bound to the memory's tenant: the existing memory's, else ``tenant_id``
        (None: ``default``); it reaches no memory of another tenant.

        Returns:
            (the token string, shown once; its TokenInfo).

        Raises:
            InvalidInput: bad memory id, role, subject, label or tenant id, or a tenant other
                than the existing memory's.
        """
        from remem.service.store import _check_memory_id, check_tenant_id

        _check_memory_id(memory_id)
        tenant_id = _token_tenant(self.adapter.memory_tenant(memory_id), tenant_id)
        check_tenant_id(tenant_id)
        role = _role(role)
        subject = _subject(subject)
        if isinstance(label, str) and has_lone_surrogate(label):
            raise lone_surrogate("label")
        if label is not None and (not isinstance(label, str) or len(label.encode()) > 256):
            raise InvalidInput("label must be a string of at most 256 bytes.", field="label")
        token_id = secrets.token_hex(8)
        token = f"{TOKEN_PREFIX}_{token_id}_{secrets.token_urlsafe(32)}"
        row = {"token_id": token_id, "memory_id": memory_id, "role": role.value,
               "subject": subject, "secret_hash": _digest(token), "label": label,
               "created_at": to_iso(self.clock.now()), "tenant_id": tenant_id}
        self.adapter.create_token(row)
        return token, _info(row)

    def list(self, memory_id: str | None = None) -> list[TokenInfo]:
        """Tokens of one memory (or all), oldest first, revoked ones included."""
        return [_info(r) for r in self.adapter.list_tokens(memory_id)]

    def revoke(self, token_id: str, *, memory_id: str | None = None) -> TokenInfo:
        """Revokes a token (idempotent). With ``memory_id``, only a token of that memory.

        Raises:
            NotFoundOrNotVisible: no such token (in that memory).
        """
        row = self.adapter.token(token_id) if isinstance(token_id, str) else None
        if row is None or (memory_id is not None and row["memory_id"] != memory_id):
            raise NotFoundOrNotVisible(f"Token {token_id!r} was not found or is not visible.",
                                       token_id=token_id)
        self.adapter.revoke_token(token_id, to_iso(self.clock.now()))
        return _info(self.adapter.token(token_id))

    def authenticate(self, token: str | None) -> Principal:
        """The principal of a live token.

        Raises:
            Unauthenticated: missing, malformed, unknown or revoked (one message for all).
        """
        m = _TOKEN_RE.fullmatch(token) if isinstance(token, str) else None
        token_id = m.group(1) if m else ""
        row = self.adapter.token(token_id) if token_id else None
        presented = _digest(token) if isinstance(token, str) else ""
        stored = row["secret_hash"] if row else _DUMMY_HASH
        ok = hmac.compare_digest(stored.encode(), presented.encode())
        if not ok or row is None or row["revoked_at"] is not None \
                or not _valid_subject(row["subject"]):  # e.g. 'user:*' from before the rule
            raise Unauthenticated(_BAD_TOKEN)
        return Principal(row["memory_id"], Role(row["role"]), row["subject"], row["token_id"],
                         row.get("tenant_id") or "default")


def _token_tenant(memory_tenant: str | None, given: str | None) -> str:
    if memory_tenant is not None and given is not None and given != memory_tenant:
        raise InvalidInput(f"This memory belongs to tenant {memory_tenant!r}; a token of it is "
                           "bound to that tenant. Omit --tenant or give that one.",
                           field="tenant")
    return memory_tenant or given or "default"


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def _role(role: Any) -> Role:
    try:
        return Role(role)
    except ValueError as exc:
        raise InvalidInput(f"role {role!r} must be one of reader, writer, admin.",
                           field="role") from exc


def _subject(subject: Any) -> str:
    """'admin' or a canonical scope handle (``Scope.parse``: no wildcards, no case or
    whitespace variants)."""
    if subject == ADMIN_SUBJECT:
        return subject
    try:
        scope = str(Scope.parse(subject))
    except InvalidInput as exc:
        raise InvalidInput(f"subject {subject!r} must be 'admin' or a scope handle such as "
                           "'user:alice' or 'agent:bot'.", field="subject") from exc
    if any(c in scope for c in "/%?"):
        # '/' separates a scoped token's names from its scope (Guard); '%' and '?' read as
        # wildcards to people and to SQL, and a token never matches more than one scope
        raise InvalidInput(f"subject {subject!r}: a token's scope id may not contain '/', '%' "
                           "or '?' (a token reaches exactly one scope).", field="subject")
    return scope


def _valid_subject(subject: Any) -> bool:
    try:
        return _subject(subject) == subject
    except InvalidInput:
        return False


def _info(row: dict[str, Any]) -> TokenInfo:
    return TokenInfo(row["token_id"], row["memory_id"], row["role"], row["subject"],
                     row.get("label"), row["created_at"], row.get("revoked_at"),
                     row.get("tenant_id") or "default")
