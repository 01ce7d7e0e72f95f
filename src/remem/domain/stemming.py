"""The Porter (1980) stemmer: English words to their stems, pure and dependency-free.

Used by the full-text index (:mod:`remem.domain.textindex`: "camping", "camped" and "camps"
all find "camp") and by the bench's BM25 baseline.

M. F. Porter, "An algorithm for suffix stripping", Program 14(3), 1980, as published (step 2
uses "abli" -> "able"; none of the later "bli"/"logi" departures of the C reference). Words of
one or two letters are left alone. The input is one lower-case word.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

__all__ = ["porter_stem"]

_VOWELS = frozenset("aeiou")


def _is_cons(w: str, i: int) -> bool:
    """Porter's consonant: not a vowel, and a ``y`` only at the start or after a vowel.

    A run of ``y`` alternates (the first is a consonant at the start or after a vowel), so it
    is read without recursion: a word of a thousand ``y`` no longer exhausts the stack.
    """
    ch = w[i]
    if ch in _VOWELS:
        return False
    if ch != "y":
        return True
    first = i
    while first > 0 and w[first - 1] == "y":
        first -= 1
    first_is_cons = first == 0 or w[first - 1] in _VOWELS
    return first_is_cons == ((i - first) % 2 == 0)


def _measure(stem: str) -> int:
    """m in [C](VC)^m[V]."""
    m = 0
    i, n = 0, len(stem)
    while i < n and _is_cons(stem, i):
        i += 1
    while i < n:
        while i < n and not _is_cons(stem, i):
            i += 1
        if i >= n:
            break
        while i < n and _is_cons(stem, i):
            i += 1
        m += 1
    return m


def _has_vowel(stem: str) -> bool:
    return any(not _is_cons(stem, i) for i in range(len(stem)))


def _ends_double_cons(w: str) -> bool:
    return len(w) >= 2 and w[-1] == w[-2] and _is_cons(w, len(w) - 1)


def _ends_cvc(w: str) -> bool:
    """*o: ends consonant-vowel-consonant, the last not w, x or y."""
    if len(w) < 3:
        return False
    return (
        _is_cons(w, len(w) - 3)
        and not _is_cons(w, len(w) - 2)
        and _is_cons(w, len(w) - 1)
        and w[-1] not in "wxy"
    )


_STEP2 = (
    ("ational", "ate"),
    ("tional", "tion"),
    ("enci", "ence"),
    ("anci", "ance"),
    ("izer", "ize"),
    ("abli", "able"),
    ("alli", "al"),
    ("entli", "ent"),
    ("eli", "e"),
    ("ousli", "ous"),
    ("ization", "ize"),
    ("ation", "ate"),
    ("ator", "ate"),
    ("alism", "al"),
    ("iveness", "ive"),
    ("fulness", "ful"),
    ("ousness", "ous"),
    ("aliti", "al"),
    ("iviti", "ive"),
    ("biliti", "ble"),
)
_STEP3 = (
    ("icate", "ic"),
    ("ative", ""),
    ("alize", "al"),
    ("iciti", "ic"),
    ("ical", "ic"),
    ("ful", ""),
    ("ness", ""),
)
_STEP4 = (
    "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent",
    "ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize",
)  # fmt: skip


def _longest(word: str, suffixes: Sequence[str]) -> str | None:
    best = None
    for s in suffixes:
        if word.endswith(s) and (best is None or len(s) > len(best)):
            best = s
    return best


def _replace_if_m(word: str, rules: Sequence[tuple[str, str]], min_m: int) -> str:
    """Longest matching suffix only; replaced when the remaining stem has m > min_m - 1."""
    table = dict(rules)
    suf = _longest(word, list(table))
    if suf is None:
        return word
    stem = word[: -len(suf)]
    return stem + table[suf] if _measure(stem) >= min_m else word


@lru_cache(maxsize=200_000)
def porter_stem(word: str) -> str:
    """Porter-stem one lower-case word."""
    w = word
    if len(w) <= 2:
        return w
    # Step 1a
    if w.endswith("sses"):
        w = w[:-2]
    elif w.endswith("ies"):
        w = w[:-2]
    elif w.endswith("ss"):
        pass
    elif w.endswith("s"):
        w = w[:-1]
    # Step 1b
    step1b_extra = False
    if w.endswith("eed"):
        if _measure(w[:-3]) > 0:
            w = w[:-1]
    elif w.endswith("ed") and _has_vowel(w[:-2]):
        w = w[:-2]
        step1b_extra = True
    elif w.endswith("ing") and _has_vowel(w[:-3]):
        w = w[:-3]
        step1b_extra = True
    if step1b_extra:
        if w.endswith(("at", "bl", "iz")):
            w += "e"
        elif _ends_double_cons(w) and w[-1] not in "lsz":
            w = w[:-1]
        elif _measure(w) == 1 and _ends_cvc(w):
            w += "e"
    # Step 1c
    if w.endswith("y") and _has_vowel(w[:-1]):
        w = w[:-1] + "i"
    # Step 2, 3
    w = _replace_if_m(w, _STEP2, 1)
    w = _replace_if_m(w, _STEP3, 1)
    # Step 4
    suf = _longest(w, _STEP4)
    if suf is not None:
        stem = w[: -len(suf)]
        if _measure(stem) > 1 and (suf != "ion" or stem.endswith(("s", "t"))):
            w = stem
    # Step 5a
    if w.endswith("e"):
        stem = w[:-1]
        m = _measure(stem)
        if m > 1 or (m == 1 and not _ends_cvc(stem)):
            w = stem
    # Step 5b
    if _measure(w) > 1 and _ends_double_cons(w) and w.endswith("l"):
        w = w[:-1]
    return w
