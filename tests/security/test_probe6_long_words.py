"""Round-6 probe: a long run of the letter ``y`` in any indexed text or query made the Porter
stemmer recurse once per ``y`` (``_is_cons`` asked about the previous letter recursively), so
a 1,000-letter word raised ``RecursionError``: ``500 internal_error`` for a writer's
``POST /items`` or ``/facts`` and for a reader's ``/recall`` on either backend, and the
server dropped the keep-alive connection. Every such input must get a normal answer, and
the stemmer must stay exactly Porter's on ordinary words. Real server on loopback, real
SQLite file."""

from __future__ import annotations

import random

import pytest

from remem.domain.stemming import porter_stem
from remem.domain.textindex import index_terms
from security.probe4_kit import Probe

WORD = "y" * 1000


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    p = Probe(tmp_path_factory.mktemp("words"))
    yield p
    p.close()


def test_a_long_y_word_is_remembered(probe):
    r = probe.call("aw", "POST", "/memory/m1/items", json={
        "scope": "user:alice", "key": "nickname", "value": WORD})
    assert r.status_code == 200, r.text


def test_a_long_y_word_in_a_fact_is_stored(probe):
    r = probe.call("aw", "POST", "/memory/m1/facts", json={
        "scope": "user:alice", "key": "motto", "content": "y" * 5000})
    assert r.status_code == 200, r.text


def test_a_long_y_word_in_an_observation_is_recorded(probe):
    r = probe.call("aw", "POST", "/memory/m1/observe", json={
        "scope": "user:alice", "text": f"I say {WORD}"})
    assert r.status_code == 202, r.text


def test_a_reader_recalling_a_long_y_word_gets_an_answer(probe):
    for mode in ("lexical", "hybrid"):
        r = probe.call("ar", "POST", "/memory/m1/recall", json={
            "scopes": ["user:alice"], "query": WORD, "budget_tokens": 300, "mode": mode})
        assert r.status_code == 200, r.text
    assert probe.call("ar", "GET", "/memory/m1/items").status_code == 200


def _porter_reference_is_cons(w: str, i: int) -> bool:
    """Porter's definition, as the recursive original read it."""
    if w[i] in "aeiou":
        return False
    if w[i] == "y":
        return i == 0 or not _porter_reference_is_cons(w, i - 1)
    return True


def test_the_stemmer_still_classifies_every_letter_as_porter_does():
    from remem.domain import stemming

    rng = random.Random(6)
    for _ in range(2000):
        w = "".join(rng.choice("aeiyybcly") for _ in range(rng.randint(1, 40)))
        for i in range(len(w)):
            assert stemming._is_cons(w, i) == _porter_reference_is_cons(w, i), (w, i)
    assert [porter_stem(w) for w in ("camping", "happy", "sky", "relational", "yelling")] \
        == ["camp", "happi", "sky", "relat", "yell"]
    assert "y" * 1000 in index_terms(WORD).split()
