"""Multi-session recall (issue 18): the full-text index matches a word's other forms.

A conversation says what happened in one form ("we camped", "hiking") and a later question asks
in another ("Where has Ann camped?", "Does Ann hike?"). Both sides are Porter-stemmed
(``domain.textindex``), so lexical recall finds the turn; a synthetic conversation, not LoCoMo.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from remem.domain.stemming import porter_stem
from remem.domain.textindex import index_terms, query_terms, stem_of

THREAD = "thread:trip-chat"


@pytest.mark.parametrize(("word", "stem"), [("camping", "camp"), ("camped", "camp"),
                                            ("hiking", "hike"), ("hikes", "hike"),
                                            ("ponies", "poni")])
def test_inflected_forms_share_one_stem(word: str, stem: str) -> None:
    assert porter_stem(word) == stem


def test_a_word_is_indexed_with_its_stem_and_queried_by_the_stem() -> None:
    assert index_terms("We went camping") == "we went camping camp"
    assert query_terms("Where has Ann camped?") == ["ann", "camp"]
    # an unchanged word, a short word, a non-ASCII word and a number are never stemmed
    assert stem_of("camp") is None and stem_of("ran") is None
    assert stem_of("cafés") is None and stem_of("2024") is None
    assert index_terms("東京都") == "東京 京都 東 京 都"


def _observe(mem, turns: list[tuple[str, str, str]]) -> None:
    for i, (day, who, text) in enumerate(turns, start=1):
        at = datetime.fromisoformat(f"{day}T18:00:00+00:00")
        mem.observe(THREAD, text, actor=who, source_id=f"t{i}", run_id="chat",
                    occurred_at=at.astimezone(UTC))


def test_lexical_recall_finds_a_turn_worded_in_another_form(mem) -> None:
    _observe(mem, [("2024-03-01", "Ann", "We camped by the river last weekend, so peaceful."),
                   ("2024-03-01", "Bo", "Sounds great, I stayed home and baked bread."),
                   ("2024-04-12", "Ann", "The kids keep asking when we go camping again!"),
                   ("2024-04-12", "Bo", "I started hiking on Sundays with my neighbour."),
                   ("2024-05-20", "Ann", "My new job starts on Monday.")])
    got = mem.recall([THREAD], "Where has Ann gone camping?", budget_tokens=2000,
                     mode="lexical")
    assert {s.id for s in got.sources} >= {"t1", "t3"}
    got = mem.recall([THREAD], "Does Bo hike?", budget_tokens=2000, mode="lexical")
    assert [s.id for s in got.sources][:1] == ["t4"]
