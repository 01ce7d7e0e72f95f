"""The Judge port's shapes, its input check, and the deterministic :class:`RuleJudge`.

A judge is asked only where the decision's rules leave a choice (DESIGN.md "Write path"): it
sees the candidate and the existing items that may relate to it (same-key items and the
nearest live items of the scope) and answers a :class:`~remem.domain.decision.Judgement`
(ADD/SUPERSEDE/MERGE/NOOP/CONFLICT and the target item id), or ``None``, which means "no
opinion: apply the key's rule" — ``decide(..., judgement=None)`` then uses
:func:`~remem.domain.decision.rule_judgement` (the key's ``on_change`` policy on a single key,
ADD on a multi key).

Shapes (plain dicts, as a service passes them)::

    existing:  [{"item_id": "itm_…", "key": "home_city", "value": "Paris",
                 "kind": "profile_slot", "valid_at": <aware datetime | ISO string>}, ...]
    candidate: {"key": "home_city", "value": "Lyon", "kind": "profile_slot",
                "valid_at": <aware datetime | ISO string>}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol, TypedDict, runtime_checkable

from pydantic import ValidationError

from remem.domain.decision import Judgement
from remem.errors import InvalidInput
from remem.providers.prompts.judge_v1 import JudgeInput

__all__ = ["CandidateDict", "ExistingItemDict", "Judge", "RuleJudge", "judge_input"]


class ExistingItemDict(TypedDict):
    """An existing item offered to a judge."""

    item_id: str
    key: str
    value: Any
    kind: str
    valid_at: datetime | str


class CandidateDict(TypedDict):
    """The candidate claim a judge reconciles."""

    key: str
    value: Any
    kind: str
    valid_at: datetime | str


@runtime_checkable
class Judge(Protocol):
    """Chooses a verdict where the rules leave a choice.

    Attributes:
        name: registry name (``"rules"``, ``"openai"``).
        version: recorded with each judged decision (a prompt version for model judges).
    """

    name: str
    version: str

    def judge(self, existing: Sequence[Mapping[str, Any]],
              candidate: Mapping[str, Any]) -> Judgement | None:
        """A verdict over ``existing``'s ids, or ``None`` to apply the key's rule.

        Raises:
            InvalidInput: the arguments do not have the documented shapes.
            ExtractionFailed: (model judges) the reply did not parse or validate.
            ArtifactUnavailable: (model judges) the model service is missing or unreachable.
        """
        ...


def judge_input(existing: Sequence[Mapping[str, Any]], candidate: Mapping[str, Any]) -> JudgeInput:
    """Checks a judge's arguments and returns them typed.

    Raises:
        InvalidInput: a missing or extra field, an unknown kind, a naive or unparseable
            ``valid_at``, or two existing items with the same ``item_id``.
    """
    if isinstance(existing, (str, bytes)) or not isinstance(existing, Sequence):
        raise InvalidInput("existing must be a list of item dicts.", field="existing")
    try:
        return JudgeInput.model_validate(
            {"existing": [dict(item) for item in existing], "candidate": dict(candidate)})
    except (ValidationError, TypeError, ValueError) as exc:
        raise InvalidInput(f"Judge input is not valid: {_first_error(exc)}. Pass existing as "
                           "[{item_id, key, value, kind, valid_at}] and the candidate as "
                           "{key, value, kind, valid_at} with aware datetimes.",
                           field="judge_input") from exc


def _first_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        err = exc.errors(include_url=False, include_input=False)[0]
        return f"{'.'.join(map(str, err['loc']))}: {err['msg']}"
    return str(exc)


class RuleJudge:
    """The deterministic judge: never overrides the rules.

    It checks its input like every judge (so swapping judges cannot hide a malformed call) and
    answers ``None``: the decision then applies the key's ``on_change`` policy (SUPERSEDE or
    CONFLICT) on a single key and ADD on a multi key. Everything a rule can decide without
    reading meaning (same claim seen again, tombstones, staleness by ``valid_at``) the decision
    already does before any judge is asked.
    """

    name = "rules"
    version = "1"
    #: It never reads the offered items, so a writer need not gather them (see
    #: ``service.jobs.reconcile``); model judges leave this True.
    wants_items = False

    def judge(self, existing: Sequence[Mapping[str, Any]],
              candidate: Mapping[str, Any]) -> Judgement | None:
        """Always ``None`` ("apply the rule"), after checking the arguments.

        Raises:
            InvalidInput: the arguments do not have the documented shapes.
        """
        judge_input(existing, candidate)
        return None
