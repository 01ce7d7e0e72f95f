"""Dates in the manage view and the agent provider's item lines are shown in the zone the
statement gave (the payload's ``tz_offset_min``), as recall's item lines are: a fact stated
at 23:30 +10:00 on 1 May is "2026-05-01" there, though its UTC date is 30 April. Real SQLite
file; the manage view through a real ``remem serve`` (httpx, no browser)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

import httpx

import remem
from remem.agent.provider import MemoryProvider
from remem.service.tokens import Tokens
from remem.testing.served import Server

PLUS10 = timezone(timedelta(hours=10))
STATED = datetime(2026, 5, 1, 23, 30, tzinfo=PLUS10)  # 2026-04-30T13:30Z


def _seed(store):
    mem = store.create_memory("m1")
    zoned = mem.remember("user:alice", "favourite_tea", "sencha green tea", kind="fact",
                         valid_at=STATED)
    utc = mem.remember("user:alice", "favourite_coffee", "flat white coffee", kind="fact",
                       valid_at=datetime(2026, 4, 30, 13, 30, tzinfo=timezone.utc))
    return mem, zoned, utc


def test_memory_tz_offsets_gives_the_stated_offsets_of_visible_items(store):
    mem, zoned, utc = _seed(store)
    other = mem.remember("user:bob", "diet", "vegan", valid_at=STATED)
    assert mem.tz_offsets([zoned.item_id, utc.item_id, other.item_id, "itm_none"]) == {
        zoned.item_id: 600, other.item_id: 600}
    from remem.domain.access import Principal, Role

    alice = mem.as_principal(Principal(mem.id, Role.READER, "user:alice"))
    assert alice.tz_offsets([zoned.item_id, other.item_id]) == {zoned.item_id: 600}


def test_the_provider_line_shows_the_day_in_the_stated_zone(store):
    mem, zoned, utc = _seed(store)
    provider = MemoryProvider(mem, user_scope="user:alice", budget_tokens=400)
    text = provider.recall("c1", "which tea and coffee do I like").text
    assert 'favourite_tea = "sencha green tea" (since 2026-05-01)' in text
    assert 'favourite_coffee = "flat white coffee" (since 2026-04-30)' in text
    recall = mem.recall(["user:alice"], "sencha green tea", budget_tokens=500).text
    assert "2026-05-01" in recall  # the same day recall's own item line shows


def _signed_in(base: str, token: str) -> httpx.Client:
    http = httpx.Client(base_url=base, timeout=30)
    form = http.get("/ui/login")
    pre = re.search(r'name="pre" value="([^"]+)"', form.text).group(1)
    r = http.post("/ui/login", data={"token": token, "pre": pre})
    assert r.status_code == 303, r.text
    return http


def test_the_manage_view_shows_valid_from_in_the_stated_zone(db_path):
    store = remem.open(db_path)
    mem, zoned, utc = _seed(store)
    token = Tokens(store).create("m1", "admin", "admin")[0]
    store.close()
    with Server(db_path, startup_s=60) as srv:
        http = _signed_in(srv.base, token)
        rows = http.get("/ui/items").text
        assert "2026-05-01 23:30 +10:00" in rows  # the stated zone, with its offset
        assert "2026-04-30 13:30</td>" in rows  # no offset stated: UTC as before
        detail = http.get(f"/ui/items/{zoned.item_id}").text
        assert "2026-05-01 23:30 +10:00" in detail
        http.close()
