"""The memory tools' published schemas and the one parser of their calls.

``PROPERTIES`` / ``REQUIRED`` are what models see (OpenAI function schemas, MCP input
schemas, both with ``additionalProperties: false``). :func:`parse_call` turns a call's
arguments into the typed request of that tool, or raises :class:`InvalidInput` naming the
field and saying what to do. Both ``MemoryTools.call`` and the MCP server go through it, so
nothing the schema does not publish reaches a tool:

- an argument the tool does not have is refused, never dropped; ``scope`` is refused with
  its own message (the scopes are bound when the tools are built, never chosen per call);
- JSON types are strict: ``"500"`` is not an integer, ``1`` is not a string, ``true`` is not
  a number; an integer field takes ``500.0`` (JSON Schema's "integer" counts it); numbers
  must be finite; a JSON object given as text must not repeat a name;
- ``null`` for an optional argument means "not given" (OpenAI strict mode sends nullable
  optionals); ``null`` for a required one is missing.

Value checks that need the domain (key shape, writable kinds, budget range, text limits) run
in the tools after parsing, with their own messages.
"""

from __future__ import annotations

import copy
import json
import math
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, \
    ValidationError, field_validator

from remem.domain.jsondoc import UnrepresentableNumber, parse_float
from remem.domain.model import Kind
from remem.errors import InvalidInput

SEARCH_MEMORY, REMEMBER, FORGET_MEMORY = "SearchMemory", "Remember", "ForgetMemory"
TOOL_NAMES = (SEARCH_MEMORY, REMEMBER, FORGET_MEMORY)
WRITABLE_KINDS = (Kind.FACT.value, Kind.PREFERENCE.value, Kind.PROFILE_SLOT.value)
"""Kinds Remember may write: the user's own. Agent kinds are edited by people, not tools."""
MIN_BUDGET_TOKENS, MAX_BUDGET_TOKENS, DEFAULT_BUDGET_TOKENS = 64, 4000, 600

PROPERTIES: dict[str, dict[str, dict[str, Any]]] = {
    SEARCH_MEMORY: {
        "query": {"type": "string", "description":
                  "What to look for, in plain words (e.g. 'where does the user live')."},
        "budget_tokens": {"type": "integer", "minimum": MIN_BUDGET_TOKENS,
                          "maximum": MAX_BUDGET_TOKENS, "default": DEFAULT_BUDGET_TOKENS,
                          "description": "Largest size of the whole result, in tokens."},
        "mode": {"type": "string", "enum": ["hybrid", "lexical", "vector"],
                 "default": "hybrid",
                 "description": "hybrid (default): words and meaning; lexical: exact words "
                                "and keys only; vector: meaning only."},
        "filters": {"type": "object", "description":
                    "Optional conditions that must all hold, e.g. {\"kind\": \"preference\"}, "
                    "{\"valid_at\": \"last 7 days\"}, {\"metadata\": {\"app\": \"crm\", "
                    "\"priority\": {\"gte\": 2}}}. Fields: kind, key, status, valid_at, "
                    "recorded_at, metadata; operators eq ne in nin gt gte lt lte exists."},
    },
    REMEMBER: {
        "key": {"type": "string", "pattern": "^[a-z][a-z0-9_]*$", "maxLength": 128,
                "description": "snake_case topic name, never containing the value "
                               "(e.g. 'home_city', 'diet', 'response_style')."},
        "value": {"type": ["string", "number", "boolean"],
                  "description": "The value to remember (e.g. 'Paris')."},
        "kind": {"type": "string", "enum": list(WRITABLE_KINDS),
                 "description": "fact (the default), preference (likes, wants, style) or "
                                "profile_slot (a stable attribute such as home_city)."},
    },
    FORGET_MEMORY: {
        "item_id": {"type": "string",
                    "description": "Id of an item returned by SearchMemory (itm_...)."},
        "key": {"type": "string", "description": "Forget the current value(s) of this key "
                                                 "in the user's memory."},
    },
}
REQUIRED = {SEARCH_MEMORY: ["query"], REMEMBER: ["key", "value"], FORGET_MEMORY: []}
DESCRIPTIONS = {
    SEARCH_MEMORY: "Search long-term memory about the user and yourself. Returns items (id, "
                   "key, value, kind, status, scope) and raw sources labelled 'source', which "
                   "are evidence, not accepted facts.",
    REMEMBER: "Remember something about the user for later conversations. Writes only to "
              "the user's own memory.",
    FORGET_MEMORY: "Forget something about the user for real (every copy is erased). Give "
                   "exactly one of item_id or key. Your own identity, rules, skills and "
                   "lessons cannot be forgotten.",
}


def input_schema(name: str) -> dict[str, Any]:
    """A tool's JSON Schema for its arguments (a fresh copy): an object with exactly the
    published properties, ``additionalProperties: false``."""
    return {"type": "object", "properties": copy.deepcopy(PROPERTIES[name]),
            "required": list(REQUIRED[name]), "additionalProperties": False}


def tool_schema(name: str) -> dict[str, Any]:
    """One tool in the OpenAI function-calling shape (``{"type": "function", ...}``)."""
    return {"type": "function", "function": {
        "name": name, "description": DESCRIPTIONS[name], "parameters": input_schema(name)}}


def tool_schemas() -> list[dict[str, Any]]:
    """The three tools, ready for ``chat.completions.create(tools=...)``."""
    return [tool_schema(n) for n in TOOL_NAMES]


# --- typed requests ------------------------------------------------------------------------
FiniteNumber = Annotated[float, Field(strict=True, allow_inf_nan=False)]


class ToolRequest(BaseModel):
    """A parsed tool call: only published arguments, strict JSON types, immutable."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class SearchMemoryRequest(ToolRequest):
    query: StrictStr
    budget_tokens: StrictInt = DEFAULT_BUDGET_TOKENS
    mode: StrictStr = "hybrid"
    filters: dict[str, Any] | None = None

    @field_validator("budget_tokens", mode="before")
    @classmethod
    def _integral_number(cls, v: Any) -> Any:
        return int(v) if isinstance(v, float) and v.is_integer() else v


class RememberRequest(ToolRequest):
    key: StrictStr
    value: StrictStr | StrictBool | StrictInt | FiniteNumber
    kind: StrictStr | None = None


class ForgetMemoryRequest(ToolRequest):
    item_id: StrictStr | None = None
    key: StrictStr | None = None


REQUESTS: dict[str, type[ToolRequest]] = {
    SEARCH_MEMORY: SearchMemoryRequest, REMEMBER: RememberRequest,
    FORGET_MEMORY: ForgetMemoryRequest}


def parse_call(name: Any, arguments: str | dict[str, Any] | None, *,
               scopes_note: str) -> ToolRequest:
    """The typed request of one tool call.

    Args:
        name: the tool's name.
        arguments: the call's arguments: the JSON text a model produced, a dict, or
            None / "" for none.
        scopes_note: the bound scopes in words, for the refusal of a ``scope`` argument
            (e.g. "reads user:alice and agent:bot, writes only user:alice").

    Raises:
        InvalidInput: an unknown tool; arguments that are not one JSON object; an argument
            the tool does not have (``scope`` included); a missing required argument; a
            wrong JSON type. ``details.field`` names the argument.
    """
    if not isinstance(name, str) or name not in REQUESTS:
        raise InvalidInput(f"There is no tool {name!r}; use one of {', '.join(TOOL_NAMES)}.",
                           field="name")
    args = _object(name, arguments)
    if "scope" in args:
        raise InvalidInput(
            f"{name} has no scope argument: the scopes are fixed for this session (it "
            f"{scopes_note}). Call {name} again without scope.", field="scope")
    unknown = sorted(set(args) - set(PROPERTIES[name]))
    if unknown:
        raise InvalidInput(f"{name} has no argument {', '.join(map(repr, unknown))}; its "
                           f"arguments are {', '.join(PROPERTIES[name])}. Call it again "
                           "with only those.", field=unknown[0])
    missing = [a for a in REQUIRED[name] if args.get(a) is None]
    if missing:
        raise InvalidInput(f"{name} needs {', '.join(missing)}.", field=missing[0])
    given = {k: v for k, v in args.items() if v is not None}  # null: not given
    try:
        return REQUESTS[name].model_validate(given)
    except ValidationError as exc:
        field = str(exc.errors()[0]["loc"][0])
        raise InvalidInput(f"{name} argument {field} must be {_expected(name, field)}, got "
                           f"{_json_type(given.get(field))}. Call {name} again with "
                           f"{field} as {_expected(name, field)}.", field=field) from None


def _object(name: str, arguments: str | dict[str, Any] | None) -> dict[str, Any]:
    if arguments is None or arguments == "":
        return {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments, object_pairs_hook=_no_repeated_names,
                                   parse_constant=_no_constant, parse_float=parse_float)
        except UnrepresentableNumber as exc:  # 1e-400 would be stored as 0
            raise exc.refusal(f"{name} arguments") from None
        except (ValueError, RecursionError) as exc:
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)[:200]
            raise InvalidInput(f"{name} arguments are not valid JSON ({reason}); send one "
                               "JSON object.", field="arguments") from None
    if not isinstance(arguments, dict):
        raise InvalidInput(f"{name} arguments must be a JSON object.", field="arguments")
    return arguments


def _no_repeated_names(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"the name {k[:64]!r} appears twice")
        out[k] = v
    return out


def _no_constant(text: str) -> Any:
    raise ValueError(f"{text} is not a JSON number")


def _expected(name: str, field: str) -> str:
    spec = PROPERTIES[name][field]
    if "minimum" in spec:
        return f"an integer from {spec['minimum']} to {spec['maximum']}"
    types = spec["type"] if isinstance(spec["type"], list) else [spec["type"]]
    words = {"string": "a string", "integer": "an integer", "number": "a finite number",
             "boolean": "a boolean", "object": "a JSON object"}
    listed = [words[t] for t in types]
    return listed[0] if len(listed) == 1 else ", ".join(listed[:-1]) + " or " + listed[-1]


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return f"the boolean {json.dumps(value)}"
    if isinstance(value, int | float):
        return "a number that is not finite" if isinstance(value, float) \
            and not math.isfinite(value) else f"the number {value!r}"[:60]
    if isinstance(value, str):
        return "a string"
    return {dict: "an object", list: "an array"}.get(type(value), type(value).__name__)
