"""Versioned prompts as data: template + typed input + pydantic reply schema + version.

Each module ``<task>_v<N>.py`` defines one :class:`PromptSpec`; a prompt is never edited in
place once released: change it by adding ``<task>_v<N+1>``. Callers record ``spec.version`` with
what they derive, so every item can say which prompt produced it.

- ``extract_v1``: one user turn -> claims about the user (:data:`EXTRACT_V1`).
- ``judge_v1``: candidate + existing items -> ADD/SUPERSEDE/MERGE/NOOP/CONFLICT over ids
  (:data:`JUDGE_V1`).
"""

from __future__ import annotations

from typing import Any

from remem.errors import UnsupportedCapability
from remem.providers.prompts.base import PromptSpec, strict_json_schema
from remem.providers.prompts.extract_v1 import EXTRACT_V1
from remem.providers.prompts.judge_v1 import JUDGE_V1

__all__ = ["EXTRACT_V1", "JUDGE_V1", "PROMPTS", "PromptSpec", "get_prompt", "strict_json_schema"]

PROMPTS: dict[str, PromptSpec[Any, Any]] = {spec.version: spec for spec in (EXTRACT_V1, JUDGE_V1)}
"""Every released prompt by version."""


def get_prompt(version: str, *, task: str) -> PromptSpec[Any, Any]:
    """The prompt ``version`` of ``task`` (``"extract"`` or ``"judge"``).

    Raises:
        UnsupportedCapability: no such version for that task; the message lists the known ones.
    """
    spec = PROMPTS.get(version)
    if spec is None or not version.startswith(task + "_v"):
        known = sorted(v for v in PROMPTS if v.startswith(task + "_v"))
        raise UnsupportedCapability(
            f"Unknown {task} prompt version {version!r}; known: {', '.join(known)}.",
            prompt_version=version, supported=known)
    return spec
