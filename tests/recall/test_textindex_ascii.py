"""ASCII text takes a fast path through the full-text rewrite (``textindex._ascii_runs``); it
must give exactly the runs the general path (NFKC, casefold, per-character classes) gives."""

from __future__ import annotations

import random

from remem.domain import textindex
from remem.domain.textindex import index_terms, query_terms


def _general_runs(text: str) -> list[tuple[int, str]]:
    """The general path, whatever the text (the fast path bypassed)."""
    norm = text + "\u00e9"  # one non-ASCII letter forces the general path ...
    runs = list(textindex._runs(norm))
    last_kind, last = runs[-1]  # ... and joins the last word run: take it off again
    assert last_kind == textindex._WORD and last.endswith("\u00e9")
    return runs[:-1] + ([(last_kind, last[:-1])] if len(last) > 1 else [])


def test_every_ascii_character_classifies_as_the_general_path_does() -> None:
    for cp in range(128):
        text = f"ab{chr(cp)}cd {chr(cp)}"
        assert list(textindex._ascii_runs(text)) == _general_runs(text), repr(chr(cp))


def test_random_ascii_texts_give_the_same_terms_on_both_paths() -> None:
    rng = random.Random(5)
    alphabet = [chr(c) for c in range(128)] + list("aeiou Camping RUNS 42")
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 40)))
        assert list(textindex._ascii_runs(text)) == _general_runs(text), repr(text)


def test_ascii_terms_keep_stems_and_drop_punctuation() -> None:
    assert index_terms("We CAMPED near Lisbon's lakes, 2x!") == \
        "we camped camp near lisbon s lakes lake 2x"
    assert query_terms("Where did we go camping?") == ["go", "camp"]
