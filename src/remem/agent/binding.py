"""Which scopes an agent integration reads and writes (shared by tools, provider, session).

The caller is the person the agent is talking to: their scope (``user:alice``, or any
non-agent scope such as ``session:42``) is the only scope the integration writes. The agent's
scope (``agent:bot``) is read-only here: identity, rules, skills and lessons are edited by
people with write access, never by tools.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Protocol

from remem.domain.access import Principal, Role
from remem.domain.model import Scope, ScopeKind
from remem.errors import InvalidInput


class AgentMemory(Protocol):
    """The part of ``remem.Memory`` the agent integration uses (nothing else: a remote client
    offering these methods can stand in for an embedded memory)."""

    config: dict[str, Any]

    def recall(self, scopes: list[str], query: str, *, budget_tokens: int,
               **options: Any) -> Any: ...

    def profile(self, scopes: list[str], **options: Any) -> Any: ...

    def remember(self, scope: str, key: str, value: Any, **options: Any) -> Any: ...

    def forget(self, item_id: str | None = None, **options: Any) -> Any: ...

    def get(self, item_id: str) -> Any: ...

    def inspect(self, scope: str, key: str) -> Any: ...

    def items(self, **filters: Any) -> Any: ...

    def capture(self, scope: str, host_kind: str, host_id: str,
                turns: list[dict[str, Any]]) -> dict[str, Any]: ...

    def deactivate(self, scope: str, host_kind: str, host_id: str) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Binding:
    """The caller's own scope and the agent's scope.

    Attributes:
        user_scope: the caller's scope; the only scope tools write or forget in.
        agent_scope: the agent's scope (``agent:<id>``), read only; None for no agent.
    """

    user_scope: str
    agent_scope: str | None = None

    @classmethod
    def parse(cls, user_scope: str, agent_scope: str | None = None) -> Binding:
        """Validates the pair.

        Raises:
            InvalidInput: a malformed scope, an agent scope as the caller's scope, or a
                non-agent scope as the agent's.
        """
        user = Scope.parse(user_scope)
        if user.kind is ScopeKind.AGENT:
            raise InvalidInput(f"the caller's scope {user_scope!r} is an agent scope; give the "
                               "user's scope (e.g. 'user:alice') and the agent's separately.",
                               field="user_scope")
        if agent_scope is not None and Scope.parse(agent_scope).kind is not ScopeKind.AGENT:
            raise InvalidInput(f"agent scope {agent_scope!r} must look like 'agent:<id>'.",
                               field="agent_scope")
        return cls(str(user), agent_scope)

    @property
    def read_scopes(self) -> list[str]:
        """Scopes recall reads, the user's first: ``[user_scope, agent_scope]``."""
        return [self.user_scope] + ([self.agent_scope] if self.agent_scope else [])

    @property
    def actor(self) -> str:
        """Who the ledger records as writing through the tools: the agent, else ``agent``."""
        return self.agent_scope or "agent"


def scoped_memory(memory: Any, binding: Binding) -> Any:
    """The memory as the caller's own principal (writer of ``user_scope``; reads it and the
    agent scopes), so the service enforces the binding too. A memory already seen by a
    token's principal keeps that token and its role (at most writer): the binding narrows
    it, never widens it. A stand-in without ``as_principal`` (e.g. a remote client) is
    returned as it is.

    Raises:
        PermissionDenied: the memory is seen by a token of another scope than ``user_scope``.
    """
    as_principal = getattr(memory, "as_principal", None)
    if as_principal is None:
        return memory
    current = getattr(memory, "principal", None)
    if current is None or current.is_owner:
        return as_principal(Principal(memory.id, Role.WRITER, binding.user_scope))
    role = Role.WRITER if current.has_role(Role.WRITER) else current.role
    return as_principal(replace(current, role=role, subject=binding.user_scope))
