"""Recall SQL for PostgreSQL: search documents (tsvector), vectors (pgvector HNSW), sources,
pinned profile renders. Mirrors ``stores/sqlite/search.py`` class for class and method for
method; fusion, filtering and rendering stay in the shared service/domain code.

Full text: each document's terms come from :func:`remem.domain.textindex.index_terms` (the
same rewrite SQLite indexes: CJK bigrams, emoji terms), have Latin/Greek/Cyrillic diacritics
removed (as FTS5 ``remove_diacritics``) and are stored as a literal ``tsvector`` with positions
(no parser, no dictionary), so a word matches on both backends alike. Queries OR the terms of
the query terms into a ``tsquery``; ranking is ``ts_rank`` (term frequency with length
normalisation; unlike bm25 it has no inverse document frequency). The GIN index keys every
lexeme by its document's scope (migration 018) and a query asks for its (scope, term) keys
(``tsterms.scoped_keys``), so it reads the caller's scopes' posting lists only.

CJK: not pg_trgm, whose trigrams depend on the database's ctype (empty for Japanese with the
builtin C.UTF-8 provider); the bigram rewrite matches a 2-character CJK query anywhere.

Vectors: ``vector`` rows without a fixed dimension; the memory's partition carries an HNSW
index (cosine) on ``vec::vector(dims)`` per model, created when a model is first recorded.
When the caller's scopes hold at most :data:`EXACT_MAX_ROWS` vectors the search is exact (a
scan through the scope index); above that it uses HNSW with ``hnsw.iterative_scan`` so scope
filters still return k rows. Measured recall@10 against exact search (docs/deployment.md,
"Vectors"): 0.992 at 100k bench items with the present ef_search floor of 200; at scale what
decides it is how often one vector is stored (more than 10 rows: several identical graph
elements), not the query's shape (``bench/scale_ann.py``).

Round trips: under load each statement costs milliseconds of waiting, whatever it does, so a
read snapshot sends few: the planner statistics full text consults are cached per memory for
:data:`STATS_TTL_S`; the model is read with the ledger head, once per snapshot whichever is
asked first; the vector search counts and ranks in one statement; items come with their
payloads and source refs. Not kept (100k bench, A/B): psycopg pipeline mode (wall p50 59 ->
83 ms), the vector hits' item rows joined into the vector search (+3 ms server CPU), prepared
statements (no gain).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import psycopg
from psycopg import sql
from psycopg.rows import tuple_row

from remem.domain.digests import DOC_DIGEST, window_digests
from remem.domain.filters import load_metadata
from remem.domain.sourcelog import source_doc_id
from remem.domain.textindex import item_text, scope_term
from remem.stores.sql import sources as source_sql
from remem.stores.postgres.connection import partition_name
from remem.stores.postgres.erasure import prune_profile_renders
from remem.stores.postgres.tsterms import (MAX_LEXEME_BYTES, fold, scoped_keys,
                                           tsquery_literal, tsvector_literal)
from remem.stores.sql.rows import RecallRow
from remem.stores.sql.sources import SourceLogWriter

__all__ = ["DOC_ITEM", "DOC_SOURCE", "PostgresSearchIndex", "SearchSnapshot", "SearchWriter",
           "tsquery_literal", "tsvector_literal"]

DOC_ITEM, DOC_SOURCE = "item", "source"
_RECALL_COLUMNS = ", ".join(RecallRow._fields)
#: hnsw.ef_search floor and the factor over k (more candidates = better recall, slower).
#: 100k bench items, 100 scopes searched at once, k = 10, graph built after a bulk load:
#: recall@10 against exact 0.978 at 100 and 0.992 at 200 (50 queries; 180 queries: 0.983,
#: 0.988 at 160, 0.995 at 200); ANN p50 28 -> 35 ms wall under load (noisy).
EF_SEARCH_MIN, EF_SEARCH_FACTOR = 200, 4
#: Expected full-text matches above which the most frequent query terms are dropped.
FTS_RANK_CAP = 1500
#: Up to this many vectors in the caller's scopes, search exactly (docs/deployment.md "Vectors").
EXACT_MAX_ROWS = 20_000
#: Seconds the planner statistics :meth:`SearchSnapshot._affordable` reads are reused per
#: memory (they change only when ANALYZE runs; reading ``pg_stats`` costs 5-30 ms of planning).
STATS_TTL_S = 60.0


def _scope_share(scopes: set[str], stats: dict[str, Any]) -> float:
    """Estimated fraction of the partition's rows in ``scopes``, as the planner would: the
    most-common-value frequencies, and the rest spread evenly over the other values."""
    rows = max(float(stats["reltuples"]), 1.0)
    distinct = stats["n_distinct"] or 0.0
    distinct = -distinct * rows if distinct < 0 else distinct
    mcv = dict(zip(stats["vals"] or [], stats["val_freqs"] or [], strict=False))
    others = max(distinct - len(mcv), 1.0)
    rest = max(1.0 - sum(mcv.values()), 0.0) / others
    return min(1.0, sum(mcv.get(s, rest) for s in scopes))


def _hnsw_index(mno: int, model: str, dims: int) -> str:
    tag = hashlib.sha256(f"{model}\0{dims}".encode()).hexdigest()[:10]
    return f"vectors_m{mno}_hnsw_{tag}"


class SearchWriter(SourceLogWriter):
    """Index writes inside a write transaction (a ``PostgresUnitOfWork``).

    Args:
        uow: the unit of work (its connection, memory, partition number and the locked
            ``memories`` row it keeps).
        known_indexes: HNSW index names known to exist (shared per store, saves a lookup).
        deferred: the memory is in a bulk load (``PostgresStore.bulk_load``): no HNSW index
            is made here; the load builds them when it ends.
    """

    def __init__(self, uow: Any, known_indexes: set[str] | None = None,
                 deferred: bool = False) -> None:
        self.uow, self.conn, self.memory_id, self.mno = uow, uow.conn, uow.memory_id, uow.mno
        self._known = known_indexes if known_indexes is not None else set()
        self.deferred = deferred

    def index_text(self, doc_id: str, doc_type: str, scope: str, text: str) -> None:
        """Adds or replaces the full-text row of a document."""
        self.conn.execute(
            "INSERT INTO search_docs(memory_id, doc_id, doc_type, scope, tsv) VALUES "
            "(%s,%s,%s,%s,%s::tsvector) ON CONFLICT (memory_id, doc_id) DO UPDATE SET "
            "doc_type=EXCLUDED.doc_type, scope=EXCLUDED.scope, tsv=EXCLUDED.tsv",
            (self.memory_id, doc_id, doc_type, scope,
             tsvector_literal(text, scope_term(self.memory_id, scope))))

    def embedding(self) -> tuple[str | None, int | None]:
        return self.uow.memory["embedding_model"], self.uow.memory["dimensions"]

    def record_embedding(self, model: str, dims: int) -> tuple[str, int]:
        """Records the memory's model on first use; returns the recorded (model, dims)."""
        cur = self.embedding()
        if cur[0] is not None:
            return cur[0], int(cur[1] or 0)
        self.conn.execute("UPDATE memories SET embedding_model=%s, dimensions=%s WHERE "
                          "memory_id=%s", (model, dims, self.memory_id))
        self.uow.memory.update(embedding_model=model, dimensions=dims)
        return model, dims

    def _ensure_hnsw(self, model: str, dims: int) -> None:
        """Creates the partition's HNSW index for (model, dims) if it is missing."""
        name = _hnsw_index(self.mno, model, dims)
        if name in self._known or self.deferred:
            return
        self.conn.execute(sql.SQL(
            "CREATE INDEX IF NOT EXISTS {} ON {} USING hnsw ((vec::vector({})) "
            "vector_cosine_ops) WHERE model = {}").format(
            sql.Identifier(name), sql.Identifier(partition_name("vectors", self.mno)),
            sql.Literal(int(dims)), sql.Literal(model)))
        self._known.add(name)

    def put_vectors(self, model: str, rows: Sequence[tuple[str, str, str, str, np.ndarray]]
                    ) -> int:
        """Stores vectors ``(doc_id, doc_type, scope, content_hash, vector)``.

        Replacing an existing document's vector bumps ``vector_epoch``; every row gets the
        next ``vector_seq`` (the counters SQLite's in-process cache reads; kept for parity).
        """
        if not rows:
            return 0
        c, m = self.conn, self.memory_id
        self._ensure_hnsw(model, len(rows[0][4]))
        first = self.uow.memory["vector_seq"] + 1
        params = [(m, d, t, s, model, h, np.asarray(v, dtype=np.float32), first + i)
                  for i, (d, t, s, h, v) in enumerate(rows)]
        replaced = c.execute("DELETE FROM vectors WHERE memory_id=%s AND doc_id = ANY(%s)",
                             (m, [r[0] for r in rows])).rowcount
        with c.cursor() as cur:
            cur.executemany("INSERT INTO vectors(memory_id, doc_id, doc_type, scope, model, "
                            "content_hash, vec, seq) VALUES (%s,%s,%s,%s,%s,%s,%s,%s)", params)
        self.uow.memory["vector_seq"] = first + len(rows) - 1
        c.execute("UPDATE memories SET vector_seq = %s, vector_epoch = vector_epoch + %s "
                  "WHERE memory_id=%s", (self.uow.memory["vector_seq"], int(replaced > 0), m))
        return len(rows)

    def switch_model(self, model: str, dims: int) -> None:
        """Sets the memory's model (its HNSW index exists once vectors were stored)."""
        self._ensure_hnsw(model, dims)
        self.conn.execute("UPDATE memories SET embedding_model=%s, dimensions=%s, "
                          "vector_epoch = vector_epoch + 1 WHERE memory_id=%s",
                          (model, dims, self.memory_id))
        self.uow.memory.update(embedding_model=model, dimensions=dims)

    def drop_vectors_except(self, model: str) -> int:
        """Deletes vectors made by any other model (after a switch) and their indexes."""
        n = self.conn.execute("DELETE FROM vectors WHERE memory_id=%s AND model<>%s",
                              (self.memory_id, model)).rowcount
        keep = {_hnsw_index(self.mno, model, d) for (d,) in self.conn.cursor(
            row_factory=tuple_row).execute(
            "SELECT DISTINCT vector_dims(vec) FROM vectors WHERE memory_id=%s",
            (self.memory_id,))}
        for (name,) in self.conn.cursor(row_factory=tuple_row).execute(
                "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND "
                "tablename = %s AND indexname LIKE 'vectors\\_m%%\\_hnsw\\_%%'",
                (partition_name("vectors", self.mno),)).fetchall():
            if name not in keep:
                self.conn.execute(sql.SQL("DROP INDEX IF EXISTS {}").format(
                    sql.Identifier(name)))
                self._known.discard(name)
        return n

    # --- profile renders -------------------------------------------------------------------
    def put_profile_render(self, activation_id: str, scopes: str, params: str, text: str,
                           item_ids: Sequence[str], at: str) -> None:
        self.conn.execute(
            "INSERT INTO profile_renders(memory_id, activation_id, scopes, params, text, item_ids, "
            "rendered_at) VALUES (%s,%s,%s,%s,%s,%s,%s) ON CONFLICT (memory_id, activation_id, "
            "scopes, params) DO UPDATE SET text=EXCLUDED.text, item_ids=EXCLUDED.item_ids, "
            "rendered_at=EXCLUDED.rendered_at",
            (self.memory_id, activation_id, scopes, params, text, json.dumps(list(item_ids)), at))
        prune_profile_renders(self.conn, self.memory_id, at)  # bounded per memory


class SearchSnapshot:
    """Reads inside one transaction: every query sees the same database state.

    Args:
        conn: the transaction's connection.
        memory_id: the memory read.
        stats: a per-store cache of planner statistics (memory id -> (monotonic s, row)),
            shared by the store's snapshots; None reads them every time.
        read_only: a read-only snapshot (nothing it reads changes while it is open), so the
            memory's recorded embedding model is read once.
    """

    def __init__(self, conn: psycopg.Connection, memory_id: str, *,
                 stats: dict[str, tuple[float, Any]] | None = None,
                 read_only: bool = False) -> None:
        self.conn, self.memory_id = conn, memory_id
        self._stats, self._read_only = stats, read_only
        self._embedding: tuple[str | None, int | None] | None = None
        self._head: int | None = None  # read-only: the ledger head, read with the model
        # read with the items (read-only snapshots): payload id -> payload (None: no row),
        # item id -> its source refs
        self._payloads: dict[str, dict[str, Any] | None] = {}
        self._refs: dict[str, list[str]] = {}

    def head_seq(self) -> int:
        """The ledger head; a read-only snapshot reads it with the recorded embedding model in
        one statement, once (recall asks for both: one round trip; nothing it reads changes
        while a REPEATABLE READ snapshot is open)."""
        if not self._read_only:
            row = self.conn.execute("SELECT max(seq) AS seq FROM ledger WHERE memory_id=%s",
                                    (self.memory_id,)).fetchone()
            return row["seq"] or 0
        if self._head is None:
            self._read_head_and_model()
        return self._head or 0

    def _read_head_and_model(self) -> None:
        row = self.conn.execute(
            "SELECT (SELECT max(seq) FROM ledger WHERE memory_id = %(m)s) AS seq, m.* FROM "
            "(SELECT 1) one LEFT JOIN (SELECT embedding_model, dimensions FROM memories WHERE "
            "memory_id = %(m)s) m ON true", {"m": self.memory_id}).fetchone()
        self._embedding = (row["embedding_model"], row["dimensions"])
        self._head = row["seq"] or 0

    def embedding(self) -> tuple[str | None, int | None]:
        """(model, dimensions) the memory recorded; (None, None) before its first vector.
        A read-only snapshot reads the ledger head with it (:meth:`head_seq`)."""
        if self._embedding is not None:
            return self._embedding
        if self._read_only:
            self._read_head_and_model()
            return self._embedding  # type: ignore[return-value]
        row = self.conn.execute("SELECT embedding_model, dimensions FROM memories WHERE "
                                "memory_id=%s", (self.memory_id,)).fetchone()
        return (row["embedding_model"], row["dimensions"]) if row else (None, None)

    def fts(self, terms: Sequence[str], scopes: Sequence[str], limit: int
            ) -> list[tuple[str, str]]:
        """(doc id, scope) of documents containing any of the terms in the scopes, best
        ``ts_rank`` first (ties by doc id). See :meth:`_affordable` for dropped terms."""
        # A word over the lexeme limit is never indexed (tsvector_literal drops it), so it
        # cannot match; PostgreSQL would refuse it in a tsquery.
        folded = [t for t in dict.fromkeys(fold(t) for t in terms)
                  if t and len(t.encode()) <= MAX_LEXEME_BYTES]
        if not folded or not scopes:
            return []
        folded, _share = self._affordable(folded, scopes)
        # The index keys are (scope, term) pairs (migration 018): the search reads the
        # posting lists of the caller's scopes' terms only; ranking reads the row's tsv.
        rows = self.conn.cursor(row_factory=tuple_row).execute(
            "SELECT doc_id, scope FROM search_docs, CAST(%(q)s AS tsquery) AS q WHERE "
            "memory_id=%(m)s AND scope = ANY(%(s)s) AND remem_scoped_terms(scope, tsv) && "
            "%(k)s::text[] ORDER BY ts_rank(tsv, q, 1) DESC, doc_id COLLATE \"C\" LIMIT %(n)s",
            {"q": tsquery_literal(folded), "m": self.memory_id, "s": list(scopes),
             "k": scoped_keys(scopes, folded), "n": limit})
        return rows.fetchall()

    def _affordable(self, terms: list[str], scopes: Sequence[str]
                    ) -> tuple[list[str], float]:
        """Drops the most frequent terms while their expected matches in the scopes exceed
        :data:`FTS_RANK_CAP`, as SQLite does (``ts_rank`` is computed for every match; the
        rarer terms carry the ranking and the vector channel sees the whole query).

        Expected matches = rows x lexeme frequency x the scopes' share, all from the planner
        statistics of the memory's partition (``pg_stats``: most common lexemes and scopes;
        a catalog read, no scan, reused for :data:`STATS_TTL_S`). Terms or scopes the
        statistics do not list count as rare, so a memory without statistics yet keeps every
        term.

        Returns:
            (kept terms, estimated share of the partition's rows in the scopes; 0.0 unknown).
        """
        row = self._fts_stats()
        if row is None or row["reltuples"] <= FTS_RANK_CAP:
            return terms, 0.0
        share = _scope_share(set(scopes), row) if row["vals"] or row["n_distinct"] else 0.0
        if len(terms) < 2 or not row["elems"]:
            return terms, share
        freq = dict(zip(row["elems"], row["elem_freqs"], strict=False))
        df = {t: freq.get(t, 0.0) * row["reltuples"] * share for t in terms}
        kept = list(terms)
        while len(kept) > 1 and sum(df[t] for t in kept) > FTS_RANK_CAP:
            kept.remove(max(kept, key=lambda t: df[t]))
        return kept, share

    def _fts_stats(self) -> dict[str, Any] | None:
        """The planner statistics of the memory's ``search_docs`` partition: ``reltuples``
        and, when analysed, the most common lexemes (``elems``, ``elem_freqs``) and scopes
        (``vals``, ``val_freqs``, ``n_distinct``). None when the memory has no partition.
        Reused from the store's cache for :data:`STATS_TTL_S` seconds."""
        now = time.monotonic()
        hit = self._stats.get(self.memory_id) if self._stats is not None else None
        if hit is not None and now - hit[0] < STATS_TTL_S:
            return hit[1]
        mno = self.conn.execute("SELECT mno FROM memories WHERE memory_id = %s",
                                (self.memory_id,)).fetchone()
        if mno is None:
            return None
        rel = partition_name("search_docs", mno["mno"])
        rows = self.conn.execute(
            "SELECT c.reltuples, s.attname, s.most_common_elems::text::text[] AS elems, "
            "s.most_common_elem_freqs AS elem_freqs, s.most_common_vals::text::text[] AS vals, "
            "s.most_common_freqs AS val_freqs, s.n_distinct FROM pg_class c LEFT JOIN pg_stats "
            "s ON s.schemaname = current_schema() AND s.tablename = %(rel)s AND s.attname IN "
            "('tsv', 'scope') WHERE c.oid = to_regclass(%(rel)s)", {"rel": rel}).fetchall()
        out: dict[str, Any] | None = None
        if rows:
            out = {"reltuples": rows[0]["reltuples"], "elems": None, "elem_freqs": None,
                   "vals": None, "val_freqs": None, "n_distinct": None}
            for r in rows:
                if r["attname"] == "tsv":
                    out.update(elems=r["elems"], elem_freqs=r["elem_freqs"])
                elif r["attname"] == "scope":
                    out.update(vals=r["vals"], val_freqs=r["val_freqs"],
                               n_distinct=r["n_distinct"])
        if self._stats is not None:
            self._stats[self.memory_id] = (now, out)
        return out

    def vector_plan(self, scopes: Sequence[str], limit: int, min_score: float) -> None:
        """None: pgvector ranks inside the database, nothing runs in RAM beforehand (the
        SQLite twin returns a ``CandidatePlan``)."""
        return None

    def vectors(self, query: np.ndarray, scopes: Sequence[str], limit: int,
                min_score: float, planned: Any = None) -> list[tuple[str, float, str]]:
        """(doc id, cosine, scope) of the nearest documents in the scopes (``planned``:
        always None here, see :meth:`vector_plan`).

        Exact when the scopes hold at most :data:`EXACT_MAX_ROWS` vectors (a scan of those
        rows through the scope index); otherwise the memory's HNSW index with an iterative
        scan (approximate; see the module docstring for its measured recall).
        """
        model, dims = self.embedding()
        if model is None or not scopes:
            return []
        q = np.asarray(query, dtype=np.float32)
        if q.shape[0] != dims:
            return []
        args = {"q": q, "m": self.memory_id, "model": model, "s": list(scopes), "n": limit,
                "cap": EXACT_MAX_ROWS}
        where = "memory_id = %(m)s AND model = %(model)s AND scope = ANY(%(s)s)"
        # One statement: count the scopes' vectors (up to the cap + 1) and, when they are at
        # most the cap, rank them exactly (no cast to vector(dims): the HNSW expression index
        # cannot serve it; ties by doc id, not by where rows lie). A count above the cap
        # returns one row without a document. Distance once per row (7.6 -> 6.4 ms at 100k).
        rows = self.conn.cursor(row_factory=tuple_row).execute(
            "WITH c AS MATERIALIZED (SELECT count(*) AS n FROM (SELECT 1 FROM vectors WHERE "
            f"{where} LIMIT %(cap)s + 1) s) SELECT c.n, v.doc_id, v.scope, 1 - v.d FROM c "
            "LEFT JOIN LATERAL (SELECT doc_id, scope, vec <=> %(q)s AS d FROM vectors "
            f"WHERE c.n <= %(cap)s AND {where} ORDER BY d, doc_id COLLATE \"C\" LIMIT %(n)s) v "
            "ON true",
            args).fetchall()
        if rows[0][0] <= EXACT_MAX_ROWS:
            hits = [(d, float(sc), scope) for _n, d, scope, sc in rows
                    if d is not None and sc >= min_score]
            return sorted(hits, key=lambda h: (-h[1], h[0]))
        self.conn.execute("SELECT set_config('hnsw.ef_search', %s, true), "
                          "set_config('hnsw.iterative_scan', 'relaxed_order', true)",
                          (str(max(EF_SEARCH_MIN, EF_SEARCH_FACTOR * limit)),))
        query_sql = sql.SQL(
            "SELECT doc_id, scope, 1 - (vec::vector({d}) <=> %(q)s::vector({d})) AS score "
            f"FROM vectors WHERE {where} "
            "ORDER BY vec::vector({d}) <=> %(q)s::vector({d}) LIMIT %(n)s").format(
            d=sql.Literal(int(dims)))
        rows = self.conn.execute(query_sql, args)
        hits = [(r["doc_id"], float(r["score"]), r["scope"]) for r in rows
                if r["score"] >= min_score]
        return sorted(hits, key=lambda h: (-h[1], h[0]))

    def key_items(self, keys: Sequence[str], scopes: Sequence[str], limit: int
                  ) -> list[tuple[str, str]]:
        """(item id, scope) of items whose key is one of ``keys`` in the scopes, newest world
        time first."""
        if not keys or not scopes:
            return []
        rows = self.conn.execute(
            "SELECT item_id, scope FROM items WHERE memory_id=%s AND key = ANY(%s) AND "
            "scope = ANY(%s) "
            'ORDER BY valid_at DESC, item_id COLLATE "C" LIMIT %s',
            (self.memory_id, list(keys), list(scopes), limit))
        return [(r["item_id"], r["scope"]) for r in rows]

    def items(self, item_ids: Sequence[str]) -> dict[str, RecallRow]:
        """The recall-relevant columns of items by id (forgotten items have no row).

        A read-only snapshot reads each item's payload and source refs in the same statement
        and keeps them for :meth:`payloads` and :meth:`source_refs` (recall asks for those of
        the items it chose next: two round trips fewer)."""
        if not item_ids:
            return {}
        if not self._read_only:
            rows = self.conn.cursor(row_factory=tuple_row).execute(
                f"SELECT {_RECALL_COLUMNS} FROM items WHERE memory_id=%s AND item_id = ANY(%s)",
                (self.memory_id, list(item_ids)))
            return {rec.item_id: rec for rec in map(RecallRow._make, rows)}
        cols = ", ".join(f"i.{c}" for c in RecallRow._fields)
        rows = self.conn.cursor(row_factory=tuple_row).execute(
            f"SELECT {cols}, p.payload_id IS NOT NULL, p.value, p.quote, p.metadata, "
            "p.tz_offset_min, (SELECT "
            "array_agg(v.source_id ORDER BY v.seq) FROM provenance v WHERE v.memory_id = "
            "i.memory_id AND v.item_id = i.item_id AND v.source_id IS NOT NULL) FROM items i "
            "LEFT JOIN payloads p ON p.memory_id = i.memory_id AND p.payload_id = i.payload_id "
            "WHERE i.memory_id = %s AND i.item_id = ANY(%s)", (self.memory_id, list(item_ids)))
        out, n = {}, len(RecallRow._fields)
        for row in rows:
            rec = RecallRow._make(row[:n])
            found, value, quote, metadata, offset, refs = row[n:]
            out[rec.item_id] = rec
            self._payloads[rec.payload_id] = {
                "value": json.loads(value), "quote": quote,
                "metadata": load_metadata(metadata), "tz_offset_min": offset} if found else None
            self._refs[rec.item_id] = list(dict.fromkeys(refs or ()))
        return out

    def payloads(self, payload_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Payloads by id: ``{"value", "quote", "metadata"}`` (erased ones have no entry)."""
        known = {p: self._payloads[p] for p in payload_ids if p in self._payloads}
        missing = [p for p in payload_ids if p not in known]
        out = {p: v for p, v in known.items() if v is not None}
        if not missing:
            return out
        rows = self.conn.execute("SELECT payload_id, value, quote, metadata, tz_offset_min FROM "
                                 "payloads WHERE memory_id=%s AND payload_id = ANY(%s)",
                                 (self.memory_id, list(missing)))
        out.update({r["payload_id"]: {"value": json.loads(r["value"]), "quote": r["quote"],
                                      "metadata": load_metadata(r["metadata"]),
                                      "tz_offset_min": r["tz_offset_min"]} for r in rows})
        return out

    def source_refs(self, item_ids: Sequence[str]) -> dict[str, list[str]]:
        """Source ids per item from its provenance, oldest first."""
        out = {i: self._refs[i] for i in item_ids if i in self._refs and self._refs[i]}
        missing = [i for i in item_ids if i not in self._refs]
        if not missing:
            return out
        for r in self.conn.execute(
                "SELECT item_id, source_id FROM provenance WHERE memory_id=%s AND "
                "item_id = ANY(%s) AND source_id IS NOT NULL ORDER BY seq",
                (self.memory_id, list(missing))):
            refs = out.setdefault(r["item_id"], [])
            if r["source_id"] not in refs:
                refs.append(r["source_id"])
        return out

    def source(self, source_id: str) -> dict[str, Any] | None:
        """One source row (redacted ones included), or None."""
        return source_sql.get(self.conn, self.memory_id, source_id)

    def source_event_seq(self, source_id: str) -> int | None:
        """Ledger sequence of a source's ``source.recorded`` event."""
        row = self.conn.execute("SELECT seq FROM ledger WHERE memory_id=%s AND "
                                "type='source.recorded' AND data::jsonb ->> 'source_id' = %s "
                                "ORDER BY seq LIMIT 1", (self.memory_id, source_id)).fetchone()
        return row["seq"] if row else None

    def sources(self, source_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        return source_sql.visible(self.conn, self.memory_id, source_ids)

    def run_windows(self, ranges: Sequence[tuple[str, int, int]]) -> list[dict[str, Any]]:
        """Source rows of runs within sequence ranges (``stores.sql.sources.run_windows``)."""
        return source_sql.run_windows(self.conn, self.memory_id, ranges)

    def pinned_items(self, scopes: Sequence[str], kinds: Sequence[str]) -> list[RecallRow]:
        """Current items of the kinds in the scopes, in a deterministic (bytewise) order."""
        if not scopes or not kinds:
            return []
        rows = self.conn.cursor(row_factory=tuple_row).execute(
            f"SELECT {_RECALL_COLUMNS} FROM items WHERE memory_id=%s AND status='current' AND "
            "scope = ANY(%s) AND kind = ANY(%s) ORDER BY scope COLLATE \"C\", key COLLATE \"C\", "
            'valid_at, item_id COLLATE "C"', (self.memory_id, list(scopes), list(kinds)))
        return [RecallRow._make(r) for r in rows]

    def profile_render(self, activation_id: str, scopes: str, params: str) -> str | None:
        row = self.conn.execute("SELECT text FROM profile_renders WHERE memory_id=%s AND "
                                "activation_id=%s AND scopes=%s AND params=%s",
                                (self.memory_id, activation_id, scopes, params)).fetchone()
        return row["text"] if row else None

    def embedding_docs(self, digests: bool = True) -> list[tuple[str, str, str, str]]:
        """Every document that carries a vector: ``(doc_id, doc_type, scope, text)``;
        ``digests``: with the memory's conversation-window digests."""
        out = []
        for r in self.conn.execute(
                "SELECT i.item_id, i.scope, i.key, p.value, p.quote FROM items i JOIN payloads p "
                "ON p.memory_id = i.memory_id AND p.payload_id = i.payload_id "
                'WHERE i.memory_id=%s ORDER BY i.item_id COLLATE "C"', (self.memory_id,)):
            out.append((r["item_id"], DOC_ITEM, r["scope"],
                        item_text(r["key"], json.loads(r["value"]), r["quote"])))
        for r in self.conn.execute("SELECT source_id, scope, text FROM sources WHERE "
                                   "memory_id=%s AND text IS NOT NULL ORDER BY source_id "
                                   'COLLATE "C"', (self.memory_id,)):
            out.append((source_doc_id(r["source_id"]), DOC_SOURCE, r["scope"], r["text"]))
        if not digests:
            return out
        rows = self.conn.execute("SELECT run_id, sequence, scope, text FROM sources WHERE "
                                 "memory_id=%s", (self.memory_id,)).fetchall()
        out.extend((d, DOC_DIGEST, scope, text) for d, scope, text in window_digests(rows))
        return out

    def vector_copies(self) -> float | None:
        """Stored vectors per distinct text of the memory's model (None without vectors); a
        bench diagnostic that scans them (HNSW recall: ``bench/scale_ann.py``)."""
        model, _dims = self.embedding()
        row = self.conn.execute(
            "SELECT count(*)::float8 / NULLIF(count(DISTINCT content_hash), 0) AS r FROM "
            "vectors WHERE memory_id = %s AND model = %s", (self.memory_id, model)).fetchone()
        return None if row["r"] is None else float(row["r"])

    def vector_hashes(self) -> dict[str, tuple[str, str]]:
        """doc id -> (model, content hash) of the stored vectors."""
        return {r["doc_id"]: (r["model"], r["content_hash"]) for r in self.conn.execute(
            "SELECT doc_id, model, content_hash FROM vectors WHERE memory_id=%s",
            (self.memory_id,))}


class PostgresSearchIndex:
    """Entry point for recall storage on one ``PostgresStore``.

    Args:
        store: the owning store (its pool is shared).
    """

    def __init__(self, store: Any) -> None:
        self.store = store
        self.known_indexes: set[str] = set()
        #: Memories in a bulk load in this process (``PostgresStore.bulk_load``).
        self.deferred: set[str] = set()
        self.fts_stats: dict[str, tuple[float, Any]] = {}

    @contextmanager
    def read(self, memory_id: str) -> Iterator[SearchSnapshot]:
        """A read snapshot: one REPEATABLE READ, READ ONLY transaction of a memory."""
        with self.store.db.snapshot() as conn:
            yield SearchSnapshot(conn, memory_id, stats=self.fts_stats, read_only=True)

    def in_transaction(self, uow: Any) -> SearchSnapshot:
        """Reads inside a unit of work's write transaction."""
        return SearchSnapshot(uow.conn, uow.memory_id)

    def writer(self, uow: Any) -> SearchWriter:
        """Index writes in a unit of work's transaction (full-text and vector rows held for
        its flush while it defers inserts: a batch, ``search_batch.HeldIndex``)."""
        from remem.stores.postgres import search_batch  # it subclasses SearchWriter

        deferred = uow.memory_id in self.deferred
        held = getattr(uow, "held", None)
        buffer = held and held("search", lambda: search_batch.HeldIndex(uow, deferred))
        if buffer is None:
            return SearchWriter(uow, self.known_indexes, deferred)
        return search_batch.HeldSearchWriter(uow, self.known_indexes, buffer, deferred)

    def rebuild_text(self, memory_id: str, digests: bool = True) -> int:
        """Drops and rebuilds a memory's full-text rows from payloads and sources (vectors
        stay), with its digests when ``digests``; returns documents indexed."""
        with self.store.unit_of_work(memory_id) as uow:
            uow.conn.execute("DELETE FROM search_docs WHERE memory_id=%s", (memory_id,))
            docs = SearchSnapshot(uow.conn, memory_id).embedding_docs(digests)
            with uow.conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO search_docs(memory_id, doc_id, doc_type, scope, tsv) "
                    "VALUES (%s,%s,%s,%s,%s::tsvector)",
                    [(memory_id, d, t, s, tsvector_literal(text, scope_term(memory_id, s)))
                     for d, t, s, text in docs])
        return len(docs)

    def verify_sources(self, memory_id: str) -> dict[str, Any]:
        with self.read(memory_id) as snap:
            return source_sql.verify(snap.conn, memory_id)
