"""Scope-keyed full-text terms: SQLite ranks only the caller's documents (migration 015).

FTS5's ``bm25()`` counts, for every query term, the documents holding it; with one
``search_fts`` table for every memory and scope that count walked the term's whole doclist
(every memory, every scope) and the OR of the terms was merged over the whole table before the
scope condition cut it down: ~3.5 ms of a 100k-item recall, growing with the database, not with
the caller. So each stored term carries the opaque key of its (memory, scope)
(:func:`remem.domain.textindex.scope_term`, 21 characters) as a prefix: ``kab12..ef`` +
``garden`` is one ``unicode61`` token. A query asks for every (scope key, term) pair of the
caller's scopes, so FTS5 reads only their doclists, and bm25's document counts are counts
within one (memory, scope) — no other memory's or scope's text moves a caller's ranking
(only the table's row count and mean length still do).

Measured at 100k items (100 scopes, ~1,000 items each; a query in two scopes): the full-text
statement took CPU p50 2.7 ms -> 0.8 ms; one-scope memories (every LoCoMo conversation) rank
exactly as before.

Pure functions; the write side (``SearchWriter.index_text``) stores :func:`scoped_terms`, the
read side builds :func:`scoped_match`.
"""

from __future__ import annotations

from collections.abc import Sequence

SCOPE_KEY_CHARS = 21
"""Length of a scope key (``k`` + 20 hex digits): the fixed-length prefix of a stored term."""


def scoped_terms(terms: str, scope_key: str) -> str:
    """Space-separated ``terms`` (``textindex.index_terms``) each prefixed by ``scope_key``.

    ``scoped_terms("we went", "k0123456789abcdef0123")`` ->
    ``'k0123456789abcdef0123we k0123456789abcdef0123went'``; ``""`` stays ``""``.
    Migration 015 applies the same rewrite in SQL to rows written before it.
    """
    return " ".join(scope_key + t for t in terms.split(" ") if t)


def scoped_phrases(terms: Sequence[str], scope_keys: Sequence[str]) -> list[str]:
    """Every (scope key, term) pair as one stored-form term, terms outer, scopes inner."""
    return [k + t for t in terms for k in scope_keys]


def scoped_match(terms: Sequence[str], scope_keys: Sequence[str]) -> str | None:
    """An FTS5 MATCH expression for documents of the scope keys holding any of the terms
    (column ``terms``); None when there are no terms or no scopes.

    Quoting makes every term a literal: FTS5 operators in user text have no effect.
    """
    phrases = scoped_phrases(terms, scope_keys)
    if not phrases:
        return None
    return "terms : (" + " OR ".join('"' + p.replace('"', '""') + '"' for p in phrases) + ")"
