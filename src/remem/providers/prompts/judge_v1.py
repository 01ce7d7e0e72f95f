"""``judge_v1``: reconcile one candidate claim with existing items -> a verdict over ids.

Typed input :class:`JudgeInput` (existing items + candidate), reply :class:`JudgeReply`
(``{"verdict": ..., "target": ...}``), spec :data:`JUDGE_V1`. The reply has no free text, so a
grammar-constrained server always finishes it in a few tokens. Per request the schema's
``target`` is narrowed to the given ids (``enum``) or ``null``; the validator checks the same
(``unknown_target``). ADD relates to no item: a target sent with it is dropped.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from remem.domain.model import Kind, Verdict
from remem.providers.prompts.base import PromptSpec

__all__ = ["JUDGE_V1", "JudgeCandidate", "JudgeInput", "JudgeItem", "JudgeReply"]

VERSION = "judge_v1"

SYSTEM = """\
You keep a long-term memory about a user consistent. A new candidate claim arrived; compare it
with the existing items and choose one verdict:
- "ADD": the candidate is a separate value that can hold together with the existing ones
  (e.g. a second language the user speaks). target: null.
- "SUPERSEDE": the candidate replaces an existing item that is no longer true (the user moved,
  changed jobs). target: that item's id.
- "MERGE": the candidate and an existing item say the same thing in other words; keep one.
  target: that item's id.
- "NOOP": the candidate adds nothing to an existing item. target: that item's id.
- "CONFLICT": the candidate contradicts an existing item and it is unclear which is true.
  target: that item's id, or null.
Judge by meaning, not wording. A later valid_at is newer information.
Answer with JSON only, following the schema: {"verdict": ..., "target": ...}."""

USER = """\
Existing items (one JSON object per line):
$existing

Candidate:
$candidate"""


class JudgeItem(BaseModel):
    """One existing item as the judge sees it (no status, no provenance)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    item_id: str = Field(min_length=1)
    key: str
    value: Any
    kind: Kind
    valid_at: AwareDatetime


class JudgeCandidate(BaseModel):
    """The candidate claim being reconciled."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str
    value: Any
    kind: Kind
    valid_at: AwareDatetime


class JudgeInput(BaseModel):
    """What ``judge_v1`` is rendered from; item ids are unique."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    existing: list[JudgeItem]
    candidate: JudgeCandidate

    @model_validator(mode="after")
    def _unique_ids(self) -> JudgeInput:
        ids = [item.item_id for item in self.existing]
        if len(set(ids)) != len(ids):
            raise ValueError("existing items must have distinct item_id values")
        return self

    @property
    def item_ids(self) -> list[str]:
        return [item.item_id for item in self.existing]


def _line(model: BaseModel) -> str:
    return json.dumps(model.model_dump(mode="json"), ensure_ascii=False, sort_keys=True)


def _fields(data: JudgeInput) -> dict[str, str]:
    existing = "\n".join(_line(item) for item in data.existing) or "(none)"
    return {"existing": existing, "candidate": _line(data.candidate)}


class JudgeReply(BaseModel):
    """The verdict and the existing item it relates to (``None`` for ADD, optional for CONFLICT)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    verdict: Verdict
    target: str | None

    @field_validator("target")
    @classmethod
    def _known_target(cls, target: str | None, info: ValidationInfo) -> str | None:
        context: Any = info.context
        data = context.get("input") if isinstance(context, dict) else None
        if target is not None and isinstance(data, JudgeInput) and target not in data.item_ids:
            raise PydanticCustomError("unknown_target",
                                      "target {target} is not one of the given item ids",
                                      {"target": repr(target[:80])})
        return target

    @model_validator(mode="after")
    def _add_has_no_target(self) -> JudgeReply:
        # ADD relates to no existing item; the schema cannot say so without a root anyOf,
        # which strict mode forbids, so a target sent with ADD is dropped (the verdict stands).
        if self.verdict is Verdict.ADD and self.target is not None:
            return self.model_copy(update={"target": None})
        return self


def _narrow(data: JudgeInput, schema: dict[str, Any]) -> dict[str, Any]:
    """Restricts ``target`` to the given ids or null."""
    choices: list[dict[str, Any]] = [{"type": "null"}]
    if data.item_ids:
        choices.insert(0, {"type": "string", "enum": data.item_ids})
    props = dict(schema["properties"])
    props["target"] = {"anyOf": choices}
    return {**schema, "properties": props}


JUDGE_V1: PromptSpec[JudgeInput, JudgeReply] = PromptSpec(
    version=VERSION,
    system=SYSTEM,
    user=USER,
    input_type=JudgeInput,
    response_type=JudgeReply,
    render_fields=_fields,
    narrow_schema=_narrow,
    reasons=frozenset({"unknown_target"}),
)
"""The reconcile prompt, version ``judge_v1``."""
