"""Sources, full text, vectors, profile and reembed on every backend: the search methods
differ per backend (FTS5 + exact vectors; tsvector + pgvector HNSW), the fusion, filtering and
rendering are shared, and what a caller sees is the same."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

import remem
import remem.testing.hashembed  # noqa: F401 - registers the "hash" embedding provider

ALICE, BOB = "user:alice", "user:bob"


def values(result) -> list:
    return [i.value for i in result.items]




def test_cjk_emoji_and_accented_words_are_found(mem):
    mem.remember(ALICE, "favorite_food", "お寿司が大好きです", kind="preference")
    mem.remember(ALICE, "hometown", "我住在北京市朝阳区")
    mem.remember(ALICE, "favorite_animal", "cats 🐈 above all")
    mem.remember(ALICE, "favorite_place", "the Café de Flore")
    mem.remember(BOB, "hometown", "서울특별시에 살아요")
    assert values(mem.recall(ALICE, "寿司は好きですか", budget_tokens=2000))[0] == "お寿司が大好きです"
    assert "我住在北京市朝阳区" in values(mem.recall(ALICE, "北京", budget_tokens=2000))
    assert values(mem.recall(ALICE, "🐈", budget_tokens=2000))[0] == "cats 🐈 above all"
    assert values(mem.recall(ALICE, "cafe", budget_tokens=2000))[0] == "the Café de Flore"
    assert "서울특별시에 살아요" in values(mem.recall(BOB, "서울", budget_tokens=2000))


def test_a_paraphrase_is_found_by_its_meaning(mem):
    mem.remember(ALICE, "pets", "a dog named Rex")
    mem.remember(ALICE, "home_city", "Paris")
    mem.remember(ALICE, "job", "accountant at a bank")
    r = mem.recall(ALICE, "puppy", budget_tokens=2000)  # no shared word: vectors only
    assert values(r)[0] == "a dog named Rex"


def test_history_and_as_of_recall(mem):
    mem.remember(ALICE, "home_city", "Paris", valid_at=datetime(2018, 1, 1, tzinfo=UTC))
    new = mem.remember(ALICE, "home_city", "Berlin", valid_at=datetime(2021, 1, 1, tzinfo=UTC))
    r = mem.recall(ALICE, "home city", budget_tokens=2000)
    assert [(i.id, i.status) for i in r.items] == [(new.item_id, "current")]
    then = mem.recall(ALICE, "home city", budget_tokens=2000,
                      valid_at=datetime(2019, 1, 1, tzinfo=UTC))
    assert values(then) == ["Paris"]
    h = mem.recall(ALICE, "home city", budget_tokens=2000, include_history=True)
    assert sorted(values(h)) == ["Berlin", "Paris"]


def test_other_scopes_never_leak_into_recall(mem):
    mem.remember(BOB, "home_city", "Oslo")
    mem.observe(BOB, "I secretly live in Oslo", source_id="b1")
    mem.remember(ALICE, "home_city", "Paris")
    r = mem.recall(ALICE, "where does anyone live Oslo home city", budget_tokens=2000)
    assert values(r) == ["Paris"] and r.sources == []


def test_observed_sources_come_back_labelled_and_chain_per_run(remem_store):
    mem = remem_store.create_memory("m1")
    a = mem.observe(ALICE, "I moved to Lisbon last spring", source_id="turn-1", run_id="r1",
                    derive=False)  # evidence only: no claims are extracted from it
    b = mem.observe(ALICE, "My sister lives in Porto", source_id="turn-2", run_id="r1",
                    derive=False)
    again = mem.observe(ALICE, "I moved to Lisbon last spring", source_id="turn-1", run_id="r1",
                        derive=False)
    assert (a.sequence, b.sequence) == (0, 1) and again.replayed  # schema LogEntry: from 0
    assert again.entry_hash == a.entry_hash
    r = mem.recall(ALICE, "Lisbon", budget_tokens=2000)
    assert [(s.id, s.label) for s in r.sources][:1] == [("turn-1", "source")]
    assert r.items == []
    rep = remem_store.verify()
    assert rep["ok"] and rep["memories"]["m1"]["sources_ok"] is True


def test_a_tampered_source_row_breaks_verify(remem_store, raw_sql):
    mem = remem_store.create_memory("m1")
    for n, text in enumerate(["I moved to Lisbon", "My sister lives in Porto", "I like tea"]):
        mem.observe(ALICE, text, source_id=f"turn-{n}", run_id="r1", derive=False)
    assert remem_store.verify()["ok"]
    assert raw_sql("UPDATE sources SET role='assistant' WHERE source_id='turn-1'") == 1
    rep = remem_store.verify()
    assert not rep["ok"] and rep["memories"]["m1"]["sources_broken"]["source_id"] == "turn-1"


def test_forget_redacts_sources_that_contain_the_value(remem_store):
    mem = remem_store.create_memory("m1")
    secret = "my hideout is Zanzibar-Quokka, do not tell"
    mem.observe(ALICE, secret, source_id="t1", derive=False)
    mem.observe(ALICE, "I like green tea", source_id="t2", derive=False)
    r = mem.remember(ALICE, "hideout", "Zanzibar-Quokka", source={"id": "t1", "role": "user"})
    rep = mem.forget(r.item_id)
    assert rep.state == "completed" and rep.surfaces["sources"]["state"] == "erased"
    assert mem.recall(ALICE, "Zanzibar Quokka hideout", budget_tokens=2000).sources == []
    assert [s.id for s in mem.recall(ALICE, "green tea", budget_tokens=2000).sources] == ["t2"]
    assert mem.observe(ALICE, secret, source_id="t1", derive=False).redacted  # not stored again
    assert remem_store.verify()["ok"]  # the chain still verifies without the text


def test_the_profile_is_byte_identical_per_activation(clocked_store, clock):
    mem = clocked_store.create_memory("m1")
    mem.remember(ALICE, "name", "Alice", kind="identity")
    mem.remember(ALICE, "diet", "vegan", kind="preference")
    first = mem.profile(ALICE, budget_tokens=500, activation_id="a1")
    mem.remember(ALICE, "home_city", "Paris", kind="profile_slot")
    clock.advance(minutes=5)
    assert mem.profile(ALICE, budget_tokens=500, activation_id="a1").to_json() == first.to_json()
    fresh = mem.profile(ALICE, budget_tokens=500, activation_id="a2")
    assert "Paris" in fresh.to_json() and "Paris" not in first.to_json()


def test_rebuild_restores_the_full_text_index(remem_store, raw_sql, backend):
    mem = remem_store.create_memory("m1")
    mem.remember(ALICE, "favorite_food", "お寿司が大好きです")
    mem.observe(ALICE, "we talked about Kyoto temples", source_id="s1", derive=False)
    if backend == "sqlite":  # the FTS5 rows live beside search_docs there
        raw_sql("DELETE FROM search_fts")
    assert raw_sql("DELETE FROM search_docs") == 2
    remem_store.rebuild("m1")
    assert values(mem.recall(ALICE, "寿司", budget_tokens=2000)) == ["お寿司が大好きです"]
    assert [s.id for s in mem.recall(ALICE, "Kyoto", budget_tokens=2000).sources] == ["s1"]


def test_reembed_switches_model_and_dimension_atomically(remem_store):
    mem = remem_store.create_memory("m1")
    mem.remember(ALICE, "pets", "a cat called Mochi")
    mem.remember(ALICE, "home_city", "Paris")
    mem.observe(ALICE, "I bought a red bicycle yesterday", source_id="t1", derive=False)
    remem_store.update_config("m1", {"embedding": {"provider": "hash", "dimensions": 48}})
    other = remem_store.memory("m1")
    with pytest.raises(remem.RememError) as info:  # the memory still holds 384-d vectors
        other.recall(ALICE, "cat", budget_tokens=500)
    assert info.value.code == "embedding_mismatch"
    out = other.reembed()
    assert (out["model"], out["dimensions"], out["switched"]) == ("hash-48", 48, True)
    assert out["embedded"] == 3
    assert values(other.recall(ALICE, "cat called Mochi", budget_tokens=2000))[0] == \
        "a cat called Mochi"
    other.remember(ALICE, "diet", "vegan")  # new writes use the new model
    assert values(other.recall(ALICE, "vegan", budget_tokens=2000))[0] == "vegan"
    assert other.reembed()["embedded"] == 0


def test_receipts_move_to_available_and_release_a_recall_barrier(store_url):
    store = remem.open(store_url, derive="worker")
    try:
        mem = store.create_memory("m1")
        r = mem.observe(ALICE, "I live in Lisbon", source_id="turn-1")
        assert r.phase == "recorded" and r.accepted_seq >= 1
        again = mem.observe(ALICE, "I live in Lisbon", source_id="turn-1")
        assert again.replayed and again.receipt_id == r.receipt_id
        waiting = mem.recall(ALICE, "where do I live", budget_tokens=1500,
                             after=[r.receipt_id])
        assert waiting.status == "pending" and waiting.unresolved == [r.receipt_id]
        assert [o["status"] for o in mem.run_jobs()] == ["succeeded"]
        done = mem.receipt(r.receipt_id)
        assert done.phase == "available"
        assert done.accepted_seq <= done.resolved_seq <= done.available_seq
        ready = mem.recall(ALICE, "where do I live", budget_tokens=1500, after=[r.receipt_id])
        assert ready.status == "succeeded" and ready.action_eligible
        assert mem.runs()[0]["status"] == "succeeded"
    finally:
        store.close()
