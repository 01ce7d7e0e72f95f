"""PostgreSQL full-text literals: a document's ``tsvector`` and a query's ``tsquery``, built
from :func:`remem.domain.textindex.index_terms` with Latin/Greek/Cyrillic diacritics removed
(as FTS5 ``remove_diacritics``), so a word matches on both backends alike (see
``stores/postgres/search.py``)."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from remem.domain.textindex import index_terms

__all__ = ["MAX_LEXEME_BYTES", "fold", "quote", "scoped_keys", "tsquery_literal",
           "tsvector_literal"]

_MAX_POSITION, _MAX_POSITIONS, MAX_LEXEME_BYTES = 16383, 256, 2046


def fold(term: str) -> str:
    """Drops combining marks after Latin, Greek and Cyrillic letters ("café" -> "cafe")."""
    if term.isascii():
        return term
    out: list[str] = []
    for ch in unicodedata.normalize("NFD", term):
        if unicodedata.category(ch) == "Mn" and out and ord(out[-1]) < 0x0530:
            continue
        out.append(ch)
    return unicodedata.normalize("NFC", "".join(out))


def quote(term: str) -> str:
    return "'" + term.replace("\\", "\\\\").replace("'", "''") + "'"


def tsvector_literal(text: str, scope_key: str | None = None) -> str:
    """The ``tsvector`` input of a document: its index terms with 1-based positions, plus the
    opaque ``scope_key`` lexeme (weight A; words have weight D) when given."""
    positions: dict[str, list[int]] = {}
    pos = 0
    for pos, term in enumerate(index_terms(text).split(), start=1):
        term = fold(term)
        if not term or len(term.encode()) > MAX_LEXEME_BYTES:
            continue
        slots = positions.setdefault(term, [])
        if len(slots) < _MAX_POSITIONS:
            slots.append(min(pos, _MAX_POSITION))
    out = [f"{quote(t)}:{','.join(map(str, sorted(set(p))))}" for t, p in positions.items()]
    if scope_key is not None:
        out.append(f"{quote(scope_key)}:{min(pos + 1, _MAX_POSITION)}A")
    return " ".join(out)


def tsquery_literal(terms: Sequence[str]) -> str:
    """A ``tsquery`` OR-ing the terms as literal lexemes."""
    return " | ".join(quote(t) for t in terms)


def scoped_keys(scopes: Sequence[str], terms: Sequence[str]) -> list[str]:
    """The full-text index keys of ``terms`` in ``scopes`` (migration 018): the scope, U+001F
    (never in a scope) and the term, for every pair, as ``remem_scoped_terms`` keys a stored
    document's lexemes."""
    return [f"{scope}\x1f{term}" for scope in scopes for term in terms]
