"""KIP 2.0 requests as typed models (pydantic, strict JSON types, unknown fields rejected).

``parse_request`` turns a decoded JSON document into a :class:`KipRequest` whose ``input`` is
the operation's own model; the binding then calls the ``Memory`` methods, whose guard
authorises exactly what was parsed. Nothing reads the raw document after parsing.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from remem.errors import InvalidInput, UnsupportedCapability

KIP_VERSION = "2.0"
Ref = Annotated[str, StringConstraints(min_length=1, max_length=256)]
ScopeRef = Annotated[str, StringConstraints(min_length=1, max_length=128)]
Time = Annotated[str, StringConstraints(min_length=1, max_length=64)]
Text = Annotated[str, StringConstraints(max_length=65_536)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class KipScope(_Strict):
    task_ref: ScopeRef
    context_refs: list[ScopeRef] = Field(default_factory=list, max_length=16)


class KipBudget(_Strict):
    max_output_tokens: int | None = Field(None, ge=1, le=1_000_000)
    deadline_ms: int | None = Field(None, ge=0, le=60_000)
    tokenizer: Annotated[str, StringConstraints(max_length=64)] | None = None


class ObserveInput(_Strict):
    source_ref: Ref
    text: Text
    role: Annotated[str, StringConstraints(max_length=32)] = "user"
    actor: Annotated[str, StringConstraints(max_length=256)] | None = None
    occurred_at: Time | None = None
    kind: Annotated[str, StringConstraints(max_length=64)] = "user-message"
    run_ref: Ref | None = None


class RecallTime(_Strict):
    valid_at: Time | None = None
    as_of_seq: int | None = Field(None, ge=0)


class RecallInput(_Strict):
    query: Text | None = None
    target_ref: Ref | None = None
    mode: Literal["answer", "action", "resume"] = "answer"
    goal: Text | None = None
    context: Text | None = None
    after: list[Ref] = Field(default_factory=list, max_length=64)
    detail: Annotated[str, StringConstraints(max_length=32)] | None = None
    time: RecallTime | None = None


class ReviseInput(_Strict):
    key: Annotated[str, StringConstraints(min_length=1, max_length=128)]
    value: Any
    change_kind: Literal["correction", "world_change", "unspecified"] = "unspecified"
    source_ref: Ref | None = None
    target_ref: Ref | None = None
    kind: Annotated[str, StringConstraints(max_length=32)] | None = None
    text: Text | None = None
    changed_at: Time | None = None
    expected_revision: int | None = Field(None, ge=0)


class FeedbackInput(_Strict):
    source_ref: Ref | None = None
    decision_ref: Ref | None = None
    attempt_ref: Ref | None = None
    text: Text | None = None
    role: Literal["agent", "assistant", "user"] = "agent"
    actor: Annotated[str, StringConstraints(max_length=256)] | None = None


class ForgetInput(_Strict):
    target_ref: Ref
    mode: Literal["payload_only", "semantic"]


INPUTS: dict[str, type[_Strict]] = {"observe": ObserveInput, "recall": RecallInput,
                                    "revise": ReviseInput, "feedback": FeedbackInput,
                                    "forget": ForgetInput}


class KipRequest(_Strict):
    kip_memory: Literal["2.0"]
    operation: Literal["observe", "recall", "revise", "feedback", "forget"]
    scope: KipScope
    idempotency_key: Annotated[str, StringConstraints(min_length=1, max_length=256)] | None = None
    requires: list[Annotated[str, StringConstraints(max_length=64)]] = Field(
        default_factory=list, max_length=8)
    budget: KipBudget = Field(default_factory=KipBudget)
    input: dict[str, Any] = Field(default_factory=dict)
    space: Annotated[str, StringConstraints(max_length=128)] | None = None
    request_id: Annotated[str, StringConstraints(max_length=128)] | None = None


def parse_request(document: Any) -> tuple[KipRequest, _Strict]:
    """The typed request and its operation's typed input.

    Raises:
        InvalidInput: not an object, an unknown field, a wrong JSON type or a value out of
            range (the message names the field). UnsupportedCapability: another kip_memory.
    """
    if not isinstance(document, dict):
        raise InvalidInput("A KIP request must be a JSON object.", field="request")
    if document.get("kip_memory") != KIP_VERSION:
        version = document.get("kip_memory")
        shown = version if isinstance(version, str | int | float) and not isinstance(
            version, bool) else type(version).__name__
        raise UnsupportedCapability(f"kip_memory {str(shown)[:32]!r} is not supported; use "
                                    f"{KIP_VERSION!r}.", field="kip_memory")
    req = _validate(KipRequest, document, "")
    return req, _validate(INPUTS[req.operation], req.input, "input.")


def _validate(model: type[_Strict], data: Any, prefix: str) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        where = prefix + ".".join(str(p) for p in first["loc"]) if first["loc"] else (
            prefix.rstrip(".") or "request")
        raise InvalidInput(f"KIP {where}: {first['msg']}.", field=where) from None


__all__ = ["KIP_VERSION", "KipRequest", "parse_request"]
