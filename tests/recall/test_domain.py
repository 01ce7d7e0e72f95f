"""Pure recall domain: term rewriting, fusion, status/time filtering, source chains."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from remem.domain import textindex as ti
from remem.domain.recall import RRF_K, RecallFilter, eligible_items, fuse, held_at
from remem.domain.sourcelog import entry_hash, text_digest, verify_run


def test_cjk_runs_become_bigrams_and_unigrams() -> None:
    assert ti.index_terms("東京都") == "東京 京都 東 京 都"
    assert ti.query_terms("東京都に") == ["東京", "京都", "都に"]
    assert ti.query_terms("猫") == ["猫"]


def test_emoji_become_terms_without_modifiers() -> None:
    assert ti.index_terms("👍🏽 ok") == "u1f44d ok"
    assert ti.query_terms("👍") == ["u1f44d"]


def test_words_pass_through_and_stopwords_drop_from_queries() -> None:
    assert ti.index_terms("Where is the Café?") == "where is the café"
    assert ti.query_terms("Where is the Café?") == ["café"]
    assert ti.query_terms("the") == ["the"]


def test_match_expressions_quote_every_term() -> None:
    expr = ti.match_expression(['a"b', "OR", "NEAR"], ["k1"])
    assert expr == 'terms : ("a""b" OR "OR" OR "NEAR") AND scope_key : ("k1")'
    c = sqlite3.connect(":memory:")
    c.execute("CREATE VIRTUAL TABLE f USING fts5(terms, scope_key)")
    c.execute("INSERT INTO f VALUES ('or near', 'k1')")
    assert c.execute("SELECT count(*) FROM f WHERE f MATCH ?", (expr,)).fetchone()[0] == 1
    assert ti.match_expression([]) is None


def test_the_indexed_text_of_japanese_contains_every_query_bigram() -> None:
    doc = set(ti.index_terms("お寿司が大好きです").split())
    assert {"寿司", "大好"} <= doc and set(ti.query_terms("寿司が好き")) & doc


def test_rrf_sums_reciprocal_ranks_with_k_20() -> None:
    fused = fuse({"fts": ["a", "b"], "vector": ["b", "c"], "key": []})
    assert RRF_K == 20
    assert [f.doc_id for f in fused] == ["b", "a", "c"]
    assert abs(fused[0].score - (1 / 22 + 1 / 21)) < 1e-12
    assert fused[0].ranks == {"fts": 2, "vector": 1}


@dataclass
class Rec:
    item_id: str
    valid_at: str
    status: str = "current"
    invalid_at: str | None = None
    valid_until: str | None = None
    scope: str = "user:a"
    key: str = "home_city"
    kind: str = "fact"
    cardinality: str = "single"


def test_as_of_keeps_what_held_then_and_corrections_never_hold() -> None:
    paris = Rec("p", "2020", "superseded", invalid_at="2022")
    berlin = Rec("b", "2022")
    typo = Rec("t", "2019", "superseded", invalid_at="2019")  # corrected: never true
    f = RecallFilter(scopes=frozenset({"user:a"}), as_of="2021")
    assert eligible_items([paris, berlin, typo], f) == [(paris, "current")]
    assert not held_at(typo, "2019") and not held_at(typo, "2030")
    f_now = RecallFilter(scopes=frozenset({"user:a"}))
    assert eligible_items([paris, berlin, typo], f_now) == [(berlin, "current")]


def test_scope_and_kind_filters_never_widen() -> None:
    a, b = Rec("a", "2020"), Rec("b", "2020", scope="user:b")
    f = RecallFilter(scopes=frozenset({"user:a"}), kinds=frozenset({"rule"}))
    assert eligible_items([a, b], f) == []
    assert eligible_items([a, b], RecallFilter(scopes=frozenset({"user:a"}))) == [(a, "current")]


def test_a_source_chain_verifies_and_reports_the_first_broken_link() -> None:
    rows, prev = [], "0" * 64
    for i in (1, 2, 3):
        salt = bytes([i]) * 16
        r = {"memory": "m", "run_id": "r", "sequence": i, "source_id": f"s{i}", "scope": "user:a",
             "kind": "user-message", "role": "user", "actor": None, "occurred_at": "t",
             "recorded_at": "t", "digest": text_digest(salt, f"text {i}"), "salt": salt,
             "text": f"text {i}", "prev_hash": prev}
        r["entry_hash"] = prev = entry_hash(prev, r)
        rows.append(r)
    assert verify_run(rows) is None
    rows[1] = {**rows[1], "text": None, "salt": None}  # erased: still verifies
    assert verify_run(rows) is None
    rows[2] = {**rows[2], "text": "changed"}
    brk = verify_run(rows)
    assert brk is not None and (brk.sequence, brk.reason) == (
        3, "text does not match the committed digest")
