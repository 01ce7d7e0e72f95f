"""MCP server over stdio (official ``mcp`` SDK v2, ``MCPServer``): the memory tools and the
pinned profile for one memory and one caller.

``remem mcp --memory M --scope user:alice [--agent agent:bot]`` runs :func:`serve`. Tools:
SearchMemory, Remember, ForgetMemory (the same dispatcher, argument schemas and JSON results
as :mod:`remem.agent.tools`; a refused call is a result with ``isError`` true whose structured
content is ``{"ok": false, "error": {"code", "message", ...}}``). Resource ``remem://profile``:
the session's pinned block (agent identity, rules, skills, lessons; the user's profile and
preferences), activated at the first read and byte-identical for the server's lifetime.

The scope is bound when the server starts; no argument can choose another one. Calls run one
at a time (the SQLite connection is shared between the SDK's worker threads).
"""

# No ``from __future__ import annotations`` here: the SDK reads the tool functions'
# annotations, which name objects local to ``build_server``.
import json
import threading
from typing import Annotated, Any

from remem.agent.session import Session
from remem.agent.tools import (
    DEFAULT_BUDGET_TOKENS,
    DESCRIPTIONS,
    FORGET_MEMORY,
    PROPERTIES,
    REMEMBER,
    SEARCH_MEMORY,
    MemoryTools,
)
from remem.errors import ArtifactUnavailable, RememError

PROFILE_URI = "remem://profile"
INSTRUCTIONS = ("Long-term memory for this user. Read remem://profile once for who you are and "
                "what is pinned about the user; call SearchMemory before answering questions "
                "that depend on the past; Remember durable facts and preferences the user "
                "states; ForgetMemory when the user asks you to forget something.")


def _sdk() -> Any:
    try:
        from mcp.server import mcpserver
    except ImportError as exc:  # pragma: no cover - depends on the installed extras
        raise ArtifactUnavailable("The MCP server needs the mcp SDK 2.x: "
                                  "pip install 'remem[mcp]'.") from exc
    return mcpserver


def build_server(memory: Any, *, user_scope: str, agent_scope: str | None = None) -> Any:
    """An ``MCPServer`` exposing the three tools and the profile resource for one caller.

    Raises:
        InvalidInput: malformed scopes. ArtifactUnavailable: the SDK is not installed.
    """
    sdk = _sdk()
    from mcp.types import CallToolResult, TextContent, ToolAnnotations
    from pydantic import WithJsonSchema

    tools = MemoryTools(memory, user_scope=user_scope, agent_scope=agent_scope)
    session = Session(memory, user_scope=user_scope, agent_scope=agent_scope,
                      host_kind="mcp")
    lock = threading.Lock()
    server = sdk.MCPServer(name="remem", title="remem memory", instructions=INSTRUCTIONS,
                           version=_version(), log_level="WARNING")

    def run(name: str, arguments: dict[str, Any]) -> Any:
        given = {k: v for k, v in arguments.items() if v is not None}
        with lock:
            result = tools.call(name, given)
        return CallToolResult(content=[TextContent(text=json.dumps(result, ensure_ascii=False))],
                              structured_content=result, is_error=not result["ok"])

    def arg(tool: str, name: str) -> Any:  # the field's published schema is the OpenAI one
        return WithJsonSchema(PROPERTIES[tool][name])

    @server.tool(name=SEARCH_MEMORY, description=DESCRIPTIONS[SEARCH_MEMORY],
                 annotations=ToolAnnotations(read_only_hint=True))
    def search_memory(query: Annotated[Any, arg(SEARCH_MEMORY, "query")],
                      budget_tokens: Annotated[Any, arg(SEARCH_MEMORY, "budget_tokens")] = (
                          DEFAULT_BUDGET_TOKENS)
                      ) -> CallToolResult:
        return run(SEARCH_MEMORY, {"query": query, "budget_tokens": budget_tokens})

    @server.tool(name=REMEMBER, description=DESCRIPTIONS[REMEMBER],
                 annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))
    def remember(key: Annotated[Any, arg(REMEMBER, "key")],
                 value: Annotated[Any, arg(REMEMBER, "value")],
                 kind: Annotated[Any, arg(REMEMBER, "kind")] = None) -> CallToolResult:
        return run(REMEMBER, {"key": key, "value": value, "kind": kind})

    @server.tool(name=FORGET_MEMORY, description=DESCRIPTIONS[FORGET_MEMORY],
                 annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
    def forget_memory(item_id: Annotated[Any, arg(FORGET_MEMORY, "item_id")] = None,
                      key: Annotated[Any, arg(FORGET_MEMORY, "key")] = None) -> CallToolResult:
        return run(FORGET_MEMORY, {"item_id": item_id, "key": key})

    @server.resource(PROFILE_URI, name="profile", title="Pinned profile",
                     description="The agent's identity, rules, skills and lessons and the "
                                 "user's profile and preferences, pinned for this session.",
                     mime_type="text/markdown")
    def profile() -> str:
        from mcp.server.mcpserver.exceptions import ResourceError

        with lock:
            try:
                return session.prompt()
            except RememError as exc:
                raise ResourceError(f"{exc.code}: {exc.message}") from exc

    return server


def serve(memory: Any, *, user_scope: str, agent_scope: str | None = None) -> None:
    """Serves over stdin/stdout until the client closes the stream."""
    build_server(memory, user_scope=user_scope, agent_scope=agent_scope).run("stdio")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("remem")
    except PackageNotFoundError:  # pragma: no cover - source checkout without install
        return "0"
