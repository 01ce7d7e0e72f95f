"""Round-5 probe, as a new user following the README's "Conversations" walk-through
literally: "I moved to Lille yesterday." said on 6 Feb 09:00 +01:00 makes home_city valid
from 5 Feb 00:00 +01:00, and the README shows the recall line as
``- home_city: "Lille" (profile_slot, 2024-02-05)``. remem printed ``2024-02-04``: the
model-facing text cut the UTC instant (4 Feb 23:00Z) to its date, so the model was told the
move happened the day before the user said it did. Now the payload keeps the UTC offset the
statement's time gave and the line shows the day in that zone; the instant stays UTC. Real
SQLite file, public API only."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

import remem

PARIS = timezone(timedelta(hours=1))


@pytest.fixture
def chat(tmp_path):
    store = remem.open(str(tmp_path / "memory.db"))
    yield store.create_memory("chat")
    store.close()


def test_the_fact_is_valid_from_the_day_the_user_meant(chat):
    r = chat.observe("user:maya", "I moved to Lille yesterday.", role="user",
                     source_id="chat/7", occurred_at=datetime(2024, 2, 6, 9, 0, tzinfo=PARIS))
    assert r.phase == "available"
    i = chat.inspect("user:maya", "home_city")
    assert i.value == "Lille"
    [item] = chat.items(scope="user:maya", key="home_city").items
    assert datetime.fromisoformat(item.valid_at.replace("Z", "+00:00")) == datetime(
        2024, 2, 5, tzinfo=PARIS)  # the instant is right; only its rendering was not


def test_the_recall_line_shows_the_day_in_the_speakers_zone(chat):
    r = chat.observe("user:maya", "I moved to Lille yesterday.", role="user",
                     source_id="chat/7", occurred_at=datetime(2024, 2, 6, 9, 0, tzinfo=PARIS))
    res = chat.recall(["user:maya"], "where does Maya live?", budget_tokens=500,
                      after=[r.receipt_id])
    assert '- home_city: "Lille" (profile_slot, 2024-02-05)' in res.text, res.text
    [item] = res.items
    assert item.valid_at.startswith("2024-02-04T23:00:00")  # structured: the UTC instant
