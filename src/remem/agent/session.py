"""An agent's conversation with one user: the pinned prompt block and turn capture.

``Session.activate()`` pins, for the activation, the agent's identity, rules, skills and
lessons plus the user's profile slots and preferences. ``Session.prompt()`` returns that block
byte-identical at every step until the next ``activate()``: memory written meanwhile shows up
only after re-activation. The one exception is forgetting, which reaches pinned prompts: a
forgotten item leaves the block at the next step. The identity, rule, profile and preference
part is ``Memory.profile(..., activation_id=...)``, whose render the store keeps per
activation (and erases, then renders anew at the current head, when an item in it is
forgotten); skills and lessons (not profile kinds) are read once at activation and kept here,
each dropped once it is forgotten.

``Session.capture_turn()`` captures each turn after the host has persisted it: the turn is
sent with the conversation's tail to ``Memory.capture``, which observes only turns past the
conversation cursor (compare-and-set), so a resent turn is never recorded twice.

``Session.close()`` (or leaving ``with Session(...)``) deactivates the session: the memory's
consolidation is brought forward.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from remem.agent.binding import AgentMemory, Binding, scoped_memory
from remem.domain import render
from remem.domain.model import Kind
from remem.domain.timefmt import to_iso
from remem.errors import InvalidInput, NotFound
from remem.providers.registry import build_tokenizer

SECTION_ORDER = (Kind.IDENTITY.value, Kind.RULE.value, Kind.SKILL.value, Kind.LESSON.value,
                 Kind.PROFILE_SLOT.value, Kind.PREFERENCE.value)
SECTION_TITLES = {Kind.IDENTITY.value: "Identity", Kind.RULE.value: "Rules",
                  Kind.SKILL.value: "Skills", Kind.LESSON.value: "Lessons",
                  Kind.PROFILE_SLOT.value: "Profile", Kind.PREFERENCE.value: "Preferences"}
AGENT_KINDS_READ_HERE = (Kind.SKILL.value, Kind.LESSON.value)
CAPTURED_ROLES = ("user", "assistant")
MAX_AGENT_ITEMS = 1000


class Session:
    """One conversation of an agent with a user (activation, pinned block, capture).

    Args:
        memory: the bound ``Memory``.
        user_scope: the user's scope (captured turns and their profile).
        agent_scope: the agent's scope (identity, rules, skills, lessons), or None.
        conversation_id: the host's stable conversation id (capture cursor and run id);
            a random one by default.
        host_kind: the host's name for conversations (``chat``).
        profile_budget_tokens: budget of the pinned profile render (identity, rules,
            profile slots, preferences), tokens of its whole JSON document.
        agent_budget_tokens: budget of the skills and lessons lines, in tokens.
        tokenizer: tokenizer name for both budgets.
    """

    def __init__(self, memory: AgentMemory, *, user_scope: str, agent_scope: str | None = None,
                 conversation_id: str | None = None, host_kind: str = "chat",
                 profile_budget_tokens: int = 1500, agent_budget_tokens: int = 1500,
                 tokenizer: str = "o200k_base") -> None:
        self.binding = Binding.parse(user_scope, agent_scope)
        self.memory = scoped_memory(memory, self.binding)
        self.conversation_id = conversation_id or f"conv_{uuid.uuid4().hex[:16]}"
        self.host_kind = host_kind
        self.profile_budget_tokens = render.check_budget(profile_budget_tokens,
                                                         "profile_budget_tokens")
        self.agent_budget_tokens = render.check_budget(agent_budget_tokens,
                                                       "agent_budget_tokens")
        self.tokenizer = build_tokenizer(tokenizer)
        self.activation_id: str | None = None
        self._agent_items: list[dict[str, Any]] = []
        self._agent_truncated = False
        self._turns: list[dict[str, Any]] = []
        self._captured = 0
        #: True once ``close()`` deactivated the session.
        self.closed = False

    # --- activation and the pinned block ----------------------------------------------------
    @property
    def pinned_scopes(self) -> list[str]:
        """Scopes of the pinned block, the agent's first."""
        return ([self.binding.agent_scope] if self.binding.agent_scope else []) + \
            [self.binding.user_scope]

    def activate(self, activation_id: str | None = None) -> str:
        """Starts a new activation: the next ``prompt()`` renders current memory and keeps
        it until the next ``activate()``. Returns the activation id (random by default)."""
        self.activation_id = activation_id or f"act_{uuid.uuid4().hex}"
        self._agent_items, self._agent_truncated = self._read_agent_items()
        self._profile()  # render and store the activation's profile now
        return self.activation_id

    def prompt(self) -> str:
        """The pinned block: byte-identical at every call until the next ``activate()``
        (an item forgotten meanwhile is erased from it). Activates on first use."""
        if self.activation_id is None:
            self.activate()
        profile = self._profile()
        self._agent_items = [d for d in self._agent_items if self._alive(d["id"])]
        items = [d for d in profile.items if d["kind"] not in AGENT_KINDS_READ_HERE]
        return _render_block(self.pinned_scopes, items + self._agent_items,
                             profile.truncated or self._agent_truncated)

    def _profile(self) -> Any:
        return self.memory.profile(self.pinned_scopes, budget_tokens=self.profile_budget_tokens,
                                   tokenizer=self.tokenizer.name,
                                   activation_id=self.activation_id)

    def _read_agent_items(self) -> tuple[list[dict[str, Any]], bool]:
        if not self.binding.agent_scope:
            return [], False
        found, truncated = [], False
        for kind in AGENT_KINDS_READ_HERE:
            page = self.memory.items(scope=self.binding.agent_scope, kind=kind,
                                     status="current", limit=MAX_AGENT_ITEMS)
            found += [{"id": v.item_id, "scope": v.scope, "key": v.key, "value": v.value,
                       "kind": v.kind} for v in page.items]
            truncated = truncated or page.next_cursor is not None
        found.sort(key=lambda d: (d["key"], d["id"]))
        kept, used = [], 0
        for d in found:
            cost = self.tokenizer.count(_line(d)) + 1
            if used + cost > self.agent_budget_tokens:
                truncated = True
                continue
            kept.append(d)
            used += cost
        return kept, truncated

    def _alive(self, item_id: str) -> bool:
        try:
            self.memory.get(item_id)
        except NotFound:
            return False
        return True

    # --- capture ---------------------------------------------------------------------------
    def capture_turn(self, role: str, text: str, *, turn_id: str | None = None,
                     occurred_at: datetime | None = None) -> dict[str, Any]:
        """Captures one turn the host has just persisted (user or assistant).

        Args:
            role: ``user`` or ``assistant`` (tool results are not captured: they repeat
                memory or third-party text, which are not statements of the user).
            text: the turn's text.
            turn_id: the host's stable message id (the source id); unique by default.
            occurred_at: when it was said (aware datetime); now by default.

        Returns:
            ``Memory.capture``'s result: ``{"position", "captured", "skipped"}``.

        Raises:
            InvalidInput: another role, or a text the memory refuses (too long, NUL).
            CursorMismatch: another writer moved the cursor meanwhile (resend).
        """
        if role not in CAPTURED_ROLES:
            raise InvalidInput(f"role {role!r} is not captured; capture user or assistant "
                               "turns.", field="role")
        turn: dict[str, Any] = {"id": turn_id or f"{self.conversation_id}:{uuid.uuid4().hex[:12]}",
                                "role": role, "text": text}
        if occurred_at is not None:
            turn["occurred_at"] = to_iso(occurred_at, field="occurred_at")
        self._turns.append(turn)
        tail = self._turns[max(self._captured - 1, 0):]  # the last captured turn anchors it
        try:
            out = self.memory.capture(self.binding.user_scope, self.host_kind,
                                      self.conversation_id, tail)
        except Exception:
            self._turns.pop()  # not captured: a refused turn must not block later ones
            raise
        self._captured = len(self._turns)
        return out

    @property
    def turns(self) -> list[dict[str, Any]]:
        """Turns captured through this session, oldest first."""
        return list(self._turns)

    # --- end of the session ------------------------------------------------------------------
    def close(self) -> dict[str, Any] | None:
        """Ends the session (KickSide ``deactivate``): the memory's consolidation is brought
        forward. Every turn was already captured by ``capture_turn``; closing twice does
        nothing the second time. Returns ``Memory.deactivate``'s result (None when already
        closed)."""
        if self.closed:
            return None
        out = self.memory.deactivate(self.binding.user_scope, self.host_kind,
                                     self.conversation_id)
        self.closed = True
        return out

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _line(d: dict[str, Any]) -> str:
    return f"- {d['key']}: {render.value_text(d['value'])}"


def _render_block(scopes: list[str], items: list[dict[str, Any]], truncated: bool) -> str:
    """The pinned block: per scope (agent first), per kind, sorted lines; deterministic."""
    out = ["# Pinned memory (fixed for this conversation)"]
    for scope in scopes:
        mine = [d for d in items if d["scope"] == scope]
        owner = "Agent" if scope.startswith("agent:") else "User"
        out.append(f"## {owner} {scope}")
        if not mine:
            out.append("(nothing pinned)")
        for kind in SECTION_ORDER:
            lines = sorted(_line(d) for d in mine if d["kind"] == kind)
            if lines:
                out.append(f"### {SECTION_TITLES[kind]}")
                out.extend(lines)
    if truncated:
        out.append("(some pinned items did not fit the budget)")
    return "\n".join(out)
