"""Recall through the Memory API on real SQLite files with the real bundled embedding model."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from remem import Authority
from remem.errors import InvalidInput, ResultLimitExceeded, UnsupportedCapability
from remem.providers.tokenizers import get_tokenizer

ALICE = "user:alice"


def _at(year: int) -> datetime:
    return datetime(year, 1, 1, tzinfo=UTC)


def _values(result) -> list:
    return [i.value for i in result.items]


def test_a_fact_stated_in_japanese_is_found_by_a_japanese_query(mem) -> None:
    mem.remember(ALICE, "favorite_food", "お寿司が大好きです", kind="preference")
    mem.remember(ALICE, "home_city", "Paris", kind="profile_slot")
    mem.remember(ALICE, "pets", "a dog named Rex")
    r = mem.recall(ALICE, "寿司は好きですか", budget_tokens=2000)
    assert r.items[0].value == "お寿司が大好きです"


def test_chinese_and_korean_text_is_findable_by_a_two_character_word(mem) -> None:
    mem.remember(ALICE, "hometown", "我住在北京市朝阳区")
    mem.remember("user:bo", "hometown", "서울특별시에 살아요")
    assert "我住在北京市朝阳区" in _values(mem.recall(ALICE, "北京", budget_tokens=2000))
    assert "서울특별시에 살아요" in _values(mem.recall("user:bo", "서울", budget_tokens=2000))


def test_an_emoji_is_findable(mem) -> None:
    mem.remember(ALICE, "favorite_animal", "cats 🐈 above all")
    mem.remember(ALICE, "home_city", "Paris")
    r = mem.recall(ALICE, "🐈", budget_tokens=2000)
    assert r.items[0].value == "cats 🐈 above all"


def test_superseded_values_are_not_current_but_come_back_with_history(mem) -> None:
    old = mem.remember(ALICE, "home_city", "Paris", valid_at=_at(2020))
    new = mem.remember(ALICE, "home_city", "Berlin", valid_at=_at(2023))
    r = mem.recall(ALICE, "home city", budget_tokens=2000)
    assert [(i.id, i.status) for i in r.items] == [(new.item_id, "current")]
    h = mem.recall(ALICE, "home city", budget_tokens=2000, include_history=True)
    assert {(i.id, i.status) for i in h.items} == {(new.item_id, "current"),
                                                   (old.item_id, "superseded")}


def test_as_of_recall_returns_the_value_current_at_that_time(mem) -> None:
    mem.remember(ALICE, "home_city", "Paris", valid_at=_at(2018))
    mem.remember(ALICE, "home_city", "Berlin", valid_at=_at(2021))
    mem.remember(ALICE, "home_city", "Lisbon", valid_at=_at(2024))
    for year, city in ((2019, "Paris"), (2022, "Berlin"), (2025, "Lisbon")):
        r = mem.recall(ALICE, "home city", budget_tokens=2000, valid_at=_at(year))
        assert [(i.value, i.status) for i in r.items] == [(city, "current")], year
    assert mem.recall(ALICE, "home city", budget_tokens=2000, valid_at=_at(2010)).items == []


def test_a_corrected_value_was_never_true_at_any_time(mem) -> None:
    wrong = mem.remember(ALICE, "home_city", "Pariss", valid_at=_at(2020))
    fixed = mem.correct(ALICE, "home_city", "Paris", expected_revision=wrong.revision)
    for year in (2020, 2022, 2030):
        r = mem.recall(ALICE, "home city", budget_tokens=2000, valid_at=_at(year))
        assert [i.id for i in r.items] == [fixed.item_id], year
    h = mem.recall(ALICE, "home city", budget_tokens=2000, valid_at=_at(2022),
                   include_history=True)
    assert {(i.value, i.status) for i in h.items} == {("Paris", "current"),
                                                      ("Pariss", "superseded")}


def test_an_older_statement_stays_history_and_does_not_hide_the_newer_one(mem) -> None:
    mem.remember(ALICE, "home_city", "Berlin", valid_at=_at(2023))
    stale = mem.remember(ALICE, "home_city", "Paris", valid_at=_at(2019))
    assert stale.outcome == "stale"
    assert _values(mem.recall(ALICE, "home city", budget_tokens=2000)) == ["Berlin"]
    assert _values(mem.recall(ALICE, "home city", budget_tokens=2000,
                              valid_at=_at(2020))) == ["Paris"]
    assert _values(mem.recall(ALICE, "home city", budget_tokens=2000,
                              valid_at=_at(2024))) == ["Berlin"]


def test_a_foreign_scopes_items_and_sources_never_appear(mem) -> None:
    mem.remember("user:bob", "home_city", "Tokyo")
    mem.remember("user:bob", "diet", "vegan")
    mem.observe("user:bob", "I live in Tokyo and I am vegan", source_id="bob-1")
    mem.remember(ALICE, "diet", "vegetarian")
    for q in ("Tokyo", "vegan diet", "where does bob live", "home city"):
        r = mem.recall([ALICE, "agent:bot"], q, budget_tokens=4000)
        assert all(i.scope == ALICE for i in r.items), q
        assert r.sources == [] and "Tokyo" not in r.to_json(), q


def test_archived_items_are_hidden_and_conflicts_are_flagged(mem) -> None:
    a = mem.remember(ALICE, "employer", "Acme")
    mem.archive(a.item_id)
    assert mem.recall(ALICE, "employer", budget_tokens=2000).items == []
    mem.remember(ALICE, "editor", "vim", valid_at=_at(2020))
    c = mem.remember(ALICE, "editor", "emacs", valid_at=_at(2021), authority=Authority.ASSERT)
    assert c.outcome == "conflict"
    r = mem.recall(ALICE, "editor", budget_tokens=2000)
    assert {(i.value, i.status) for i in r.items} == {("vim", "conflict"), ("emacs", "conflict")}
    assert '- editor: "vim" (fact, contested, 2020-01-01)' in r.text


def test_sources_come_back_labelled_source_never_as_facts(mem) -> None:
    mem.observe(ALICE, "By the way, my sister Jane lives in Montreal.", source_id="t1")
    r = mem.recall(ALICE, "Montreal sister", budget_tokens=2000)
    assert r.items == []
    assert [(s.id, s.label) for s in r.sources] == [("t1", "source")]
    assert "user:alice sources (raw evidence, not accepted facts)\n- user " in r.text


def test_agent_rules_that_match_outrank_similarity_and_never_drop_silently(mem) -> None:
    for i in range(12):
        mem.remember(ALICE, f"answer_note_{i}", f"answer format note number {i} about tables")
    mem.remember("agent:bot", "answer_format", "Always answer with tables", kind="rule")
    r = mem.recall([ALICE, "agent:bot"], "answer format tables", budget_tokens=4000)
    assert r.items[0].value == "Always answer with tables" and r.items[0].constraint
    small = mem.recall([ALICE, "agent:bot"], "answer format tables", budget_tokens=120)
    assert small.items[0].constraint and small.truncated
    assert small.coverage == {"constraints": "complete", "facts": "incomplete",
                              "sources": "complete"}
    with pytest.raises(ResultLimitExceeded):
        mem.recall([ALICE, "agent:bot"], "answer format tables", budget_tokens=25)


def test_kinds_filter_and_basis_seq(mem) -> None:
    mem.remember(ALICE, "diet", "vegetarian", kind="preference")
    last = mem.remember(ALICE, "diet_note", "vegetarian since 2010", kind="fact")
    r = mem.recall(ALICE, "vegetarian", budget_tokens=2000, kinds=["fact"])
    assert [i.kind for i in r.items] == ["fact"]
    assert r.basis_seq == mem.status()["head_seq"] and last.item_id == r.items[0].id


def test_the_model_facing_text_fits_the_budget_and_truncated_is_exact(mem) -> None:
    for i in range(25):
        mem.remember(ALICE, f"trip_{i}", f"trip number {i} to the mountains with friends")
    full = mem.recall(ALICE, "mountains trip", budget_tokens=100_000)
    assert not full.truncated and len(full.items) == 25
    tok = get_tokenizer("cl100k_base")
    for budget in (200, 400, 800, 1600):
        r = mem.recall(ALICE, "mountains trip", budget_tokens=budget, tokenizer="cl100k_base")
        assert tok.count(r.text) == r.tokens <= budget
        assert r.truncated == (len(r.items) < 25)
        assert r.coverage["facts"] == ("incomplete" if r.truncated else "complete")


def test_bad_requests_fail_clearly(mem) -> None:
    with pytest.raises(UnsupportedCapability):
        mem.recall(ALICE, "x", budget_tokens=100, tokenizer="gpt2")
    with pytest.raises(InvalidInput):
        mem.recall("alice", "x", budget_tokens=100)
    with pytest.raises(InvalidInput):
        mem.recall(ALICE, "  ", budget_tokens=100)
    with pytest.raises(InvalidInput):
        mem.recall(ALICE, "x", budget_tokens=0)
    with pytest.raises(InvalidInput):
        mem.recall(ALICE, "x", budget_tokens=100, kinds=["gossip"])


def test_recall_never_writes(mem) -> None:
    mem.remember(ALICE, "home_city", "Paris")
    before = mem.store.dump(mem.id, ("ledger", "items", "search_docs", "vectors",
                                     "profile_renders"))
    mem.recall(ALICE, "Paris", budget_tokens=500)
    mem.context(ALICE, "Paris")
    assert mem.store.dump(mem.id, ("ledger", "items", "search_docs", "vectors",
                                   "profile_renders")) == before


def test_context_fits_max_bytes_in_the_instantkv_shape(mem) -> None:
    for i in range(40):
        mem.remember(ALICE, f"book_{i}", f"a long book title number {i} about gardens " * 3)
    c = mem.context(ALICE, "gardens book", max_bytes=1024)
    assert set(c.to_dict()) == {"max_bytes", "items", "truncated"}
    assert len(c.to_json().encode()) == c.size_bytes <= 1024 and c.truncated
    assert mem.context(ALICE, "gardens", max_bytes=65536).truncated is False
    with pytest.raises(InvalidInput):
        mem.context(ALICE, "gardens", max_bytes=64)


def test_rebuild_restores_full_text_rows(mem, rstore) -> None:
    mem.remember(ALICE, "favorite_food", "お寿司")
    mem.observe(ALICE, "寿司を食べた 🍣", source_id="s1")
    conn = rstore.adapter.conn
    conn.execute("DELETE FROM search_fts")
    conn.execute("DELETE FROM search_docs")
    rstore.rebuild("m1")
    assert conn.execute("SELECT count(*) FROM search_fts").fetchone()[0] == 2
    r = mem.recall(ALICE, "寿司", budget_tokens=2000)
    assert _values(r) == ["お寿司"] and [s.id for s in r.sources] == ["s1"]


def test_an_expired_value_is_not_recalled_as_current(mem, rclock) -> None:
    from datetime import timedelta

    mem.remember(ALICE, "mood", "tired", valid_until=rclock.now() + timedelta(hours=1))
    assert _values(mem.recall(ALICE, "mood", budget_tokens=500)) == ["tired"]
    rclock.advance(hours=2)
    assert mem.recall(ALICE, "mood", budget_tokens=500).items == []
    assert _values(mem.recall(ALICE, "mood", budget_tokens=500,
                              valid_at=rclock.now() - timedelta(hours=1, minutes=30))) == ["tired"]


def test_forget_removes_text_and_vectors_from_recall(mem, rstore) -> None:
    mem.observe(ALICE, "I collect antique teapots, don't tell anyone", source_id="t9")
    w = mem.remember(ALICE, "secret_hobby", "collecting antique teapots",
                     source={"id": "t9", "role": "user"})
    assert mem.recall(ALICE, "antique teapots", budget_tokens=2000).items
    mem.forget(w.item_id)
    r = mem.recall(ALICE, "antique teapots", budget_tokens=2000)
    assert r.items == [] and r.sources == [] and "teapot" not in r.to_json()
    conn = rstore.adapter.conn
    assert conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM search_fts WHERE terms LIKE '%teapot%'"
                        ).fetchone()[0] == 0
