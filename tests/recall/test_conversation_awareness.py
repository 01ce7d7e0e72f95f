"""Conversation awareness in recall: a named speaker's turns first, and answers follow their
questions (domain.recall.named_actors / strip_actors / rescore_sources, and end to end)."""

from __future__ import annotations

from datetime import UTC, datetime

from remem.domain.recall import (
    NEXT_TURN_SHARE,
    OTHER_ACTOR_WEIGHT,
    named_actors,
    rescore_sources,
    strip_actors,
)

THREAD = "thread:c1"


def test_actors_are_named_by_whole_words_in_any_case() -> None:
    actors = {"Alison", "Beatrice", "Bea", "me", "Jean Luc"}
    assert named_actors("What did alison's mom say?", actors) == {"Alison"}
    assert named_actors("When did Beatrice and Jean-Luc meet?", actors) == {"Beatrice", "Jean Luc"}
    assert named_actors("Tell me about Alisons", actors) == frozenset()


def test_stripping_a_name_keeps_the_rest_of_the_question() -> None:
    assert strip_actors("What did Alison's mom say?", {"Alison"}) == "What did mom say?"
    assert strip_actors("Which city is ALISON from?", {"Alison"}) == "Which city is from?"
    assert strip_actors("Alison?", {"Alison"}) == "Alison?"  # nothing would be left


def _row(sid: str, seq: int, actor: str | None, run: str = "r") -> dict:
    return {"source_id": sid, "run_id": run, "sequence": seq, "actor": actor}


def test_other_speakers_lose_weight_and_answers_gain_from_their_question() -> None:
    rows = [_row("q", 1, "Bea"), _row("a", 2, "Caro"), _row("x", 7, "Bea"),
            _row("y", 3, "Caro", run="other")]
    scores = {"q": 1.0, "a": 0.5, "x": 0.8, "y": 0.4}
    plain = rescore_sources(scores, rows)
    assert plain == {"q": 1.0, "a": 0.5 + NEXT_TURN_SHARE * 1.0, "x": 0.8, "y": 0.4}
    named = rescore_sources(scores, rows, frozenset({"Caro"}))
    assert named["q"] == OTHER_ACTOR_WEIGHT * 1.0 and named["y"] == 0.4
    assert named["a"] == 0.5 + NEXT_TURN_SHARE * OTHER_ACTOR_WEIGHT


def test_a_question_naming_a_speaker_finds_what_that_speaker_said(mem) -> None:
    at = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    turns = [("Bea", "Alison, you always talk about the lake house, it sounds lovely!"),
             ("Alison", "It is! I go there every summer to paint the sunrise."),
             ("Bea", "Alison, your sunrise paintings are the best."),
             ("Alison", "Thanks! My grandma taught me watercolours in Sweden.")]
    for i, (who, text) in enumerate(turns, start=1):
        mem.observe(THREAD, text, actor=who, source_id=f"D1:{i}", run_id="c1", occurred_at=at)
    r = mem.recall([THREAD], "Where did Alison learn watercolours?", budget_tokens=2000)
    assert r.sources[0].id == "D1:4"
    r = mem.recall([THREAD], "What does Alison do every summer?", budget_tokens=2000)
    assert r.sources[0].id == "D1:2"
