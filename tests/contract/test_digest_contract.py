"""Digests (``domain.digests``) behave alike on every backend: a window's digest promotes a
turn worded unlike the question, and forgetting a turn erases every digest that held its
text, in rows and in the database's bytes; a window with enough live turns left is derived
again without it (the digest rebuild derives), so it still promotes its turns."""

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
    assert report["surfaces"]["digests"] == {"erased": 2, "state": "erased"}
    # both windows still have five live turns: each digest is derived again without t3
    assert raw_sql("UPDATE search_docs SET doc_type='digest' WHERE doc_type='digest'") == 2
    assert raw_sql("UPDATE vectors SET doc_type='digest' WHERE doc_type='digest'") == 2
    assert b"Quillmere" not in database_bytes() and b"quillmere" not in database_bytes()
    assert "t3" not in _lexical(mem, "Quillmere Lake stars")
    assert "t5" in _lexical(mem, "pottery class Tuesday")  # promoted by window 1 (no t3)
    remem_store.rebuild("m1")
    assert raw_sql("UPDATE search_docs SET doc_type='digest' WHERE doc_type='digest'") == 2
    assert "t3" not in _lexical(mem, QUESTION) and "t1" in _lexical(mem, QUESTION)


RUN = [  # one run shared by two users (seq: scope, text)
    ("user:alice", "Any plans for the long weekend?"),
    ("user:alice", "We might visit the coast."),
    ("user:bob", "My locker code is Zephyrine forty."),
    ("user:alice", "Maybe Brittany, near Saint-Malo."),
    ("user:bob", "The garage PIN is Vantablue ninety."),
    ("user:alice", "My sister booked the ferry tickets."),  # completes window 0: alice's
    ("user:bob", "I fixed the bicycle chain."),
    ("user:bob", "The bakery opens at seven."),
    ("user:bob", "Rain is expected on Sunday."),  # completes window 1: bob's
]


def _has(raw_sql, table: str, doc: str, extra: str = "") -> bool:
    return raw_sql(f"UPDATE {table} SET doc_type='digest' WHERE doc_id='{doc}'{extra}") == 1


def test_forgetting_one_users_turn_keeps_the_other_users_digest_of_the_run(
        remem_store, raw_sql, database_bytes):
    """Bob's turn (seq 4) is in windows 0 and 1. Window 0 was completed by alice: its
    digest joins alice's turns only, never held bob's text, and stays as it was. Window 1 is
    bob's: it held the turn, is erased and derived again from bob's remaining turns."""
    from remem.domain.access import Principal, Role
    from remem.domain.digests import digest_doc_id
    from remem.domain.textindex import content_hash

    mem = remem_store.create_memory("m1", {"digests": True})
    for i, (scope, text) in enumerate(RUN):
        mem.observe(scope, text, role="user", source_id=f"s{i}", run_id="r")
    alice_doc, bob_doc = digest_doc_id("r", 0), digest_doc_id("r", 1)
    alice_text = "\n".join(t for s, t in RUN[:6] if s == "user:alice")
    bob_text = "\n".join(t for s, t in RUN[3:] if s == "user:bob")
    assert _has(raw_sql, "vectors", alice_doc, f" AND content_hash='{content_hash(alice_text)}'")
    assert _has(raw_sql, "vectors", bob_doc, f" AND content_hash='{content_hash(bob_text)}'")
    assert "s3" in _sources(mem, "user:alice", "weekend ferry")  # promoted by alice's digest

    bob = mem.as_principal(Principal(mem.id, Role("writer"), "user:bob", "t-bob"))
    report = bob.forget_source("s4")

    assert report["state"] == "completed", report
    assert report["surfaces"]["digests"] == {"erased": 1, "state": "erased"}
    assert _has(raw_sql, "vectors", alice_doc, f" AND content_hash='{content_hash(alice_text)}'")
    assert _has(raw_sql, "search_docs", alice_doc)
    rest = "\n".join(t for s, t in RUN[6:] if s == "user:bob")
    assert _has(raw_sql, "vectors", bob_doc, f" AND content_hash='{content_hash(rest)}'")
    assert _has(raw_sql, "search_docs", bob_doc)
    assert b"Vantablue" not in database_bytes() and b"vantablue" not in database_bytes()
    assert "s3" in _sources(mem, "user:alice", "weekend ferry")
    assert "s7" in _sources(mem, "user:bob", "bicycle chain")  # bob's window, without s4
    remem_store.rebuild("m1")  # rebuild derives the same digests
    assert _has(raw_sql, "search_docs", alice_doc) and _has(raw_sql, "search_docs", bob_doc)


def _sources(mem, scope: str, query: str) -> list[str]:
    r = mem.recall([scope], query, mode="lexical", limit=10, budget_tokens=2000)
    return [s.id for s in r.sources]


def test_forgetting_a_fact_counts_the_digests_of_the_turns_it_redacts(remem_store, raw_sql):
    """The erasure report of an item forget names the digests erased with the sources that
    held the value (``surfaces.digests``), like every other surface; the window, with
    enough live turns left, is indexed again without the turn."""
    from remem.domain.digests import digest_doc_id

    mem = remem_store.create_memory("m1", {"digests": True})
    turns = ["Hello there.", "I live in Lyon.", "Nice weather today.", "We bought a kettle.",
             "The train was late.", "Dinner is at eight."]
    for i, text in enumerate(turns):
        mem.observe("user:maya", text, role="user", source_id=f"s{i}", run_id="r")
    [item] = mem.items(scope="user:maya", key="home_city").items
    assert item.value == "Lyon"

    report = mem.forget(item.item_id).to_dict()

    assert report["state"] == "completed", report
    assert report["sources"] == ["s1"]
    assert report["surfaces"]["digests"] == {"erased": 1, "state": "erased"}
    assert _has(raw_sql, "search_docs", digest_doc_id("r", 0))  # five live turns left
    assert "s3" in _sources(mem, "user:maya", "train late")  # still promoted
