"""Issue 13 point 2: in a scope with few items the obvious facts are found, on both backends
(the contract suite's parametrisation: a SQLite file and a fresh PostgreSQL database)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import remem

USER = "user:u1"
PROFILE = [("diet", "pescatarian", "preference"), ("home_city", "Lyon", "profile_slot"),
           ("employer", "Acme Robotics", "profile_slot"), ("allergies", "peanuts", "fact")]


@pytest.fixture
def mem(store_url: str, local_embedder) -> Iterator[remem.Memory]:
    store = remem.open(store_url)
    try:
        m = store.create_memory("m1")
        m.ids = {}
        for key, value, kind in PROFILE:
            m.ids[key] = m.remember(USER, key, value, kind=kind).item_id
        m.remember("user:u2", "diet", "vegan", kind="preference")
        yield m
    finally:
        store.close()


def test_a_restaurant_request_gets_the_diet_and_the_allergy(mem) -> None:
    for query, top in (("book me a table nearby", 4), ("suggest a restaurant for tonight", 3)):
        r = mem.recall([USER], query, budget_tokens=300)
        keys = [i.key for i in r.items]
        assert {"diet", "allergies"} <= set(keys[:top]), (query, keys)
        assert {i.scope for i in r.items} == {USER}  # never another user's diet
        assert '- diet: "pescatarian"' in r.text and "vegan" not in r.to_json()


def test_the_floor_returns_every_live_item_of_a_small_scope_even_when_nothing_matches(mem
                                                                                   ) -> None:
    r = mem.recall([USER], "plan my weekend", budget_tokens=1000)
    assert sorted(i.key for i in r.items) == sorted(k for k, _, _ in PROFILE)
    assert not r.truncated and r.status == "succeeded"


def test_the_floor_respects_the_recall_filter(mem) -> None:
    mem.archive(mem.ids["employer"])
    r = mem.recall([USER], "plan my weekend", budget_tokens=1000, kinds=["fact"])
    assert [i.key for i in r.items] == ["allergies"]
    r = mem.recall([USER], "plan my weekend", budget_tokens=1000)
    assert "employer" not in {i.key for i in r.items} and len(r.items) == 3
    r = mem.recall([USER], "plan my weekend", budget_tokens=1000, limit=2)
    assert len(r.items) == 2
