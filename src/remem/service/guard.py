"""Guard: the service's one access check of a principal against parsed scopes and targets.

Every ``Memory`` operation asks its guard before it reads or writes. Scopes a request names
explicitly are checked with :func:`remem.domain.access.may` (``PermissionDenied`` names the
scope: a scope is a name the caller chose, not data). Targets named by id — items, sources,
receipts, conflict groups — are looked up first (and a memory of another tenant is not
reachable at all: :func:`check_tenant`); one that does not exist and one in a scope the
caller may not read give the **same** ``NotFoundOrNotVisible`` (same message, same details apart
from the id the caller sent), so no answer tells whether something exists elsewhere.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from remem.domain.access import Operation, Principal, Role, can_read, can_write, may
from remem.domain.model import Scope
from remem.errors import InvalidInput, NotFound, NotFoundOrNotVisible, PermissionDenied


def hidden_memory(memory_id: Any) -> NotFoundOrNotVisible:
    """The one answer for a memory that does not exist or that the caller cannot reach
    (another memory's token, another tenant's memory)."""
    return NotFoundOrNotVisible(f"Memory {memory_id!r} was not found or is not visible to this "
                                "caller.", memory=memory_id)


def check_tenant(principal: Principal, memory_id: str, tenant_id: str | None) -> None:
    """The tenant part of the one access check: a token principal reaches memories of its own
    tenant only; a memory of another tenant reads exactly like one that does not exist.

    Raises:
        NotFoundOrNotVisible: the memory is not in the principal's tenant (or has none).
    """
    if not principal.in_tenant(tenant_id):
        raise hidden_memory(memory_id)


def hidden(what: str, ref: Any, field: str) -> NotFoundOrNotVisible:
    """The one "not found or not visible" answer for a target the caller named."""
    return NotFoundOrNotVisible(f"{what} {ref!r} was not found or is not visible to this caller.",
                                **{field: ref})


class Guard:
    """A principal bound to one memory's store.

    Args:
        principal: who is calling.
        ctx: the memory's context (store and id are used for by-id lookups).
    """

    def __init__(self, principal: Principal, ctx: Any) -> None:
        if principal.tenant_id is not None:  # read now: never a cached context's tenant
            check_tenant(principal, ctx.id, ctx.store.memory_tenant(ctx.id))
        self.principal = principal
        self.ctx = ctx

    @property
    def actor(self) -> str:
        return self.principal.actor

    @property
    def is_scoped(self) -> bool:
        """True when the principal reaches only its own (and agent) scopes."""
        return self.principal.scope is not None

    # --- scopes the request names ----------------------------------------------------------
    def read(self, scopes: str | Iterable[str]) -> list[str]:
        """Canonical scopes, each readable by the principal.

        Raises:
            InvalidInput: a malformed scope. PermissionDenied: a scope it may not read.
        """
        out = [str(Scope.parse(s)) for s in ([scopes] if isinstance(scopes, str) else scopes)]
        for s in out:
            if not may(self.principal, Operation.READ, [s]):
                raise PermissionDenied(f"This caller (subject {self.principal.subject}) may not "
                                       f"read scope {s}.", scope=s)
        return out

    def write(self, scope: str) -> str:
        """The canonical scope when the principal may write it.

        Raises:
            InvalidInput: a malformed scope. PermissionDenied: role below writer, or a scope
                other than its own.
        """
        s = str(Scope.parse(scope))
        self.role(Role.WRITER, "write")
        if not may(self.principal, Operation.WRITE, [s]):
            raise PermissionDenied(f"This caller (subject {self.principal.subject}) may not "
                                   f"write scope {s}; a scope is written only by its own "
                                   "subject or a memory-wide one.", scope=s)
        return s

    def role(self, role: Role, action: str) -> None:
        """Raises PermissionDenied unless the principal's role is at least ``role``."""
        if not self.principal.has_role(role):
            raise PermissionDenied(f"A {self.principal.role} caller may not {action}; it needs "
                                   f"role {role} or higher.", role=self.principal.role.value,
                                   needed=role.value)

    def manage(self, action: str) -> None:
        """Memory-wide operations: role admin with a memory-wide subject."""
        if not may(self.principal, Operation.MANAGE):
            raise PermissionDenied(f"Only an admin caller with subject 'admin' may {action}.",
                                   role=self.principal.role.value,
                                   subject=self.principal.subject)

    def label_tenant(self, tenant: str | None, own_tenant: str | None) -> None:
        """An export may name a tenant other than the memory's own only for the owner (the
        embedding program restoring or migrating data); a token's export is its tenant's."""
        if tenant is not None and tenant != own_tenant and not self.principal.is_owner:
            raise PermissionDenied("Only the embedding program may label an export with "
                                   "another tenant; leave tenant out.",
                                   role=self.principal.role.value,
                                   subject=self.principal.subject)

    def listing_scope(self, scope: str | None) -> str | None:
        """The scope a listing is narrowed to: the subject's own when none is given."""
        if scope is None:
            return self.principal.scope
        return self.read(scope)[0]

    def readable(self, scope: str) -> bool:
        return can_read(self.principal, scope)

    def writable(self, scope: str) -> bool:
        return can_write(self.principal, scope)

    # --- targets named by id ---------------------------------------------------------------
    def item(self, item_id: Any) -> Any:
        """The item's record when it exists and is readable; else the neutral answer."""
        rec = self.ctx.store.item(self.ctx.id, item_id) if isinstance(item_id, str) else None
        if rec is None or not self.readable(rec.scope):
            raise hidden("Item", item_id, "item_id")
        return rec

    def writable_item(self, item_id: Any) -> Any:
        """A visible item the principal may also write (PermissionDenied when only readable)."""
        rec = self.item(item_id)
        self.write(rec.scope)
        return rec

    def refreshable(self, item_id: Any) -> Any:
        """A visible item the principal may write: refreshing a cached fact may supersede
        it with its source's value (role writer or higher, on the item's scope); a reader
        gets PermissionDenied, an invisible item the neutral answer."""
        return self.writable_item(item_id)

    def receipt(self, receipt_id: Any) -> Any:
        """A visible receipt (``Receipt``); else the neutral answer."""
        try:
            rc = self.ctx.intake.get(receipt_id) if isinstance(receipt_id, str) else None
        except NotFound:
            rc = None
        if rc is None or not self.readable(rc.scope):
            raise hidden("Receipt", receipt_id, "receipt_id")
        return rc

    # --- per-scope names ----------------------------------------------------------------
    def scoped_name(self, scope: str, name: str | None) -> str | None:
        """A caller-chosen source id or idempotency key in the caller's namespace.

        A scoped token's names live under its scope (``user:alice/turn-1``), so two users
        never collide on, squat on or probe each other's ids; a memory-wide principal (owner,
        admin subject) and an in-process principal (built by the embedding program, which
        chooses its own ids) name things as given, except a name inside another scope's
        namespace (``user:alice/t1`` written to ``user:bob``), which goes under the target
        scope's (``user:bob/user:alice/t1``): no one can squat on a token's namespace.
        """
        if name is None:
            return name
        prefix = f"{scope}/"
        if self.principal.scope is None or self.principal.token_id is None:
            # as given, unless it lies in another scope's namespace: that one stays its own
            return prefix + name if names_other_scope(name, scope) else name
        return name if name.startswith(prefix) else prefix + name

    def find_source(self, ref: Any) -> dict[str, Any] | None:
        """The visible source a caller's reference names (its own namespace first), or None."""
        if not isinstance(ref, str):
            return None
        own = self.principal.scope
        for sid in dict.fromkeys([self.scoped_name(own, ref) if own else ref, ref]):
            row = self.ctx.store.source(self.ctx.id, sid)
            if row is not None and self.readable(row["scope"]):
                return row
        return None

    def source(self, source_id: Any) -> dict[str, Any]:
        """A visible source row; else the neutral answer."""
        row = self.find_source(source_id)
        if row is None:
            raise hidden("Source", source_id, "source_id")
        return row


__all__ = ["Guard", "check_tenant", "hidden", "hidden_memory"]


def names_other_scope(name: str, scope: str) -> bool:
    """Whether ``name`` starts with a scope handle other than ``scope`` and a ``/`` (a name
    inside another scope's namespace, e.g. ``user:bob/t1`` for ``user:maya``)."""
    head, sep, _ = name.partition("/")
    if not sep or head == scope:
        return False
    try:
        Scope.parse(head)
    except InvalidInput:
        return False
    return True
