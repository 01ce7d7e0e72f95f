"""Memory tools for agents: OpenAI function-calling schemas and one dispatcher.

Three tools (the KickSide seed's names)::

    SearchMemory(query, budget_tokens=600)   recall in the user's and the agent's scopes
    Remember(key, value, kind="fact")        remember in the caller's own scope
    ForgetMemory(item_id | key)              forget for real in the caller's own scope

``MemoryTools.call(name, arguments)`` never raises for a model's mistake: every result is a
JSON object, ``{"ok": true, ...}`` or ``{"ok": false, "error": {"code", "message",
"retryable", "details"}}`` with the stable code of :mod:`remem.errors` and a message saying
what to do, so the model can correct itself. Rules enforced here:

- every call is parsed into a typed request first (:mod:`remem.agent.toolspec`): an
  argument the tool does not publish, ``scope`` included, or a wrong JSON type is an
  ``invalid_input`` result naming the argument, and nothing runs;
- tools write only to the bound memory and only to the caller's scope (bound at
  construction, never an argument);
- Remember writes only user-owned kinds (fact, preference, profile_slot); a key that spells
  out its value is refused with a suggested key;
- ForgetMemory never touches the agent's identity, rules, skills or lessons, and an item the
  caller cannot see is ``not_found_or_not_visible`` (no hint that it exists).
"""

from __future__ import annotations

import json
import re
from typing import Any

from remem.agent.binding import AgentMemory, Binding, scoped_memory
from remem.agent.toolspec import (  # re-exported: the published names live in toolspec
    DEFAULT_BUDGET_TOKENS,
    DESCRIPTIONS,
    FORGET_MEMORY,
    MAX_BUDGET_TOKENS,
    MIN_BUDGET_TOKENS,
    PROPERTIES,
    REMEMBER,
    REQUIRED,
    SEARCH_MEMORY,
    TOOL_NAMES,
    WRITABLE_KINDS,
    ForgetMemoryRequest,
    RememberRequest,
    SearchMemoryRequest,
    parse_call,
    tool_schema,
    tool_schemas,
)
from remem.domain.canonical import normalize_text
from remem.domain.limits import key_names_value
from remem.domain.model import AGENT_OWNED_KINDS, Kind, parse_key
from remem.errors import (
    InvalidInput,
    NotFound,
    NotFoundOrNotVisible,
    PermissionDenied,
    RememError,
    RevisionMismatch,
)

__all__ = [
    "DEFAULT_BUDGET_TOKENS", "DESCRIPTIONS", "FORGET_MEMORY", "MAX_BUDGET_TOKENS",
    "MIN_BUDGET_TOKENS", "PROPERTIES", "REMEMBER", "REQUIRED", "SEARCH_MEMORY", "TOOL_NAMES",
    "WRITABLE_KINDS", "MemoryTools", "suggest_key", "tool_schema", "tool_schemas",
]


def _within(out: dict[str, Any], budget: int, tokenizer: str) -> dict[str, Any]:
    """The tool result trimmed to ``budget`` tokens of its JSON: recall budgets its compact
    text, and this structured shape costs more, so the lowest-ranked sources, then items, are
    dropped (``truncated`` and their channel's coverage say so)."""
    from remem.providers.registry import build_tokenizer

    tok = build_tokenizer(tokenizer)
    while tok.count(json.dumps(out)) > budget and (out["sources"] or out["items"]):
        channel, rows = ("sources", out["sources"]) if out["sources"] else ("facts",
                                                                            out["items"])
        rows.pop()
        out["truncated"] = True
        out["coverage"][channel] = "incomplete"
    return out

class MemoryTools:
    """Dispatches tool calls to one memory, for one caller.

    Args:
        memory: the bound ``Memory`` (writes never reach another memory).
        user_scope: the caller's own scope, the only one written or forgotten in.
        agent_scope: the agent's scope (``agent:<id>``), searched but never written.

    Raises:
        InvalidInput: malformed scopes (at construction).
    """

    def __init__(self, memory: AgentMemory, *, user_scope: str,
                 agent_scope: str | None = None) -> None:
        self.binding = Binding.parse(user_scope, agent_scope)
        self.memory = scoped_memory(memory, self.binding)

    @staticmethod
    def schemas() -> list[dict[str, Any]]:
        return tool_schemas()

    # --- dispatch ----------------------------------------------------------------------------
    def call(self, name: str, arguments: str | dict[str, Any] | None) -> dict[str, Any]:
        """Runs one tool call; returns its JSON result (``ok`` true or false), never raises
        a :class:`RememError`.

        Args:
            name: SearchMemory, Remember or ForgetMemory.
            arguments: the call's arguments, as the JSON text the model produced or a dict;
                parsed by :func:`remem.agent.toolspec.parse_call` (unknown arguments,
                ``scope`` and wrong JSON types are ``invalid_input`` results; nothing runs).
        """
        try:
            request = parse_call(name, arguments, scopes_note=self._scopes_note())
            if isinstance(request, SearchMemoryRequest):
                return self.search_memory(request.query, request.budget_tokens,
                                          mode=request.mode, filters=request.filters)
            if isinstance(request, RememberRequest):
                return self.remember(request.key, request.value, request.kind)
            assert isinstance(request, ForgetMemoryRequest)
            return self.forget_memory(item_id=request.item_id, key=request.key)
        except RememError as exc:
            return {"ok": False, "error": exc.to_dict()}

    def tool_message(self, tool_call: Any) -> dict[str, Any]:
        """Runs an OpenAI tool call (object or dict) and returns the ``role: tool`` message
        to append to the conversation."""
        get = (lambda o, k: o.get(k)) if isinstance(tool_call, dict) else getattr
        fn = get(tool_call, "function")
        result = self.call(get(fn, "name"), get(fn, "arguments"))
        return {"role": "tool", "tool_call_id": get(tool_call, "id"),
                "content": json.dumps(result, ensure_ascii=False)}

    def _scopes_note(self) -> str:
        b = self.binding
        return f"reads {' and '.join(b.read_scopes)} and writes only {b.user_scope}"

    # --- the tools (raise RememError) --------------------------------------------------------
    def search_memory(self, query: Any, budget_tokens: Any = DEFAULT_BUDGET_TOKENS, *,
                      mode: str = "hybrid", filters: dict[str, Any] | None = None
                      ) -> dict[str, Any]:
        """Recall in the user's and the agent's scopes within ``budget_tokens``.

        Returns:
            ``{"ok", "items": [{id, key, value, kind, status, scope, valid_at}],
            "sources": [{id, label, role, occurred_at, text}], "truncated", "coverage"}``;
            its JSON fits ``budget_tokens`` (lowest-ranked entries dropped, see ``_within``).

        Raises:
            InvalidInput: empty query, a budget outside 64-4000, an unknown mode, or a
                filter that cannot be honoured (``remem.domain.filters``).
        """
        if not isinstance(query, str):
            raise InvalidInput("query must be a string.", field="query")
        budget = _budget(budget_tokens)
        result = self.memory.recall(self.binding.read_scopes, query, budget_tokens=budget,
                                    mode=mode, filters=filters)
        return _within({"ok": True,
                        "items": [{"id": i.id, "key": i.key, "value": i.value, "kind": i.kind,
                                   "status": i.status, "scope": i.scope,
                                   "valid_at": i.valid_at} for i in result.items],
                        "sources": [{"id": s.id, "label": s.label, "role": s.role,
                                     "occurred_at": s.occurred_at, "text": s.text}
                                    for s in result.sources],
                        "truncated": result.truncated, "coverage": dict(result.coverage)},
                       budget, result.tokenizer)

    def remember(self, key: Any, value: Any, kind: Any = None) -> dict[str, Any]:
        """Remembers ``value`` under ``key`` in the caller's scope (explicit remember).

        Without ``kind``: the kind the memory's config declares for the key when Remember may
        write it, else ``fact``.

        Returns:
            ``{"ok", "outcome", "item_id", "scope", "key", "revision", "status"}``.

        Raises:
            PermissionDenied: an agent-owned kind (identity, rule, skill, lesson).
            InvalidInput: bad key, value or kind; a key containing the value (the message
                suggests a key).
        """
        parse_key(key)
        if kind is None:
            declared = self.memory.config.get("keys", {}).get(key, {}).get("kind")
            kind = declared if declared in WRITABLE_KINDS else Kind.FACT.value
        kind = _writable_kind(kind)
        if isinstance(value, str) and key_names_value(key, value):
            raise _key_contains_value(key, value)
        r = self.memory.remember(self.binding.user_scope, key, value, kind=kind,
                                 actor=self.binding.actor)
        return {"ok": True, "outcome": r.outcome, "item_id": r.item_id, "scope": r.scope,
                "key": r.key, "revision": r.revision, "status": r.status}

    def forget_memory(self, *, item_id: Any = None, key: Any = None) -> dict[str, Any]:
        """Forgets one item (by id) or a key's current value(s) in the caller's scope.

        Returns:
            ``{"ok", "state", "items", "tombstones"}``: the erasure report's state
            (completed | pending) and the item ids erased.

        Raises:
            InvalidInput: neither or both of item_id and key.
            NotFoundOrNotVisible: no such item visible to the caller.
            NotFound: nothing current under the key in the caller's scope.
            PermissionDenied: the item is the agent's (identity, rule, skill, lesson) or
                another scope's.
            LegalHoldActive: the item is under a legal hold.
        """
        if (item_id is None) == (key is None):
            raise InvalidInput("ForgetMemory needs exactly one of item_id or key.",
                               field="item_id")
        user = self.binding.user_scope
        if item_id is not None:
            self._check_forgettable(item_id)
            report = self.memory.forget(item_id, caller_scope=user, actor=self.binding.actor)
        else:
            parse_key(key)
            report = self._forget_key(key)
        return {"ok": True, "state": report.state, "items": report.items,
                "tombstones": report.tombstones}

    def _check_forgettable(self, item_id: Any) -> None:
        hidden = NotFoundOrNotVisible(
            f"No memory item {item_id!r} is visible here; call SearchMemory and use an id it "
            "returns.", item_id=item_id)
        if not isinstance(item_id, str):
            raise InvalidInput("item_id must be a string (an id from SearchMemory).",
                               field="item_id")
        try:
            item = self.memory.get(item_id)
        except NotFound:
            raise hidden from None
        if item.scope not in self.binding.read_scopes:
            raise hidden
        if item.scope != self.binding.user_scope or item.kind in AGENT_OWNED_KINDS:
            raise PermissionDenied(
                f"Item {item_id} is the agent's {item.kind}; ForgetMemory never forgets the "
                "agent's identity, rules, skills or lessons (people with write access edit "
                "them). Forget only the user's own memories.", item_id=item_id)

    def _forget_key(self, key: str) -> Any:
        user = self.binding.user_scope
        for attempt in (1, 2):  # the key may move between inspect and forget: re-read once
            revision = self.memory.inspect(user, key).revision
            try:
                return self.memory.forget(scope=user, key=key, expected_revision=revision,
                                          caller_scope=user, actor=self.binding.actor)
            except RevisionMismatch:
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")


def _budget(value: Any) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) \
            or not MIN_BUDGET_TOKENS <= value <= MAX_BUDGET_TOKENS:
        raise InvalidInput(f"budget_tokens must be an integer from {MIN_BUDGET_TOKENS} to "
                           f"{MAX_BUDGET_TOKENS}, got {value!r}.", field="budget_tokens",
                           low=MIN_BUDGET_TOKENS, high=MAX_BUDGET_TOKENS)
    return value


def _writable_kind(kind: Any) -> str:
    if not isinstance(kind, str):
        raise InvalidInput(f"kind must be one of {', '.join(WRITABLE_KINDS)}.", field="kind")
    if kind in {k.value for k in AGENT_OWNED_KINDS}:
        raise PermissionDenied(
            f"kind {kind!r} belongs to the agent and is edited by people with write access; "
            f"Remember writes only {', '.join(WRITABLE_KINDS)}.", field="kind")
    if kind not in WRITABLE_KINDS:
        raise InvalidInput(f"kind {kind!r} is not one of {', '.join(WRITABLE_KINDS)}.",
                           field="kind")
    return kind


def _key_contains_value(key: str, value: str) -> InvalidInput:
    suggestion = suggest_key(key, value)
    hint = (f"Call Remember again with key={suggestion!r} and value={value!r}." if suggestion
            else "Call Remember again with a key naming only the topic (e.g. 'home_city').")
    return InvalidInput(f"key {key!r} contains the value {value!r}; a key names the topic and "
                        f"the value goes in value. {hint}", field="key",
                        suggested_key=suggestion)


def suggest_key(key: str, value: str) -> str | None:
    """The key without the words of its value (``home_city_paris`` / ``Paris`` ->
    ``home_city``), or None when nothing sensible is left."""
    words = [w for w in re.split(r"[\W_]+", normalize_text(value)) if w]
    parts = [p for p in key.split("_") if p]
    n = len(words)
    rest = next((parts[:i] + parts[i + n:] for i in range(len(parts) - n + 1)
                 if parts[i:i + n] == words), None)
    if rest is None:
        squashed = "".join(words)
        rest = [p for p in parts if p not in words and p not in squashed]
    candidate = "_".join(rest)
    try:
        parse_key(candidate)
    except InvalidInput:
        return None
    return None if key_names_value(candidate, value) else candidate
