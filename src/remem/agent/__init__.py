"""Agent integration: memory tools, the per-step provider, the pinned session block, MCP.

    from remem.agent import MemoryProvider, MemoryTools, Session

    session = Session(memory, user_scope="user:alice", agent_scope="agent:bot")
    provider = MemoryProvider(memory, user_scope="user:alice", agent_scope="agent:bot")
    tools = MemoryTools(memory, user_scope="user:alice", agent_scope="agent:bot")

    system = base_prompt + "\n\n" + session.prompt()          # pinned until re-activation
    step = provider.recall(session.conversation_id, user_text)  # new items only
    ...chat.completions.create(messages=..., tools=tools.schemas())...
    messages.append(tools.tool_message(tool_call))            # errors come back as results
    session.capture_turn("user", user_text)                   # after the host persisted it

The MCP server (``remem mcp``) lives in :mod:`remem.agent.mcp` (needs ``remem[mcp]``).
"""

from __future__ import annotations

from remem.agent.binding import Binding
from remem.agent.provider import Injection, MemoryProvider
from remem.agent.session import Session
from remem.agent.tools import TOOL_NAMES, MemoryTools, tool_schemas

__all__ = [
    "Binding",
    "Injection",
    "MemoryProvider",
    "MemoryTools",
    "Session",
    "TOOL_NAMES",
    "tool_schemas",
]
