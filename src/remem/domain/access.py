"""Who may do what: principals and the one access rule (pure; no I/O).

A **principal** is who is calling. The embedding program is the ``owner`` of every memory it
opens; an API token is bound to one memory, a role and a subject:

- role ``reader`` reads; ``writer`` also writes (remember, correct, observe, apply, forget,
  archive, restore, retention); ``admin`` also sets legal holds and resolves conflicts.
- subject ``admin`` reaches every scope of its memory and, with role ``admin``, manages the
  memory (config, tokens, status, runs, delete). A scope subject such as ``user:alice`` reads its
  own scope and every ``agent:*`` scope of the memory and writes only its own scope.

The service calls :func:`may` once per operation on the parsed scopes and on the scopes of the
items, sources, receipts and conflict groups a by-id request names; interfaces never decide.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from remem.domain.model import Scope, ScopeKind

ADMIN_SUBJECT = "admin"
OWNER_SUBJECT = "owner"


class Role(StrEnum):
    READER = "reader"
    WRITER = "writer"
    ADMIN = "admin"


_RANK = {Role.READER: 0, Role.WRITER: 1, Role.ADMIN: 2}


class Operation(StrEnum):
    """What a principal asks to do; :func:`may` decides it for a set of scopes."""

    READ = "read"
    WRITE = "write"
    HOLD = "hold"            # set or release a legal hold (role admin)
    RESOLVE = "resolve"      # resolve a conflict group (role admin, scope writable)
    MANAGE = "manage"        # memory-wide: config, tokens, status, runs, jobs, delete


_NEEDS_ROLE = {Operation.READ: Role.READER, Operation.WRITE: Role.WRITER,
               Operation.HOLD: Role.ADMIN, Operation.RESOLVE: Role.ADMIN,
               Operation.MANAGE: Role.ADMIN}


@dataclass(frozen=True)
class Principal:
    """Who is calling.

    Attributes:
        memory_id: the only memory a token principal reaches; None for the owner (any).
        role: reader | writer | admin (the owner is admin).
        subject: ``owner``, ``admin`` or a canonical scope handle such as ``user:alice``.
        token_id: the token's public id, None for the owner.
        tenant_id: the only tenant a token principal reaches (its memory's); None for the
            owner (every tenant of the database it opened).
    """

    memory_id: str | None
    role: Role
    subject: str
    token_id: str | None = None
    tenant_id: str | None = None

    @classmethod
    def owner(cls) -> Principal:
        """The embedding program: every scope of every memory it opens."""
        return cls(None, Role.ADMIN, OWNER_SUBJECT)

    @property
    def is_owner(self) -> bool:
        return self.token_id is None and self.subject == OWNER_SUBJECT

    @property
    def actor(self) -> str:
        """Who the ledger records: ``owner`` or ``token:<token_id>``."""
        return "owner" if self.token_id is None else f"token:{self.token_id}"

    @property
    def scope(self) -> str | None:
        """The subject's own scope, or None for a memory-wide subject (owner, admin)."""
        return None if self.subject in (ADMIN_SUBJECT, OWNER_SUBJECT) else self.subject

    def has_role(self, role: Role) -> bool:
        return _RANK[self.role] >= _RANK[role]

    def reaches(self, memory_id: str) -> bool:
        return self.memory_id is None or self.memory_id == memory_id

    def in_tenant(self, tenant_id: str | None) -> bool:
        """Whether a memory of ``tenant_id`` is in this principal's tenant (None: no memory)."""
        return self.tenant_id is None or self.tenant_id == tenant_id


def can_read(principal: Principal, scope: str) -> bool:
    """Whether ``principal`` may read ``scope`` (a canonical handle)."""
    own = principal.scope
    if own is None or scope == own:
        return True
    try:
        return Scope.parse(scope).kind is ScopeKind.AGENT
    except Exception:  # noqa: BLE001 - an unparsable stored scope is never readable
        return False


def can_write(principal: Principal, scope: str) -> bool:
    """Whether ``principal`` may write ``scope``: role writer and its own scope."""
    return principal.has_role(Role.WRITER) and principal.scope in (None, scope)


def may(principal: Principal, operation: Operation, scopes: Iterable[str] = ()) -> bool:
    """The one access rule: may ``principal`` do ``operation`` on every one of ``scopes``?

    ``MANAGE`` ignores scopes and needs role admin with a memory-wide subject.
    """
    if not principal.has_role(_NEEDS_ROLE[operation]):
        return False
    if operation is Operation.MANAGE:
        return principal.scope is None
    check = can_read if operation is Operation.READ else can_write
    return all(check(principal, s) for s in scopes)


def narrows(current: Principal, new: Principal) -> bool:
    """Whether ``new`` reaches no further than ``current`` (``Memory.as_principal``).

    The owner may act as any principal. A token's principal may only be narrowed: the same
    memory, tenant and token, no higher role, never the owner; a scoped subject keeps its
    scope (a memory-wide ``admin`` subject may narrow to any scope of its memory).
    """
    if current.is_owner:
        return True
    return (new.memory_id == current.memory_id and new.tenant_id == current.tenant_id
            and new.token_id == current.token_id and new.subject != OWNER_SUBJECT
            and _RANK[new.role] <= _RANK[current.role]
            and (current.scope is None or new.subject == current.subject))


__all__ = ["ADMIN_SUBJECT", "OWNER_SUBJECT", "Operation", "Principal", "Role", "can_read",
           "can_write", "may", "narrows"]
