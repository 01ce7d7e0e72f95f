"""MCP server over stdio (official ``mcp`` SDK v2, ``MCPServer``): the memory tools and the
pinned profile for one memory and one caller.

``remem mcp --memory M --scope user:alice [--agent agent:bot]`` runs :func:`serve`. Tools:
SearchMemory, Remember, ForgetMemory (the same dispatcher, argument schemas and JSON results
as :mod:`remem.agent.tools`), QueryMemory (``Memory.query``: current items nearest a text,
with similarity), EndSession (``Memory.deactivate`` of this server's session: consolidation
brought forward; no arguments) and KipDescriptor. A refused call is a result with ``isError``
true whose structured content is ``{"ok": false, "error": {"code", "message", ...}}``. Resource ``remem://profile``:
the session's pinned block (agent identity, rules, skills, lessons; the user's profile and
preferences), activated at the first read and byte-identical for the server's lifetime.

The scope is bound when the server starts; no argument can choose another one. Each tool is
registered with its published schema (``additionalProperties: false``) and receives the
client's arguments untouched, so :func:`remem.agent.toolspec.parse_call` refuses an unknown
argument, ``scope`` or a wrong JSON type (``invalid_input``) instead of the SDK dropping or
converting it. Calls run one at a time (the SQLite connection is shared between the SDK's
worker threads).
"""

# No ``from __future__ import annotations`` here: the SDK reads the resource function's
# annotations, which name objects local to ``build_server``.
import json
import threading
from typing import Any

from remem.agent.session import Session
from remem.agent.tools import MemoryTools
from remem.agent.toolspec import (
    DESCRIPTIONS,
    FORGET_MEMORY,
    REMEMBER,
    SEARCH_MEMORY,
    TOOL_NAMES,
    input_schema,
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

    tools = MemoryTools(memory, user_scope=user_scope, agent_scope=agent_scope)
    session = Session(memory, user_scope=user_scope, agent_scope=agent_scope,
                      host_kind="mcp")
    lock = threading.Lock()

    def run(name: str, arguments: dict[str, Any]) -> Any:
        with lock:
            result = tools.call(name, arguments)  # parsed there: unknown arguments refused
        return CallToolResult(content=[TextContent(text=json.dumps(result, ensure_ascii=False))],
                              structured_content=result, is_error=not result["ok"])

    hints = {SEARCH_MEMORY: ToolAnnotations(read_only_hint=True),
             REMEMBER: ToolAnnotations(read_only_hint=False, destructive_hint=False),
             FORGET_MEMORY: ToolAnnotations(read_only_hint=False, destructive_hint=True)}
    server = sdk.MCPServer(name="remem", title="remem memory", instructions=INSTRUCTIONS,
                           version=_version(), log_level="WARNING",
                           tools=[*(_raw_tool(name, run, hints[name]) for name in TOOL_NAMES),
                                  _descriptor_tool(memory, lock, user_scope),
                                  *_session_tools(tools.memory, session, lock,
                                                  tools.binding.read_scopes)])

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


def _raw_tool(name: str, run: Any, annotations: Any) -> Any:
    """A tool registered with its published input schema (``additionalProperties: false``)
    whose arguments reach ``run(name, arguments)`` exactly as the client sent them.

    ``MCPServer`` otherwise builds a pydantic model from the function signature, which
    drops arguments it does not know (``scope`` included) and converts JSON-looking strings;
    here the one parser of :mod:`remem.agent.toolspec` sees every argument.
    """
    from mcp.server.mcpserver.tools import Tool
    from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
    from pydantic import ConfigDict

    class Arguments(ArgModelBase):
        model_config = ConfigDict(extra="allow")

        def model_dump_one_level(self) -> dict[str, Any]:
            return {"arguments": dict(self.model_extra or {})}

    def call(arguments: dict[str, Any]) -> Any:
        return run(name, arguments)

    return Tool(fn=call, name=name, description=DESCRIPTIONS[name],
                parameters=input_schema(name), fn_metadata=FuncMetadata(arg_model=Arguments),
                is_async=False, annotations=annotations)


KIP_DESCRIPTOR = "KipDescriptor"


def _descriptor_tool(memory: Any, lock: Any, user_scope: str) -> Any:
    """A read-only tool without arguments returning the KIP binding's descriptor (bundles,
    default budget, tokenizer, minimum_response_tokens) for this server's caller."""
    from mcp.types import ToolAnnotations

    def describe(arguments: dict[str, Any]) -> dict[str, Any]:
        _no_arguments(KIP_DESCRIPTOR, arguments)
        return {"ok": True, "descriptor": memory.kip_descriptor(user_scope)}

    return _json_tool(KIP_DESCRIPTOR, describe, lock, NO_ARGUMENTS,
                      "The KIP 2.0 Memory Interface descriptor of this memory: bundles, "
                      "default budget, tokenizer and minimum useful response size.",
                      ToolAnnotations(read_only_hint=True))


def _no_arguments(tool: str, arguments: dict[str, Any]) -> None:
    """Refuse any argument to a tool that takes none, naming the first one."""
    if arguments:
        from remem.errors import InvalidInput

        raise InvalidInput(f"{tool} takes no arguments.", field=next(iter(arguments)))


NO_ARGUMENTS = {"type": "object", "properties": {}, "additionalProperties": False}


QUERY_MEMORY, END_SESSION = "QueryMemory", "EndSession"
QUERY_SCHEMA = {"type": "object", "additionalProperties": False, "required": ["text"],
                "properties": {
                    "text": {"type": "string", "minLength": 1, "maxLength": 16_384,
                             "description": "What to look for (meaning, not keywords)."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 100,
                              "description": "Most items to return (default 10)."}}}


def _query_arguments(arguments: dict[str, Any]) -> tuple[str, int]:
    """(text, limit) of a QueryMemory call, parsed strictly (unknown arguments, ``scope``
    and wrong JSON types are refused: the scopes are this server's)."""
    from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

    from remem.errors import InvalidInput

    class QueryArguments(BaseModel):
        model_config = ConfigDict(extra="forbid")
        text: StrictStr = Field(min_length=1, max_length=16_384)
        limit: StrictInt = Field(default=10, ge=1, le=100)

    try:
        parsed = QueryArguments.model_validate(arguments)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "arguments"
        why = ("is not an argument of QueryMemory (the scopes are this server's)"
               if first["type"] == "extra_forbidden" else first["msg"].lower())
        raise InvalidInput(f"QueryMemory argument {field} {why}; QueryMemory takes text "
                           "(a string) and limit (an integer 1-100).", field=field) from None
    return parsed.text, parsed.limit


def _session_tools(memory: Any, session: Any, lock: Any, read_scopes: list[str]) -> list[Any]:
    """QueryMemory and EndSession, on the memory as this server's caller (``memory`` is the
    scoped one: the service authorises every call)."""
    from mcp.types import ToolAnnotations

    def query(arguments: dict[str, Any]) -> dict[str, Any]:
        text, limit = _query_arguments(arguments)
        return {"ok": True, "items": memory.query(read_scopes, text, limit=limit)}

    def end(arguments: dict[str, Any]) -> dict[str, Any]:
        _no_arguments(END_SESSION, arguments)
        out = session.close()
        return {"ok": True, "ended": out is not None, "deactivation": out}

    return [_json_tool(QUERY_MEMORY, query, lock, QUERY_SCHEMA,
                       "Current memory items nearest a text by meaning, each with its "
                       "similarity, kind and creation time (read only).",
                       ToolAnnotations(read_only_hint=True)),
            _json_tool(END_SESSION, end, lock, NO_ARGUMENTS,
                       "Ends this session: the memory consolidates what it learned sooner. "
                       "Call it once, when the conversation is over.",
                       ToolAnnotations(read_only_hint=False, destructive_hint=False,
                                       idempotent_hint=True))]


def _json_tool(name: str, fn: Any, lock: Any, schema: dict[str, Any], description: str,
               annotations: Any) -> Any:
    """A tool whose raw arguments reach ``fn`` (as in :func:`_raw_tool`) under ``lock``; a
    RememError becomes ``{"ok": false, "error": ...}`` with ``isError`` true."""
    from mcp.server.mcpserver.tools import Tool
    from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
    from mcp.types import CallToolResult, TextContent
    from pydantic import ConfigDict

    class Arguments(ArgModelBase):
        model_config = ConfigDict(extra="allow")

        def model_dump_one_level(self) -> dict[str, Any]:
            return {"arguments": dict(self.model_extra or {})}

    def call(arguments: dict[str, Any]) -> Any:
        with lock:
            try:
                result = fn(arguments)
            except RememError as exc:
                result = {"ok": False, "error": exc.to_dict()}
        text = json.dumps(result, ensure_ascii=False, default=str)
        return CallToolResult(content=[TextContent(text=text)],
                              structured_content=json.loads(text), is_error=not result["ok"])

    return Tool(fn=call, name=name, description=description, parameters=schema,
                fn_metadata=FuncMetadata(arg_model=Arguments), is_async=False,
                annotations=annotations)


def serve(memory: Any, *, user_scope: str, agent_scope: str | None = None) -> None:
    """Serves over stdin/stdout until the client closes the stream."""
    build_server(memory, user_scope=user_scope, agent_scope=agent_scope).run("stdio")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("remem")
    except PackageNotFoundError:  # pragma: no cover - source checkout without install
        return "0"
