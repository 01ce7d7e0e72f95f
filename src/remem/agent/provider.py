"""Per-step memory provider: what the agent should know for this step's input.

Each step recalls current ``fact``, ``skill`` and ``lesson`` items in the user's and the
agent's scopes for the step's input (the KickSide memory provider), drops the ids already
injected earlier in the same conversation, and renders the rest under ``budget_tokens``
(counted by a named tokenizer). Pinned kinds (identity, rules, profile, preferences) are not
injected here: they are in the session's pinned block (:mod:`remem.agent.session`).

Which ids a conversation has seen is kept in this object (per process); a host that
restarts a conversation in a new process starts a new provider and may see items again.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from remem.agent.binding import AgentMemory, Binding, scoped_memory
from remem.domain import render
from remem.domain.limits import MAX_QUERY_BYTES
from remem.domain.model import ItemStatus, Kind
from remem.domain.timefmt import local_day
from remem.providers.registry import build_tokenizer
from remem.service.recall_results import RecallItem

PROVIDED_KINDS = (Kind.FACT.value, Kind.SKILL.value, Kind.LESSON.value)
HEADER = "Recalled from memory for this step (each item is shown once per conversation):"
DEFAULT_BUDGET_TOKENS = 300
RECALL_HEADROOM = 4
"""The recall behind a step asks for this many times the step's budget (at least 1,000
tokens): its measured document carries ids and metadata, and items already injected are
dropped afterwards, so the rendered lines need far fewer tokens than the recall did."""
PER_SEEN_TOKENS = 150
"""Extra recall budget per item already injected in the conversation (they still take room
in the recall document before they are dropped)."""
MAX_RECALLS, MAX_RECALL_TOKENS = 4, 1_000_000
"""A step recalls again with twice the budget while the recall was truncated and the step's
budget still has room (the recall was filled by items injected before)."""


@dataclass(frozen=True)
class Injection:
    """What one step adds to the prompt.

    Attributes:
        conversation_id: the conversation it belongs to.
        items: the newly injected items, best first (never injected before in it).
        text: ``HEADER`` plus one line per item; ``""`` when nothing new was found.
        tokens: size of ``text`` under the provider's tokenizer (<= budget_tokens).
        truncated: True iff a new relevant item was left out to fit the budget (it may be
            injected by a later step).
    """

    conversation_id: str
    items: tuple[RecallItem, ...]
    text: str
    tokens: int
    truncated: bool

    @property
    def ids(self) -> list[str]:
        return [i.id for i in self.items]


class MemoryProvider:
    """Recalls, once per conversation, the facts, skills and lessons relevant to each step.

    Args:
        memory: the bound ``Memory``.
        user_scope: the user's scope (``user:alice``).
        agent_scope: the agent's scope (``agent:bot``), or None.
        budget_tokens: largest size of each step's injected text, in tokens (16-100,000).
        tokenizer: tokenizer name that counts it (``o200k_base`` | ``cl100k_base``).

    Raises:
        InvalidInput: bad scopes or budget. UnsupportedCapability: unknown tokenizer.
    """

    def __init__(self, memory: AgentMemory, *, user_scope: str, agent_scope: str | None = None,
                 budget_tokens: int = DEFAULT_BUDGET_TOKENS,
                 tokenizer: str = "o200k_base") -> None:
        self.binding = Binding.parse(user_scope, agent_scope)
        self.memory = scoped_memory(memory, self.binding)
        self.budget_tokens = render.check_budget(budget_tokens, "budget_tokens", 16, 100_000)
        self.tokenizer = build_tokenizer(tokenizer)
        self._seen: dict[str, set[str]] = {}
        self._lock = threading.Lock()

    def recall(self, conversation_id: str, text: str) -> Injection:
        """The items to inject for one step whose input is ``text``.

        Marks the returned ids as injected in ``conversation_id``: a later step of the same
        conversation never returns them again. Blank input injects nothing.

        Raises:
            RememError: what ``Memory.recall`` raises (e.g. EmbeddingMismatch).
        """
        query = _query(text)
        if not query:
            return Injection(conversation_id, (), "", 0, False)
        with self._lock:
            seen_before = len(self._seen.get(conversation_id, ()))
        budget = max(self.budget_tokens * RECALL_HEADROOM, 1000) + PER_SEEN_TOKENS * seen_before
        for attempt in range(MAX_RECALLS):
            result = self.memory.recall(self.binding.read_scopes, query,
                                        kinds=list(PROVIDED_KINDS),
                                        budget_tokens=min(budget, MAX_RECALL_TOKENS),
                                        limit=min(30 + seen_before, 1000))
            with self._lock:  # filter and mark together: concurrent steps never share an id
                seen = self._seen.setdefault(conversation_id, set())
                chosen, lines, full = self._pack([i for i in result.items
                                                  if i.status == ItemStatus.CURRENT.value
                                                  and i.id not in seen])
                more = (result.truncated and not full and budget < MAX_RECALL_TOKENS
                        and attempt < MAX_RECALLS - 1)
                if not more:
                    seen.update(i.id for i in chosen)
                    break
            budget *= 2  # the budget has room the recall could not fill: look further
        truncated = full or result.truncated
        if not chosen:
            return Injection(conversation_id, (), "", 0, truncated)
        return Injection(conversation_id, tuple(chosen), "\n".join(lines), self._count(lines),
                         truncated)

    def _pack(self, fresh: list[RecallItem]) -> tuple[list[RecallItem], list[str], bool]:
        """(chosen items, text lines, whether an item was left out) under the budget."""
        chosen, lines, full = [], [HEADER], False
        offsets = self._offsets([i.id for i in fresh])
        for item in fresh:
            line = item_line(item, offsets.get(item.id))
            if self._count(lines + [line]) > self.budget_tokens:
                full = True
                continue
            lines.append(line)
            chosen.append(item)
        return chosen, lines, full

    def _offsets(self, item_ids: list[str]) -> dict[str, int]:
        """The items' stated UTC offsets (``Memory.tz_offsets``); none from a stand-in
        without it (its lines then show UTC dates)."""
        lookup = getattr(self.memory, "tz_offsets", None)
        return lookup(item_ids) if lookup is not None and item_ids else {}

    def injected(self, conversation_id: str) -> frozenset[str]:
        """Ids already injected in the conversation."""
        with self._lock:
            return frozenset(self._seen.get(conversation_id, ()))

    def end(self, conversation_id: str) -> None:
        """Drops the conversation's record (call when it is over)."""
        with self._lock:
            self._seen.pop(conversation_id, None)

    def _count(self, lines: list[str]) -> int:
        return self.tokenizer.count("\n".join(lines))


def item_line(item: RecallItem, offset_minutes: int | None = None) -> str:
    """``[skill] agent:bot unit_conversion = "..." (since 2026-05-01)``: the day of
    ``valid_at`` in the zone of ``offset_minutes`` (the UTC offset the statement gave; None:
    UTC), as recall's item lines show it."""
    return (f"[{item.kind}] {item.scope} {item.key} = {render.value_text(item.value)} "
            f"(since {local_day(item.valid_at, offset_minutes)})")


def _query(text: str) -> str:
    """The step input as a recall query: stripped, and its last 16 KiB when longer."""
    if not isinstance(text, str):
        return ""
    data = text.strip().encode()
    if len(data) > MAX_QUERY_BYTES:
        data = data[-MAX_QUERY_BYTES:]
    return data.decode(errors="ignore").strip()
