"""Model-facing dates in the speaker's zone, on both backends: a fact's line shows the day of
its ``valid_at`` in the UTC offset its statement gave (kept beside the payload), a source
line the day of ``occurred_at`` in the source's own offset; the structured results and the
ledger keep UTC instants. Real SQLite file and real PostgreSQL."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

TOKYO = timezone(timedelta(hours=9))
LIMA = timezone(timedelta(hours=-5))


def _recall(mem, scope: str, query: str):
    return mem.recall([scope], query, budget_tokens=800)


def test_a_remembered_time_renders_in_the_zone_it_was_given(remem_store):
    mem = remem_store.create_memory("m1")
    mem.remember("user:kai", "home_city", "Osaka", valid_at=datetime(2024, 3, 1, 8, 0,
                                                                       tzinfo=TOKYO))
    mem.remember("user:kai", "diet", "vegetarian", kind="preference",
                 valid_at=datetime(2024, 3, 1, 20, 0, tzinfo=LIMA))
    mem.remember("user:kai", "employer", "Acme")  # no zone given: the UTC date
    res = _recall(mem, "user:kai", "Kai home city diet employer")
    assert '- home_city: "Osaka" (fact, 2024-03-01)' in res.text, res.text
    assert '- diet: "vegetarian" (preference, 2024-03-01)' in res.text, res.text
    by_key = {i.key: i.valid_at for i in res.items}
    assert f'- employer: "Acme" (fact, {by_key["employer"][:10]})' in res.text
    assert by_key["home_city"].startswith("2024-02-29T23:00:00")  # UTC in the structure
    assert by_key["diet"].startswith("2024-03-02T01:00:00")


def test_a_source_line_shows_the_day_the_speaker_said_it(remem_store):
    mem = remem_store.create_memory("m1")
    mem.observe("user:kai", "The harbour fog is thick tonight.", role="user", source_id="s1",
                occurred_at=datetime(2024, 3, 1, 0, 30, tzinfo=TOKYO))  # 29 Feb 15:30Z
    res = _recall(mem, "user:kai", "harbour fog")
    assert '- user 2024-03-01: "The harbour fog is thick tonight."' in res.text, res.text
    [src] = res.sources
    assert src.occurred_at.startswith("2024-02-29T15:30:00")
