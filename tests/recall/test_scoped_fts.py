"""SQLite full-text terms carry their (memory, scope) key (stores/sqlite/scoped_terms.py,
migration 015): a query reads and ranks only the caller's scopes, so another scope's text
cannot move the caller's full-text ranking, and databases written before the migration are
rewritten on open."""

from __future__ import annotations

import remem
from remem.domain.textindex import scope_term
from remem.stores.sqlite.scoped_terms import scoped_match, scoped_terms

ALICE, BOB = "user:alice", "user:bob"


def _lexical_ids(mem, scope: str, query: str) -> list[str]:
    r = mem.recall(scope, query, budget_tokens=2000, mode="lexical")
    return [i.value for i in r.items]


def test_scoped_terms_prefix_every_term_and_match_every_scope_term_pair() -> None:
    key_a, key_b = "k" + "a" * 20, "k" + "b" * 20
    assert scoped_terms("went camping camp", key_a) == (
        f"{key_a}went {key_a}camping {key_a}camp")
    assert scoped_terms("", key_a) == ""
    assert scoped_match(["camp", 'x"y'], [key_a, key_b]) == (
        f'terms : ("{key_a}camp" OR "{key_b}camp" OR "{key_a}x""y" OR "{key_b}x""y")')
    assert scoped_match([], [key_a]) is None and scoped_match(["camp"], []) is None


def test_another_scopes_text_does_not_move_full_text_ranking(mem) -> None:
    mem.remember(ALICE, "note_1", "apple pie")
    mem.remember(ALICE, "note_2", "banana pie")
    mem.remember(ALICE, "note_3", "banana tart")
    before = _lexical_ids(mem, ALICE, "apple banana")
    assert before[0] == "apple pie"  # apple is rarer than banana among alice's documents
    # Bob's scope fills with apples: over the whole table apple becomes the common term
    # (a whole-table bm25 would now rank alice's banana documents first).
    mem.remember_many([{"scope": BOB, "key": f"fruit_{i}", "value": f"apple number {i}"}
                       for i in range(40)])
    assert _lexical_ids(mem, ALICE, "apple banana") == before
    assert _lexical_ids(mem, BOB, "apple")  # bob's own documents are found


def test_stored_terms_carry_the_scope_key(mem, rstore) -> None:
    mem.remember(ALICE, "hobby", "sailing")
    conn = rstore.adapter.conn
    terms, key = conn.execute("SELECT terms, scope_key FROM search_fts").fetchone()
    assert key == scope_term("m1", ALICE)
    assert terms.split() and all(t.startswith(key) for t in terms.split())


def test_migration_015_rewrites_terms_written_before_it(tmp_path, rstore, mem) -> None:
    mem.remember(ALICE, "hobby", "sailing on lakes")
    mem.observe(ALICE, "We went camping near the lake", source_id="s1")
    path = rstore.adapter.conn.execute("PRAGMA database_list").fetchone()[2]
    conn = rstore.adapter.conn
    conn.execute("UPDATE search_fts SET terms = replace(terms, scope_key, '')")  # pre-015 rows
    conn.execute("DELETE FROM schema_migrations WHERE version = 15")
    assert mem.recall(ALICE, "camping", budget_tokens=2000, mode="lexical").sources == []
    rstore.close()
    again = remem.open(path)
    try:
        m = again.memory("m1")
        r = m.recall(ALICE, "camping", budget_tokens=2000, mode="lexical")
        assert [s.id for s in r.sources] == ["s1"]
        assert _lexical_ids(m, ALICE, "lakes") == ["sailing on lakes"]
    finally:
        again.close()
