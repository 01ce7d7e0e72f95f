"""What every versioned prompt is: template + typed input + pydantic reply schema + version.

A :class:`PromptSpec` is data. It renders chat messages from a typed input, produces the strict
JSON schema for OpenAI-compatible structured output (``response_format``), and parses a reply
into its pydantic model or raises :class:`~remem.errors.ExtractionFailed` with a reason code.
It does no I/O; the adapters in ``remem.providers.llm`` send the request.

Reason codes (``ExtractionFailed.details["reason"]``):

- ``empty_reply``: the reply had no content;
- ``malformed_json``: the content is not JSON;
- ``schema_violation``: JSON that does not fit the reply model (missing or extra field, wrong
  type, key not snake_case, value over 1,024 bytes, ...);
- a prompt-specific code raised by a validator with ``PydanticCustomError(code, ...)`` and
  listed in ``PromptSpec.reasons`` (e.g. ``quote_not_in_text``, ``bad_date``,
  ``unknown_target``), when every error of the reply is of such a kind.

Messages never repeat the text of the input or of the reply (a failed run's reason is kept,
and forgetting must not have to find text there); they name fields and rules.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from string import Template
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from remem.errors import ExtractionFailed

__all__ = ["MAX_REPLY_ERRORS", "PromptSpec", "strict_json_schema"]

In = TypeVar("In", bound=BaseModel)
Out = TypeVar("Out", bound=BaseModel)

MAX_REPLY_ERRORS = 5
"""At most this many validation errors are copied into an ExtractionFailed."""

_DROP = frozenset({"title", "default"})


def strict_json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema in the subset strict structured output accepts.

    Every object must forbid extra properties and require all of them (optional values are
    nullable, never omitted); ``title``/``default`` annotations are dropped.

    Raises:
        TypeError: the model is not strict-compatible (a programming error in a prompt module).
    """
    schema = _strip(model.model_json_schema())
    _check_strict(schema, model.__name__)
    return schema


def _strip(node: Any) -> Any:
    """Drops annotations; class docstrings (descriptions of objects and enums) go too."""
    if isinstance(node, dict):
        drop = _DROP | ({"description"} if "properties" in node or "enum" in node else set())
        return {k: _strip(v) for k, v in node.items()
                if k not in drop or not isinstance(v, (str, int, float, bool, type(None)))}
    if isinstance(node, list):
        return [_strip(v) for v in node]
    return node


def _check_strict(node: Any, where: str) -> None:
    if isinstance(node, dict):
        if node.get("type") == "object":
            props = set(node.get("properties", {}))
            required = set(node.get("required", []))
            if node.get("additionalProperties") is not False or required != props:
                raise TypeError(f"{where}: every object must set extra='forbid' and give every "
                                "field without a default (use `X | None` for optional values).")
        for value in node.values():
            _check_strict(value, where)
    elif isinstance(node, list):
        for value in node:
            _check_strict(value, where)


@dataclass(frozen=True)
class PromptSpec(Generic[In, Out]):
    """One versioned prompt.

    Attributes:
        version: recorded by callers with every derived item, e.g. ``"extract_v1"``; a change
            to the text, the input rendering or the reply schema needs a new version.
        system: ``string.Template`` text of the system message (``$name`` placeholders).
        user: ``string.Template`` text of the user message.
        input_type: pydantic model of the typed input; ``render_fields`` turns it into the
            template's placeholders.
        response_type: pydantic model of the reply; strict-schema compatible. Its validators
            may read ``info.context["input"]`` (the typed input) for checks against the input.
        render_fields: input -> ``{placeholder: text}`` for both templates.
        narrow_schema: optional (input, schema) -> schema that tightens the schema per request
            (e.g. the judge's ``target`` to the ids it was given); never loosens it.
        reasons: reason codes the reply validators raise, reported as such.
    """

    version: str
    system: str
    user: str
    input_type: type[In]
    response_type: type[Out]
    render_fields: Callable[[In], Mapping[str, str]]
    narrow_schema: Callable[[In, dict[str, Any]], dict[str, Any]] | None = None
    reasons: frozenset[str] = field(default_factory=frozenset)

    def messages(self, data: In) -> list[dict[str, str]]:
        """Chat messages ``[{"role": "system", ...}, {"role": "user", ...}]`` for ``data``.

        Raises:
            KeyError: a template names a placeholder ``render_fields`` does not give.
        """
        fields = self.render_fields(data)
        return [{"role": "system", "content": Template(self.system).substitute(fields)},
                {"role": "user", "content": Template(self.user).substitute(fields)}]

    def json_schema(self, data: In | None = None) -> dict[str, Any]:
        """The strict JSON schema of the reply (narrowed to ``data`` when given)."""
        schema = strict_json_schema(self.response_type)
        if data is not None and self.narrow_schema is not None:
            schema = self.narrow_schema(data, schema)
        return schema

    def response_format(self, data: In) -> dict[str, Any]:
        """The ``response_format`` of an OpenAI-compatible chat request for ``data``."""
        return {"type": "json_schema",
                "json_schema": {"name": self.version, "strict": True,
                                "schema": self.json_schema(data)}}

    def parse(self, content: str | None, data: In) -> Out:
        """Parses a reply's content into ``response_type``, checked against the input.

        Args:
            content: the assistant message's text.
            data: the input the prompt was rendered from (validator context).

        Returns:
            The validated reply.

        Raises:
            ExtractionFailed: empty, not JSON, or not valid against the reply model;
                ``details["reason"]`` is the code (see the module doc) and
                ``details["errors"]`` lists up to five ``"location: message"`` strings.
        """
        if content is None or not content.strip():
            raise self._failed("empty_reply", "The model's reply was empty.")
        try:
            json.loads(content)
        except ValueError as exc:
            raise self._failed("malformed_json",
                               f"The model's reply is not valid JSON ({exc}).") from exc
        try:
            return self.response_type.model_validate_json(
                content, strict=True, context={"input": data})
        except ValidationError as exc:
            errors = exc.errors(include_url=False, include_input=False)
            own = [e["type"] for e in errors if e["type"] in self.reasons]
            reason = own[0] if own and len(own) == len(errors) else "schema_violation"
            lines = [f"{'.'.join(map(str, e['loc'])) or '<reply>'}: {e['msg']}"
                     for e in errors[:MAX_REPLY_ERRORS]]
            raise self._failed(
                reason, f"The model's reply does not fit {self.version} ({reason}): "
                + "; ".join(lines), errors=lines) from exc

    def _failed(self, reason: str, message: str, **details: Any) -> ExtractionFailed:
        return ExtractionFailed(message, reason=reason, prompt_version=self.version, **details)
