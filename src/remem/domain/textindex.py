"""Search terms for the full-text index: any language, CJK and emoji included.

SQLite FTS5's ``unicode61`` tokenizer splits on spaces and punctuation only, so a run of CJK
text ("東京に住んでいる") becomes one token and a query for "東京" never matches; emoji are
separators and vanish. The ``trigram`` tokenizer would help but needs 3+ character queries,
and SQLite here is 3.40.1. So text is rewritten into space-separated *terms* before it is
indexed, and queries go through the same rewrite:

- text is NFKC-normalised and casefolded;
- runs of scripts written without spaces (Han, Hiragana, Katakana, Hangul, Thai, Lao, Khmer,
  Myanmar) become overlapping character bigrams plus unigrams in the index
  ("東京都" -> "東京 京都 東 京 都"); a query uses bigrams (unigrams only for a one-character run),
  so a two-character query word matches exactly and longer ones match by shared bigrams;
- each emoji or other pictographic symbol becomes a term ``u<hex code point>`` ("😀" ->
  "u1f600"); skin-tone modifiers, variation selectors and zero-width joiners are dropped so
  "👍🏽" finds "👍";
- other words (Latin, Cyrillic, Greek, Arabic, Devanagari, ...) pass through unchanged and
  ``unicode61 remove_diacritics 2`` tokenizes them ("Café" finds "cafe");
- an ASCII word of :data:`MIN_STEM_LETTERS` or more letters whose Porter stem differs
  (:mod:`remem.domain.stemming`) is indexed as the word *and* its stem, and a query asks for the
  stem alone, so "camped" finds "camping" and "camps" while an identical word always still
  matches (both sides stem it alike); asking for the word as well would count it twice. Measured
  on the LoCoMo dev split (``remem bench locomo``, first two conversations): evidence R@5 "all"
  0.589 -> 0.606, R@10 0.706 -> 0.719 (word + stem in the query: no gain). Documents indexed
  before stems existed gain them with ``remem rebuild``.

Pure functions, no I/O.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Iterator

from remem.domain.stemming import porter_stem

#: At most this many distinct terms are used from one query (bounds the FTS5 OR-expression).
MAX_QUERY_TERMS = 48

#: English function words dropped from queries (kept when a query has nothing else).
STOPWORDS = frozenset(
    """a about an and are as at be been but by can could did do does for from had has have
    he her his how i if in into is it its me my of on or our she so than that the their them
    then there these they this to was we were what when where which who whom why will with
    would you your""".split()
)

_SPACELESS_RANGES = (
    (0x0E00, 0x0EFF),  # Thai, Lao
    (0x1000, 0x109F),  # Myanmar
    (0x1100, 0x11FF),  # Hangul Jamo
    (0x1780, 0x17FF),  # Khmer
    (0x2E80, 0x2FDF),  # CJK radicals
    (0x3005, 0x3007),  # 々 〆 〇
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3130, 0x318F),  # Hangul compatibility Jamo
    (0x31F0, 0x31FF),  # Katakana phonetic extensions
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xA960, 0xA97F),  # Hangul Jamo extended A
    (0xAC00, 0xD7AF),  # Hangul syllables
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0x20000, 0x3FFFF),  # CJK extensions B..H
)
_DROPPED = frozenset({0x200D, 0xFE0E, 0xFE0F, 0x20E3})  # ZWJ, variation selectors, keycap
_SKIN_TONES = range(0x1F3FB, 0x1F400)

_WORD, _SPACELESS, _SYMBOL, _SEP = 0, 1, 2, 3


def _class(ch: str) -> int:
    cp = ord(ch)
    if cp in _DROPPED or cp in _SKIN_TONES:
        return _SEP
    for lo, hi in _SPACELESS_RANGES:
        if lo <= cp <= hi:
            return _SPACELESS
    cat = unicodedata.category(ch)
    if cat == "So" or 0x1F000 <= cp <= 0x1FAFF:
        return _SYMBOL
    if cat[0] in "LN" or (cat[0] == "M"):
        return _WORD
    return _SEP


_ASCII_WORD_RUN = re.compile(r"[a-z0-9]+")


def _runs(text: str) -> Iterator[tuple[int, str]]:
    """(class, run) pairs of the normalised text; separators are skipped."""
    if text.isascii():  # the same runs, at C speed (bulk loads index every item's text)
        yield from _ascii_runs(text)
        return
    norm = unicodedata.normalize("NFKC", text).casefold()
    kind, start = _SEP, 0
    for i, ch in enumerate(norm):
        c = _class(ch)
        if c == _SYMBOL:  # every symbol is its own run
            if kind != _SEP:
                yield kind, norm[start:i]
            yield _SYMBOL, ch
            kind = _SEP
            continue
        if c != kind:
            if kind != _SEP:
                yield kind, norm[start:i]
            kind, start = c, i
    if kind != _SEP:
        yield kind, norm[start:]


def _ascii_runs(text: str) -> Iterator[tuple[int, str]]:
    """:func:`_runs` of ASCII text: NFKC leaves ASCII alone and casefolds it as ``lower``;
    only letters and digits are word characters (no ASCII character is a symbol, a mark or
    spaceless), every other one separates."""
    for m in _ASCII_WORD_RUN.finditer(text.lower()):
        yield _WORD, m.group()


def _symbol_term(ch: str) -> str:
    return f"u{ord(ch):x}"


def _bigrams(run: str) -> list[str]:
    return [run[i:i + 2] for i in range(len(run) - 1)]


MIN_STEM_LETTERS = 4
"""Shorter words are never stemmed (Porter leaves most of them alone anyway)."""

MAX_STEM_LETTERS = 64
"""Longer words are never stemmed: no English word is that long, and the stemmer's cost
grows with the square of a run of ``y`` (a 16 KB word would cost seconds of CPU)."""


def stem_of(word: str) -> str | None:
    """The Porter stem of a casefolded ASCII word of :data:`MIN_STEM_LETTERS` to
    :data:`MAX_STEM_LETTERS` letters when it differs from the word, else None
    (``"camping"`` -> ``"camp"``)."""
    if not MIN_STEM_LETTERS <= len(word) <= MAX_STEM_LETTERS or not word.isascii() \
            or not word.isalpha():
        return None
    stem = porter_stem(word)
    return stem if stem != word else None


def index_terms(text: str) -> str:
    """The space-separated terms stored in the FTS5 ``terms`` column for ``text``.

    Args:
        text: any Unicode text.

    Returns:
        Terms separated by single spaces (``""`` for text without letters, digits or symbols).
    """
    out: list[str] = []
    for kind, run in _runs(text):
        if kind == _WORD:
            out.append(run)
            if (stem := stem_of(run)) is not None:
                out.append(stem)
        elif kind == _SYMBOL:
            out.append(_symbol_term(run))
        else:
            out.extend(_bigrams(run))
            out.extend(run)
    return " ".join(out)


def query_terms(text: str) -> list[str]:
    """Distinct search terms of a query, in order of first appearance.

    Stop words are dropped unless nothing else is left; a word with a stem (:func:`stem_of`)
    is asked for by its stem; at most :data:`MAX_QUERY_TERMS`.
    """
    words: list[str] = []
    for kind, run in _runs(text):
        if kind == _WORD:
            words.append(run)
        elif kind == _SYMBOL:
            words.append(_symbol_term(run))
        else:
            words.extend(_bigrams(run) if len(run) > 1 else [run])
    kept = [w for w in words if w not in STOPWORDS] or words
    return list(dict.fromkeys(stem_of(w) or w for w in kept))[:MAX_QUERY_TERMS]


def query_words(text: str) -> list[str]:
    """Plain words of a query (letters and digits only), used for exact key matching."""
    return [run for kind, run in _runs(text) if kind == _WORD]


def _quoted(terms: list[str]) -> str:
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


def scope_term(memory_id: str, scope: str) -> str:
    """The opaque FTS term naming one (memory, scope): ``k`` + 20 hex digits of a sha256."""
    return "k" + hashlib.sha256(f"{memory_id}\x1f{scope}".encode()).hexdigest()[:20]


def match_expression(terms: list[str], scope_terms: list[str] | None = None) -> str | None:
    """An FTS5 MATCH expression: any of the terms in ``terms``, restricted to the scope terms
    (column ``scope_key``) when given. None when there are no terms.

    Quoting makes every term a literal: FTS5 operators and column filters in user text have
    no effect.
    """
    if not terms:
        return None
    expr = f"terms : ({_quoted(terms)})"
    if scope_terms:
        expr += f" AND scope_key : ({_quoted(scope_terms)})"
    return expr


def key_words(key: str) -> str:
    """A key as words: ``home_city`` -> ``home city``."""
    return key.replace("_", " ")


def item_text(key: str, value: object, quote: str | None) -> str:
    """The searchable text of an item: key words, value and the source quote.

    ``item_text("home_city", "Berlin", "I moved to Berlin")`` ->
    ``'home city: Berlin (I moved to Berlin)'``. Non-string values are canonical JSON.
    Only the first ``MAX_INDEXED_CHARS`` (4,096) characters of the value are indexed (a fact
    may hold 64 KB): full text and embedding see a bounded text.
    """
    from remem.domain.fact import MAX_INDEXED_CHARS

    shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False,
                                                           sort_keys=True)
    shown = shown[:MAX_INDEXED_CHARS]
    text = f"{key_words(key)}: {shown}"
    return f"{text} ({quote})" if quote else text


def content_hash(text: str) -> str:
    """sha256 hex of a document's text: reembed skips documents whose text and model match."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
