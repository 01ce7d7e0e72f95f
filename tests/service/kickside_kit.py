"""Shared bits of the KickSide write-path tests: both backends and a judge stand-in."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

import remem
from remem.domain.decision import Judgement

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def store(store_url: str) -> Iterator[remem.RememStore]:
    """An open store on ``store_url`` (closed after the test)."""
    s = remem.open(store_url)
    yield s
    s.close()


class ScriptedJudge:
    """A judge stand-in: answers from a script and records what it was shown.

    ``script`` is a list of callables ``(existing, candidate) -> Judgement | None``; each call
    takes the next one (the last repeats). A callable may write to the memory before it
    answers, which makes a write racing the judge deterministic.
    """

    name = "scripted"
    version = "1"

    def __init__(self, script: list[Callable[[list, dict], Judgement | None]]) -> None:
        self.script = script
        self.calls: list[tuple[list[dict[str, Any]], dict[str, Any]]] = []

    def judge(self, existing, candidate) -> Judgement | None:
        self.calls.append(([dict(e) for e in existing], dict(candidate)))
        step = self.script[min(len(self.calls) - 1, len(self.script) - 1)]
        return step(list(existing), dict(candidate))


def with_judge(mem: remem.Memory, judge: Any) -> remem.Memory:
    """Puts a judge stand-in into the memory's cached context (as a config would)."""
    mem.ctx.judge = judge
    return mem
