"""Where a fact came from and how it is indexed: ``causedByLogId`` lists every causal log
entry (derive over several turns, consolidation of duplicates), ``supersedes`` names the
superseded item (never a merged duplicate), ``embeddingModel`` is the model of the fact's
stored vector and ``reembed`` finds the facts embedded by another model. Both backends."""

from __future__ import annotations

from logfacts.fact_kit import (  # noqa: F401
    ALICE,
    assert_valid_fact,
    blob_dir,
    clock,
    run_sql,
    store,
)

import remem.testing.hashembed  # noqa: F401 - registers the "hash" embedding provider

HASH = {"embedding": {"provider": "hash", "dimensions": 48}}


def test_derive_over_several_turns_lists_every_turn_that_stated_the_fact(store):
    mem = store.create_memory("m1", config=HASH)
    mem.observe(ALICE, "I live in Berlin", source_id="turn-1")
    mem.observe(ALICE, "Nice weather today", source_id="turn-2")
    mem.observe(ALICE, "I live in Berlin.", source_id="turn-3")
    [item] = mem.items(scope=ALICE, key="home_city").items
    rec = mem.fact(item.item_id)
    assert_valid_fact(rec)
    assert rec["causedByLogId"] == ["turn-1", "turn-3"]


def test_consolidation_lists_the_sources_of_every_merged_duplicate(store):
    mem = store.create_memory("m1", config={**HASH, "keys": {"allergies":
                                                          {"cardinality": "multi"}}})
    first = mem.remember_fact(ALICE, "allergies", "Peanuts.", source={"id": "log-1"})
    mem.remember_fact(ALICE, "allergies", "peanuts", source={"id": "log-2"})
    mem.remember_fact(ALICE, "allergies", "the peanuts", source={"id": "log-3"})
    mem.consolidate_now()
    assert any(o["stats"].get("merged") for o in mem.run_jobs() if o["kind"] == "consolidate")
    rec = mem.fact(first.item_id)
    assert_valid_fact(rec)
    assert rec["causedByLogId"] == ["log-1", "log-2", "log-3"]
    assert "supersedes" not in rec  # merged duplicates are causes, not predecessors


def test_embedding_model_is_per_fact_and_reembed_finds_facts_of_another_model(
        store, backend, store_url):
    mem = store.create_memory("m1", config=HASH)
    a = mem.remember_fact(ALICE, "diet", "vegan")
    b = mem.remember_fact(ALICE, "home_city", "Berlin")
    assert {mem.fact(i)["embeddingModel"] for i in (a.item_id, b.item_id)} == {"hash-48"}
    assert mem.reembed()["embedded"] == 0  # nothing embedded by another model
    assert run_sql(backend, store_url, "UPDATE vectors SET model='old-model' WHERE "
                   f"doc_id='{b.item_id}'") == 1
    assert mem.fact(b.item_id)["embeddingModel"] == "old-model"
    out = mem.reembed()
    assert out["embedded"] == 1  # exactly the fact embedded by the other model
    assert mem.fact(b.item_id)["embeddingModel"] == "hash-48"
    assert_valid_fact(mem.fact(b.item_id))
