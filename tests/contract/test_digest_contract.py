"""Digests (``domain.digests``) behave alike on every backend: a window's digest promotes a
turn worded unlike the question, and forgetting a turn erases every digest that held its
text, in rows and in the database's bytes; rebuild does not bring one back."""

from __future__ import annotations

from tests.recall.test_digests import S, _observe

QUESTION = "Which brother gave camping gear?"


def _lexical(mem, query: str) -> list[str]:
    r = mem.recall([S], query, mode="lexical", limit=10, budget_tokens=2000)
    return [s.id for s in r.sources]


def test_digests_promote_and_are_erased_with_their_turns(remem_store, raw_sql,
                                                         database_bytes):
    mem = remem_store.create_memory("m1", {"digests": True})
    _observe(mem)
    assert "t3" in _lexical(mem, QUESTION)  # promoted by its window's digest
    assert raw_sql("UPDATE search_docs SET doc_type='digest' WHERE doc_type='digest'") == 2

    report = mem.forget_source("t3")

    assert report["state"] == "completed"
    assert raw_sql("UPDATE search_docs SET doc_type='digest' WHERE doc_type='digest'") == 0
    assert raw_sql("UPDATE vectors SET doc_type='digest' WHERE doc_type='digest'") == 0
    assert b"Quillmere" not in database_bytes() and b"quillmere" not in database_bytes()
    assert "t3" not in _lexical(mem, "Quillmere Lake stars")
    remem_store.rebuild("m1")
    assert raw_sql("UPDATE search_docs SET doc_type='digest' WHERE doc_type='digest'") == 0
    assert "t3" not in _lexical(mem, QUESTION) and "t1" in _lexical(mem, QUESTION)
