"""KIP 2.0 requests: checked against the wire schema, then typed (pydantic, unknown fields
rejected).

``parse_request`` first validates the decoded JSON document against the schema's ``Request``
(``service.kip_schema``: remem's copy, extended only where the seed text is newer), so every
request remem accepts is schema-valid; then it builds a :class:`KipRequest` whose ``input`` is
the operation's own model. The binding calls the ``Memory`` methods, whose guard authorises
exactly what was parsed. Nothing reads the raw document after parsing.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from remem.errors import InvalidInput, UnsupportedCapability
from remem.service import kip_schema

KIP_VERSION = "2.0"
OPERATIONS = ("observe", "recall", "revise", "feedback", "forget")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class KipScope(_Strict):
    """``task_ref``: an exact remem scope handle (``user:alice``, ``thread:t1``);
    ``context_refs``: more exact handles recall may read."""

    task_ref: str | None = None
    context_refs: list[str] = Field(default_factory=list)


class KipBudget(_Strict):
    max_output_tokens: int | None = None
    deadline_ms: int | None = None
    tokenizer: str | None = None


class SpaceSelector(_Strict):
    id: str | None = None
    uri: str | None = None


class ObserveInput(_Strict):
    source_ref: str


class RecallTime(_Strict):
    valid_at: str | None = None
    as_of_seq: int | None = None


class RecallInput(_Strict):
    query: str | None = None
    target_ref: str | None = None
    mode: Literal["answer", "action", "resume", "attention"] = "answer"
    goal: str | None = None
    context: str | None = None
    after: list[str] = Field(default_factory=list)
    detail: Literal["brief", "evidence"] = "brief"
    time: RecallTime | None = None


class ReviseInput(_Strict):
    source_ref: str
    target_ref: str | None = None
    change_kind: Literal["correction", "world_change", "unspecified",
                         "misrecorded"] = "unspecified"


class FeedbackInput(_Strict):
    source_ref: str
    decision_ref: str | None = None
    attempt_ref: str | None = None


class ForgetInput(_Strict):
    target_ref: str
    mode: Literal["payload_only", "semantic"]


INPUTS: dict[str, type[_Strict]] = {"observe": ObserveInput, "recall": RecallInput,
                                    "revise": ReviseInput, "feedback": FeedbackInput,
                                    "forget": ForgetInput}


class KipRequest(_Strict):
    kip_memory: Literal["2.0"]
    operation: Literal["observe", "recall", "revise", "feedback", "forget"]
    scope: KipScope = Field(default_factory=KipScope)
    idempotency_key: str | None = None
    requires: list[str] = Field(default_factory=list)
    budget: KipBudget = Field(default_factory=KipBudget)
    input: dict[str, Any] = Field(default_factory=dict)
    space: SpaceSelector | None = None
    request_id: str | None = None
    requires_contract: str | None = None


def operation_of(document: Any) -> str | None:
    """The request's operation when it names one of the five intents (the response needs it),
    else None."""
    op = document.get("operation") if isinstance(document, dict) else None
    return op if isinstance(op, str) and op in OPERATIONS else None


def request_id_of(document: Any) -> str | None:
    """The transport request id to echo, when it is a valid one."""
    rid = document.get("request_id") if isinstance(document, dict) else None
    return rid if isinstance(rid, str) and 0 < len(rid) <= 1024 else None


def parse_request(document: Any) -> tuple[KipRequest, _Strict]:
    """The typed request and its operation's typed input.

    Raises:
        InvalidInput: not an object, or not a schema-valid KIP request (the message names the
            first offending field). UnsupportedCapability: another ``kip_memory`` version.
    """
    if not isinstance(document, dict):
        raise InvalidInput("A KIP request must be a JSON object.", field="request")
    if document.get("kip_memory") != KIP_VERSION:
        version = document.get("kip_memory")
        shown = version if isinstance(version, str | int | float) and not isinstance(
            version, bool) else type(version).__name__
        raise UnsupportedCapability(f"kip_memory {str(shown)[:32]!r} is not supported; use "
                                    f"{KIP_VERSION!r}.", field="kip_memory")
    _check_requires(document.get("requires"))
    problems = kip_schema.errors(document, "Request")
    if problems:
        raise InvalidInput(f"Not a schema-valid KIP request: {_short(problems[0])}. See the "
                           "schema in remem/specs/kip/kip-memory.schema.json.",
                           field=problems[0].split(":", 1)[0])
    req = KipRequest.model_validate(document)
    return req, INPUTS[req.operation].model_validate(req.input)


def _check_requires(requires: Any) -> None:
    """An unknown bundle name is an unavailable requirement (seed §3: UnsupportedCapability),
    not a malformed request."""
    if not isinstance(requires, list):
        return
    known = set(kip_schema.bundles()["bundles"])
    for name in requires:
        if isinstance(name, str) and name not in known:
            raise UnsupportedCapability(f"bundle {name[:64]!r} is unknown here; this binding "
                                        "serves ['memory_basic'].", field="requires")


def _short(problem: str) -> str:
    """A schema message without echoing long caller input."""
    return problem if len(problem) <= 160 else problem[:157] + "..."


__all__ = ["KIP_VERSION", "OPERATIONS", "KipRequest", "operation_of", "parse_request",
           "request_id_of"]
