"""Recall SQL for SQLite: search documents, FTS5, vectors, sources, pinned profile renders.

Tables (migration 002): ``search_docs`` (one row per indexed item or source; its rowid is the
FTS5 rowid), ``search_fts`` (the rewritten terms of :mod:`remem.domain.textindex`, each
prefixed by its (memory, scope) key since migration 015 (:mod:`.scoped_terms`), bm25
ranked), ``vectors`` (float32 blobs), ``sources``, ``profile_renders``. Item documents are
indexed in every status; status, time and kind filtering happens at query time against
``items`` (see :mod:`remem.domain.recall`), so a status change never touches the index.

Used through :class:`SQLiteSearchIndex` (``store.search_index``): ``read(memory_id)`` opens a
read snapshot (:class:`SearchSnapshot`), ``writer(uow)`` wraps a write unit of work
(:class:`SearchWriter`) so indexing commits in the same transaction as the write.

Erasure (called by forget inside its transaction; implemented in
:mod:`remem.stores.sqlite.erasure` and re-exported here):

- ``erase_docs(conn, memory_id, doc_ids) -> (fts_rows, vector_rows)``: deletes FTS rows, search
  documents and vectors of items (doc id = item id) and sources (doc id = source id);
  bumps ``vector_epoch`` so cached vector indexes reload without them.
- ``redact_sources(conn, memory_id, source_ids, at) -> n``: removes source text and salt; the
  chain row stays verifiable.
- ``drop_profile_renders(conn, memory_id, item_ids) -> n``: deletes pinned renders naming them.
- :func:`optimize_fts` ``(conn)``: merges FTS5 segments so deleted terms leave the index (FTS5
  ``secure-delete`` needs SQLite 3.44; this is 3.40). Then checkpoint and truncate the WAL.
"""

from __future__ import annotations

import json
import sqlite3
import unicodedata
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from remem.domain.digests import DOC_DIGEST, window_digests
from remem.domain.filters import load_metadata
from remem.domain.sourcelog import source_doc_id
from remem.domain.textindex import index_terms, item_text, scope_term
from remem.stores.sql import sources as source_sql
from remem.stores.sql.rows import RecallRow
from remem.stores.sql.sources import SourceLogWriter
from remem.stores.sqlite.erasure import (drop_profile_renders, erase_docs,
                                         prune_profile_renders, redact_sources)
from remem.stores.sqlite.scoped_terms import (
    SCOPE_KEY_CHARS,
    scoped_match,
    scoped_phrases,
    scoped_terms,
)
from remem.stores.sqlite.search_batch import HeldIndex
from remem.stores.sqlite.vecindex import CandidatePlan, PlannedRows, VectorCache

__all__ = ["DOC_ITEM", "DOC_SOURCE", "RecallRow", "SQLiteSearchIndex", "SearchSnapshot",
           "SearchWriter", "drop_profile_renders", "erase_docs", "optimize_fts",
           "redact_sources"]

DOC_ITEM, DOC_SOURCE = "item", "source"


FTS_RANK_CAP = 1500
"""Expected full-text matches above which the most frequent query terms are dropped."""
FTS_RANKED_SHARE = 4
"""In a scope set above :data:`FTS_RANK_CAP` documents, full text ranks this many times the
rows wanted inside FTS5 before it joins the best to their documents
(``SearchSnapshot._ranked_first``)."""


def _vocab_form(term: str) -> str:
    """A term as ``unicode61 remove_diacritics 2`` stores it (``café`` -> ``cafe``)."""
    return "".join(c for c in unicodedata.normalize("NFKD", term)
                   if not unicodedata.combining(c))


def optimize_fts(conn: sqlite3.Connection) -> None:
    """Rewrites the FTS5 index as one segment, dropping every deleted row's terms."""
    conn.execute("INSERT INTO search_fts(search_fts) VALUES('optimize')")


def _in(ids: Sequence[Any]) -> str:
    return ",".join("?" * len(ids))


class SearchWriter(SourceLogWriter):
    """Index writes inside a write transaction (``uow.conn``)."""

    def __init__(self, conn: sqlite3.Connection, memory_id: str,
                 held: HeldIndex | None = None) -> None:
        self.conn, self.memory_id = conn, memory_id
        #: Where a batch's rows wait for the unit of work's flush (None: insert at once).
        self.held = held

    def index_text(self, doc_id: str, doc_type: str, scope: str, text: str) -> None:
        """Adds or replaces the full-text row of a document."""
        c, m = self.conn, self.memory_id
        key = scope_term(m, scope)
        terms = scoped_terms(index_terms(text), key)
        if self.held is not None:
            self.held.index_text(doc_id, doc_type, scope, terms, key)
            return
        row = c.execute("SELECT rowid FROM search_docs WHERE memory_id=? AND doc_id=?",
                        (m, doc_id)).fetchone()
        if row is not None:
            c.execute("DELETE FROM search_fts WHERE rowid=?", (row[0],))
            c.execute("UPDATE search_docs SET doc_type=?, scope=? WHERE rowid=?",
                      (doc_type, scope, row[0]))
            rowid = row[0]
        else:
            rowid = c.execute("INSERT INTO search_docs(memory_id, doc_id, doc_type, scope) "
                              "VALUES (?,?,?,?)", (m, doc_id, doc_type, scope)).lastrowid
        c.execute("INSERT INTO search_fts(rowid, terms, scope_key) VALUES (?,?,?)",
                  (rowid, terms, key))

    def embedding(self) -> tuple[str | None, int | None]:
        row = self.conn.execute("SELECT embedding_model, dimensions FROM memories WHERE "
                                "memory_id=?", (self.memory_id,)).fetchone()
        return (row[0], row[1]) if row else (None, None)

    def record_embedding(self, model: str, dims: int) -> tuple[str, int]:
        """Records the memory's model on first use; returns the recorded (model, dims)."""
        if self.held is not None and self.held.embedding is not None:
            return self.held.embedding  # read (or recorded) earlier in this batch
        cur = self.embedding()
        if self.held is not None:
            self.held.embedding = ((cur[0], int(cur[1] or 0)) if cur[0] is not None
                                   else (model, dims))
        if cur[0] is not None:
            return cur[0], int(cur[1] or 0)
        self.conn.execute("UPDATE memories SET embedding_model=?, dimensions=? WHERE "
                          "memory_id=?", (model, dims, self.memory_id))
        return model, dims

    def put_vectors(self, model: str, rows: Sequence[tuple[str, str, str, str, np.ndarray]]
                    ) -> int:
        """Stores vectors ``(doc_id, doc_type, scope, content_hash, vector)``.

        Replacing an existing document's vector bumps ``vector_epoch`` (cached indexes reload);
        new documents only advance ``vector_seq``.
        """
        if not rows:
            return 0
        if self.held is not None:
            return self.held.put_vectors(model, rows)
        c, m = self.conn, self.memory_id
        ids = [r[0] for r in rows]
        replaced = 0
        for i in range(0, len(ids), 500):
            chunk = ids[i:i + 500]
            replaced += c.execute(f"DELETE FROM vectors WHERE memory_id=? AND doc_id IN "
                                  f"({_in(chunk)})", (m, *chunk)).rowcount
        if replaced:
            c.execute("UPDATE memories SET vector_epoch = vector_epoch + 1 WHERE memory_id=?",
                      (m,))
        last = c.execute("UPDATE memories SET vector_seq = vector_seq + ? WHERE memory_id=? "
                         "RETURNING vector_seq", (len(rows), m)).fetchone()[0]
        first = last - len(rows) + 1
        c.executemany(
            "INSERT INTO vectors(memory_id, doc_id, doc_type, scope, model, content_hash, vec, "
            "seq) VALUES (?,?,?,?,?,?,?,?)",
            [(m, d, t, s, model, h, np.asarray(v, dtype="<f4").tobytes(), first + i)
             for i, (d, t, s, h, v) in enumerate(rows)])
        return len(rows)

    def switch_model(self, model: str, dims: int) -> None:
        """Sets the memory's model and forces every cached index to reload."""
        self.conn.execute("UPDATE memories SET embedding_model=?, dimensions=?, "
                          "vector_epoch = vector_epoch + 1 WHERE memory_id=?",
                          (model, dims, self.memory_id))

    def drop_vectors_except(self, model: str) -> int:
        """Deletes vectors made by any other model (after a switch)."""
        return self.conn.execute("DELETE FROM vectors WHERE memory_id=? AND model<>?",
                                 (self.memory_id, model)).rowcount

    # --- profile renders -------------------------------------------------------------------
    def put_profile_render(self, activation_id: str, scopes: str, params: str, text: str,
                           item_ids: Sequence[str], at: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO profile_renders(memory_id, activation_id, "
                          "scopes, params, text, item_ids, rendered_at) VALUES (?,?,?,?,?,?,?)",
                          (self.memory_id, activation_id, scopes, params, text,
                           json.dumps(list(item_ids)), at))
        prune_profile_renders(self.conn, self.memory_id)


class SearchSnapshot:
    """Reads inside one read transaction: every query sees the same database state."""

    def __init__(self, conn: sqlite3.Connection, memory_id: str, cache: VectorCache) -> None:
        self.conn, self.memory_id, self._cache = conn, memory_id, cache

    def head_seq(self) -> int:
        row = self.conn.execute("SELECT max(seq) FROM ledger WHERE memory_id=?",
                                (self.memory_id,)).fetchone()
        return row[0] or 0

    def embedding(self) -> tuple[str | None, int | None]:
        return SearchWriter(self.conn, self.memory_id).embedding()

    def fts(self, terms: Sequence[str], scopes: Sequence[str], limit: int
            ) -> list[tuple[str, str]]:
        """(doc id, scope) of documents containing any of the terms in the scopes, best bm25
        first.

        Stored terms carry their (memory, scope) key (:mod:`.scoped_terms`), so the MATCH
        asks for each (scope, term) pair and FTS5 reads and ranks only the caller's
        documents; the join re-checks memory and scope. See :meth:`_affordable` for dropped
        terms.
        """
        keys = [scope_term(self.memory_id, s) for s in scopes]
        in_scopes = self._cache.scope_size(self.conn, self.memory_id, scopes)
        terms = self._affordable(list(terms), keys) if (in_scopes or 0) > FTS_RANK_CAP \
            else list(terms)
        match = scoped_match(terms, keys)
        if match is None:
            return []
        ranked = self._ranked_first(match, scopes, limit) if (in_scopes or 0) > FTS_RANK_CAP \
            else None
        if ranked is not None:
            return ranked
        rows = self.conn.execute(
            f"SELECT d.doc_id, d.scope FROM search_fts JOIN search_docs d "
            f"ON d.rowid = search_fts.rowid "
            f"WHERE search_fts MATCH ? AND d.memory_id=? AND d.scope IN ({_in(scopes)}) "
            f"ORDER BY bm25(search_fts, 1.0, 0.0), d.doc_id LIMIT ?",
            (match, self.memory_id, *scopes, limit))
        return [(r[0], r[1]) for r in rows]

    def _ranked_first(self, match: str, scopes: Sequence[str], limit: int
                      ) -> list[tuple[str, str]] | None:
        """:meth:`fts`'s answer ranked inside FTS5 first, then only the best rows joined to
        their documents (the full join reads a document row per match: at 1M items about
        1,200 matches, 10 of the query's 13 ms), or None when that cannot be told apart from
        the full query's answer: equal bm25 scores straddle the last of the
        :data:`FTS_RANKED_SHARE` x ``limit`` rows ranked, or a row that made the cut fails
        the memory and scope check (a scope key collision); :meth:`fts` then runs the full
        query.

        Exact: every match scoring better than the first row not fetched was fetched, and
        ties at the ``limit``-th score are broken by doc id as the full query does."""
        want = FTS_RANKED_SHARE * limit + 1
        best = self.conn.execute(
            "SELECT rowid, bm25(search_fts, 1.0, 0.0) AS r FROM search_fts WHERE "
            "search_fts MATCH ? ORDER BY r LIMIT ?", (match, want)).fetchall()
        if len(best) == want:  # more matches than fetched: only those before the cut count
            best = [(rowid, r) for rowid, r in best if r < best[-1][1]]
            if len(best) < limit:
                return None
        if limit < 1 or not best:
            return []
        last = best[min(limit, len(best)) - 1][1]
        needed = [(rowid, r) for rowid, r in best if r <= last]  # ties at the limit: by id
        docs = self._docs_of([rowid for rowid, _ in needed], scopes)
        if len(docs) < len(needed):
            return None
        ranked = sorted(((r, docs[rowid]) for rowid, r in needed), key=lambda t: (t[0], t[1][0]))
        return [doc for _, doc in ranked[:limit]]

    def _docs_of(self, rowids: Sequence[int], scopes: Sequence[str]
                 ) -> dict[int, tuple[str, str]]:
        """rowid -> (doc id, scope) of the search documents among ``rowids`` that belong to
        this memory and one of the scopes."""
        out: dict[int, tuple[str, str]] = {}
        wanted = set(scopes)
        for i in range(0, len(rowids), 500):
            chunk = list(rowids[i:i + 500])
            for rowid, memory_id, doc_id, scope in self.conn.execute(  # by rowid: no index
                    f"SELECT rowid, memory_id, doc_id, scope FROM search_docs WHERE rowid IN "
                    f"({_in(chunk)})", chunk):
                if memory_id == self.memory_id and scope in wanted:
                    out[rowid] = (doc_id, scope)
        return out

    def _affordable(self, terms: list[str], keys: list[str]) -> list[str]:
        """Drops the most frequent terms while the number of matches in the scopes exceeds
        :data:`FTS_RANK_CAP` (bm25 is computed for every match, about 2 ms per 1,000 here;
        the rarer terms carry the ranking, and the vector channel sees the whole query).
        Matches are bounded by the sum of the terms' document counts in the scopes
        (``fts5vocab`` rows of the scoped terms). Terms the vocabulary does not know are
        kept."""
        if len(terms) < 2:
            return terms
        self.conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.search_vocab USING "
                          "fts5vocab(main, search_fts, 'row')")
        forms = {t: _vocab_form(t) for t in terms}
        wanted = list(dict.fromkeys(scoped_phrases(list(dict.fromkeys(forms.values())), keys)))
        df: dict[str, int] = {}
        for i in range(0, len(wanted), 500):
            chunk = wanted[i:i + 500]
            for term, n in self.conn.execute(f"SELECT term, doc FROM temp.search_vocab WHERE "
                                             f"term IN ({_in(chunk)})", chunk):
                base = term[SCOPE_KEY_CHARS:]
                df[base] = df.get(base, 0) + n
        kept = list(terms)
        while len(kept) > 1 and sum(df.get(forms[t], 0) for t in kept) > FTS_RANK_CAP:
            kept.remove(max(kept, key=lambda t: df.get(forms[t], 0)))
        return kept

    def vectors(self, query: np.ndarray, scopes: Sequence[str], limit: int,
                min_score: float, planned: PlannedRows | None = None
                ) -> list[tuple[str, float, str]]:
        """(doc id, cosine, scope) of the nearest documents in the scopes (exact search);
        ``planned``: what :meth:`vector_plan` computed for this query, if anything (the
        result is the same)."""
        idx = self._cache.index_for(self.conn, self.memory_id)
        if idx is None:
            return []
        return idx.search(query, scopes, limit, min_score, planned)

    def vector_plan(self, scopes: Sequence[str], limit: int, min_score: float
                    ) -> CandidatePlan | None:
        """The in-RAM part of a later ``vectors(query, scopes, limit, min_score)``, to run
        on another thread once the query vector is known (``CandidatePlan.run``, then
        ``vectors(..., planned=...)``); None when the memory has no vectors."""
        idx = self._cache.index_for(self.conn, self.memory_id)
        return None if idx is None else idx.plan(scopes, limit, min_score)

    def key_items(self, keys: Sequence[str], scopes: Sequence[str], limit: int
                  ) -> list[tuple[str, str]]:
        """(item id, scope) of items whose key is one of ``keys`` in the scopes, newest world
        time first."""
        if not keys:
            return []
        rows = self.conn.execute(
            f"SELECT item_id, scope FROM items WHERE memory_id=? AND key IN ({_in(keys)}) AND "
            f"scope IN ({_in(scopes)}) ORDER BY valid_at DESC, item_id LIMIT ?",
            (self.memory_id, *keys, *scopes, limit))
        return [(r[0], r[1]) for r in rows]

    def items(self, item_ids: Sequence[str]) -> dict[str, RecallRow]:
        """The recall-relevant columns of items by id (forgotten items have no row)."""
        out: dict[str, RecallRow] = {}
        for i in range(0, len(item_ids), 500):
            chunk = list(item_ids[i:i + 500])
            for r in self.conn.execute(f"SELECT {', '.join(RecallRow._fields)} FROM items "
                                       f"WHERE memory_id=? AND item_id IN ({_in(chunk)})",
                                       (self.memory_id, *chunk)):
                rec = RecallRow._make(r)
                out[rec.item_id] = rec
        return out

    def payloads(self, payload_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for i in range(0, len(payload_ids), 500):
            chunk = list(payload_ids[i:i + 500])
            for r in self.conn.execute(f"SELECT payload_id, value, quote, metadata, "
                                       f"tz_offset_min FROM payloads WHERE memory_id=? AND "
                                       f"payload_id IN ({_in(chunk)})",
                                       (self.memory_id, *chunk)):
                out[r[0]] = {"value": json.loads(r[1]), "quote": r[2],
                             "metadata": load_metadata(r[3]), "tz_offset_min": r[4]}
        return out

    def source_refs(self, item_ids: Sequence[str]) -> dict[str, list[str]]:
        """Source ids per item from its provenance, oldest first."""
        out: dict[str, list[str]] = {}
        if not item_ids:
            return out
        for item_id, source_id in self.conn.execute(
                f"SELECT item_id, source_id FROM provenance WHERE memory_id=? AND item_id IN "
                f"({_in(item_ids)}) AND source_id IS NOT NULL ORDER BY seq",
                (self.memory_id, *item_ids)):
            refs = out.setdefault(item_id, [])
            if source_id not in refs:
                refs.append(source_id)
        return out

    def source(self, source_id: str) -> dict[str, Any] | None:
        """One source row (redacted ones included), or None."""
        return source_sql.get(self.conn, self.memory_id, source_id)

    def source_event_seq(self, source_id: str) -> int | None:
        """Ledger sequence of a source's ``source.recorded`` event."""
        row = self.conn.execute("SELECT seq FROM ledger WHERE memory_id=? AND "
                                "type='source.recorded' AND json_extract(data, '$.source_id')=? "
                                "ORDER BY seq LIMIT 1", (self.memory_id, source_id)).fetchone()
        return row[0] if row else None

    def sources(self, source_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        return source_sql.visible(self.conn, self.memory_id, source_ids)

    def run_windows(self, ranges: Sequence[tuple[str, int, int]]) -> list[dict[str, Any]]:
        """Source rows of runs within sequence ranges (``stores.sql.sources.run_windows``)."""
        return source_sql.run_windows(self.conn, self.memory_id, ranges)

    def pinned_items(self, scopes: Sequence[str], kinds: Sequence[str]) -> list[RecallRow]:
        """Current items of the kinds in the scopes, in a deterministic order."""
        rows = self.conn.execute(
            f"SELECT {', '.join(RecallRow._fields)} FROM items WHERE memory_id=? AND "
            f"status='current' AND scope IN ({_in(scopes)}) AND kind IN ({_in(kinds)}) "
            f"ORDER BY scope, key, valid_at, item_id", (self.memory_id, *scopes, *kinds))
        return [RecallRow._make(r) for r in rows]

    def profile_render(self, activation_id: str, scopes: str, params: str) -> str | None:
        row = self.conn.execute("SELECT text FROM profile_renders WHERE memory_id=? AND "
                                "activation_id=? AND scopes=? AND params=?",
                                (self.memory_id, activation_id, scopes, params)).fetchone()
        return row[0] if row else None

    def embedding_docs(self, digests: bool = True) -> list[tuple[str, str, str, str]]:
        """Every document that carries a vector: ``(doc_id, doc_type, scope, text)``;
        ``digests``: with the memory's conversation-window digests."""
        out = []
        for r in self.conn.execute(
                "SELECT i.item_id, i.scope, i.key, p.value, p.quote FROM items i JOIN payloads p "
                "ON p.memory_id = i.memory_id AND p.payload_id = i.payload_id "
                "WHERE i.memory_id=? ORDER BY i.item_id", (self.memory_id,)):
            out.append((r[0], DOC_ITEM, r[1], item_text(r[2], json.loads(r[3]), r[4])))
        for r in self.conn.execute("SELECT source_id, scope, text FROM sources WHERE "
                                   "memory_id=? AND text IS NOT NULL ORDER BY source_id",
                                   (self.memory_id,)):
            out.append((source_doc_id(r[0]), DOC_SOURCE, r[1], r[2]))
        if not digests:
            return out
        rows = self.conn.execute("SELECT run_id, sequence, scope, text FROM sources WHERE "
                                 "memory_id=?", (self.memory_id,)).fetchall()
        out.extend((d, DOC_DIGEST, scope, text) for d, scope, text in window_digests(
            {"run_id": r[0], "sequence": r[1], "scope": r[2], "text": r[3]} for r in rows))
        return out

    def vector_hashes(self) -> dict[str, tuple[str, str]]:
        """doc id -> (model, content hash) of the stored vectors."""
        return {r[0]: (r[1], r[2]) for r in self.conn.execute(
            "SELECT doc_id, model, content_hash FROM vectors WHERE memory_id=?",
            (self.memory_id,))}


class SQLiteSearchIndex:
    """Entry point for recall storage on one ``SQLiteStore``.

    Args:
        store: the owning store (its connection and lock are shared).
    """

    def __init__(self, store: Any) -> None:
        self.store = store
        self.cache = VectorCache()

    @contextmanager
    def read(self, memory_id: str) -> Iterator[SearchSnapshot]:
        """A read snapshot (one deferred transaction) of a memory."""
        with self.store._lock:
            conn = self.store.conn
            if conn.in_transaction:
                yield SearchSnapshot(conn, memory_id, self.cache)
                return
            conn.execute("BEGIN")
            try:
                yield SearchSnapshot(conn, memory_id, self.cache)
            finally:
                conn.execute("COMMIT")

    def in_transaction(self, uow: Any) -> SearchSnapshot:
        """Reads inside a unit of work's write transaction."""
        return SearchSnapshot(uow.conn, uow.memory_id, self.cache)

    def writer(self, uow: Any) -> SearchWriter:
        """Index writes in a unit of work's transaction (held for its flush while it defers
        inserts: a batch, ``search_batch.HeldIndex``)."""
        held = getattr(uow, "held", None)
        return SearchWriter(uow.conn, uow.memory_id, held and held(
            "search", lambda: HeldIndex(uow.conn, uow.memory_id)))

    def rebuild_text(self, memory_id: str, digests: bool = True) -> int:
        """Drops and rebuilds a memory's full-text rows from payloads and sources (vectors
        stay), with its digests when ``digests``; returns documents indexed."""
        with self.store._tx() as conn:
            conn.execute("DELETE FROM search_fts WHERE rowid IN (SELECT rowid FROM search_docs "
                         "WHERE memory_id=?)", (memory_id,))
            conn.execute("DELETE FROM search_docs WHERE memory_id=?", (memory_id,))
            w = SearchWriter(conn, memory_id)
            docs = SearchSnapshot(conn, memory_id, self.cache).embedding_docs(digests)
            for doc_id, doc_type, scope, text in docs:
                w.index_text(doc_id, doc_type, scope, text)
        return len(docs)

    def verify_sources(self, memory_id: str) -> dict[str, Any]:
        with self.read(memory_id) as snap:
            return source_sql.verify(snap.conn, memory_id)
