"""Engine-made digests (issue 18, lever 1): windows of consecutive turns indexed as their own
documents that promote their turns into recall, erased with any turn they contain. Real
SQLite files and the bundled embedder; a small synthetic conversation."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import remem
from remem.domain.digests import (
    completing_positions,
    digest_doc_id,
    holding_windows,
    promoted,
    window_completed_by,
    window_digests,
    windows_containing,
)
from remem.service.jobs.runner import Worker

S = "thread:trip"
TURNS = [  # (speaker, text): the answer turn shares no word with the question
    ("Ana", "How was your weekend?"),
    ("Ben", "Busy. We finally used the camping gear my brother gave us."),
    ("Ana", "Oh nice, where did you end up?"),
    ("Ben", "We drove north to Quillmere Lake and slept under the stars."),
    ("Ana", "That sounds lovely."),
    ("Ben", "The kids loved it."),
    ("Ana", "I started a pottery class on Tuesday."),
    ("Ben", "What did you make first?"),
    ("Ana", "A small blue bowl, a bit lopsided."),
]


def _observe(mem: remem.Memory, turns=TURNS, scope: str = S, run: str = "r1",
             prefix: str = "t") -> None:
    for i, (who, text) in enumerate(turns):
        mem.observe(scope, text, role="user", actor=who, source_id=f"{prefix}{i}", run_id=run)


def _digests(db: Path) -> dict[str, str]:
    with sqlite3.connect(db) as c:
        return dict(c.execute("SELECT doc_id, scope FROM search_docs WHERE doc_type='digest'"))


def _digest_vectors(db: Path) -> set[str]:
    with sqlite3.connect(db) as c:
        return {r[0] for r in c.execute("SELECT doc_id FROM vectors WHERE doc_type='digest'")}


def test_windows_are_numbered_by_sequence_and_each_turn_is_in_at_most_two():
    assert [window_completed_by(s) for s in range(12)] == [
        None, None, None, None, None, 0, None, None, 1, None, None, 2]
    assert windows_containing(0) == [0]
    assert windows_containing(4) == [0, 1]
    assert windows_containing(5) == [0, 1]
    assert windows_containing(6) == [1, 2]


def test_a_window_with_a_redacted_turn_or_another_scope_gets_no_mixed_digest():
    rows = [{"run_id": "r", "sequence": i, "scope": "user:a" if i != 2 else "user:b",
             "text": f"turn {i}"} for i in range(6)]
    (doc, scope, text), = window_digests(rows)
    assert (doc, scope) == (digest_doc_id("r", 0), "user:a")
    assert "turn 2" not in text and text.splitlines()[0] == "turn 0"
    rows[3]["text"] = None  # erased: the digest is the window's other live turns
    assert window_digests(rows) == [(doc, "user:a", "turn 0\nturn 1\nturn 4\nturn 5")]
    for i in (0, 1, 4):
        rows[i]["text"] = None  # fewer than two live turns of the scope: no digest
    assert window_digests(rows) == []


def test_an_erased_turn_is_held_only_by_the_digests_its_own_scope_completed():
    erased = [{"run_id": "r", "sequence": 4, "scope": "user:b"}]
    assert completing_positions(erased) == [("r", 5), ("r", 8)]
    scope_at = {("r", 5): "user:a", ("r", 8): "user:b"}  # window 1 not completed: absent
    assert holding_windows(erased, scope_at) == [("r", 1)]
    assert holding_windows(erased, {("r", 5): "user:a"}) == []


def test_promoted_lists_the_best_digests_turns_first_by_similarity():
    members = {"d1": ["a", "b", "c"], "d2": ["c", "d"]}
    assert promoted(["d2", "d1"], members, {"d": 0.9, "c": 0.1, "b": 0.5}) == [
        "d", "c", "b", "a"]


def test_observing_a_run_indexes_a_digest_per_completed_window(tmp_path, local_embedder):
    db = tmp_path / "m.db"
    store = remem.open(db)
    _observe(store.create_memory("m1", {"digests": True}))
    store.close()
    assert _digests(db) == {digest_doc_id("r1", 0): S, digest_doc_id("r1", 1): S}
    assert _digest_vectors(db) == set(_digests(db))


def test_digests_are_off_unless_the_memory_turns_them_on(tmp_path, local_embedder):
    """Opt-in: a memory without ``{"digests": true}`` indexes none at intake or on rebuild,
    and the same memory with it indexes them on the next rebuild and reembed."""
    db = tmp_path / "m.db"
    store = remem.open(db)
    mem = store.create_memory("m1")
    _observe(mem)
    store.rebuild("m1")
    mem.reembed()
    assert _digests(db) == {} and _digest_vectors(db) == set()
    store.memory("m1").replace_config({"digests": True})
    store.rebuild("m1")
    store.memory("m1").reembed()
    store.close()
    assert set(_digests(db)) == {digest_doc_id("r1", 0), digest_doc_id("r1", 1)}
    assert _digest_vectors(db) == set(_digests(db))


def test_a_digest_promotes_a_turn_worded_unlike_the_question(tmp_path, local_embedder):
    """Lexical recall: no word of the answer turn is in the question, so without digests it
    is no candidate at all; its window shares the question's words and promotes it."""
    store = remem.open(tmp_path / "m.db")
    mem = store.create_memory("m1", {"digests": True})
    _observe(mem)
    r = mem.recall([S], "Which brother gave camping gear?", mode="lexical", limit=10,
                   budget_tokens=2000)
    ids = [s.id for s in r.sources]
    assert "t3" in ids  # "We drove north to Quillmere Lake ..."
    assert "t1" in ids and ids.index("t1") < ids.index("t3")  # the direct match stays first
    assert not any(i.startswith("itm_") for i in ids)  # a digest is never shown


def test_forgetting_a_turn_erases_every_digest_that_held_it_and_derives_them_again(
        tmp_path, local_embedder):
    from tests.forget.test_forget import assert_sound, raw_bytes

    db = tmp_path / "m.db"
    store = remem.open(db)
    mem = store.create_memory("m1", {"digests": True})
    _observe(mem)
    _observe(mem, [("Cy", "unrelated turn number %d" % i) for i in range(9)], run="r2",
             prefix="u")
    assert set(_digests(db)) == {digest_doc_id(r, k) for r in ("r1", "r2") for k in (0, 1)}
    assert b"quillmere" in raw_bytes(db)

    report = mem.forget_source("t3")  # in windows 0 and 1 of run r1
    if report["state"] != "completed":
        assert Worker(store).finish_erasures()["state"] == "completed"

    assert report["surfaces"]["digests"] == {"erased": 2, "state": "erased"}
    # windows 0 and 1 of r1 keep five live turns each: derived again without t3
    assert set(_digests(db)) == {digest_doc_id(r, k) for r in ("r1", "r2") for k in (0, 1)}
    assert _digest_vectors(db) == set(_digests(db))
    assert b"quillmere" not in raw_bytes(db)  # no digest text kept the turn's words
    r = mem.recall([S], "Quillmere Lake stars", mode="lexical", limit=10,
                   budget_tokens=2000)
    assert "t3" not in [s.id for s in r.sources]
    assert_sound(store)  # rebuild gives the same rows: no digest comes back
