"""In-process vector index per memory: quantised rows in RAM, exact rescoring from SQLite.

RAM holds, per vector row: its int8 codes with a float32 scale (``v ~= codes * scale``; 388
bytes at 384 dims), its ``vectors.seq`` (int64; the row's identity, mapped back to the doc id
through SQLite) and a scope code (int32): about 400 MB at 1M x 384, against 1.5 GB for a
float32 matrix plus ~100 MB of doc id strings. (float16 codes are available for comparison:
twice the RAM and 2.7x the CPU to widen, same recall; see ``remem bench vecindex``.) Measured at
1M rows: 389 MB; a 9.5k-row scope 6 ms of CPU, every scope through the ANN 56 ms (recall@10
0.998 on clustered vectors; 0.988 on real MiniLM vectors at 24k rows).

A query first ranks candidates by the quantised cosine, then reads the float32 vectors of the
best ``2 k + 20`` candidates (less those whose quantisation error bound rules them out,
:meth:`VectorIndex.prune`) back from SQLite (``vectors.vec``, in the caller's snapshot) and
returns them ranked by the exact cosine. The doc id and scope come from those rows, so a row
erased in the snapshot is never returned even if RAM still held it.

Candidates:

- scopes holding at most :data:`EXACT_MAX_ROWS` rows (PostgreSQL's limit is 20,000): every row
  of those scopes is scored (row lists per scope are cached), in chunks;
- above that: the inverted-file ANN of :mod:`remem.stores.sqlite.vecivf`, built on the first
  such query, filtered to the caller's scopes while probing, widened until enough in-scope rows
  were scored.

Recall runs the RAM part (ranking and pruning) on the thread that embedded its query
(:class:`CandidatePlan`, captured in a snapshot); the search in the next snapshot uses those
rows only when :meth:`VectorIndex.state` is unchanged, so the result is the same.

Freshness: ``memories.vector_seq`` counts inserts and each row carries its ``seq``, so a cached
index loads only rows newer than the last it saw; ``memories.vector_epoch`` bumps whenever rows
are deleted or replaced (erasure, reembed): the index then asks SQLite which of its seqs still
exist and zeroes the rest in RAM (codes, scale, scope; the ANN drops them, or is discarded when
one of them helped train it). A model switch or a deleted and re-created memory starts a new
index. Everything is read in the caller's snapshot, so a query never mixes database states.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from remem.stores.sqlite.vecivf import ClusterIndex

#: Up to this many vectors in the caller's scopes, score every row (no ANN).
EXACT_MAX_ROWS = 10_000
#: Candidates rescored exactly from SQLite: ``RESCORE_FACTOR * k + RESCORE_EXTRA``.
RESCORE_FACTOR, RESCORE_EXTRA = 2, 20
#: Rows widened to float32 at a time while scoring (cache-sized: 512 took 2.6 ms of CPU for
#: 9k rows here, 4096 took 4.8).
SCORE_CHUNK_ROWS = 512
#: Added to every quantisation error bound: float32 rounding of both cosines (at most ~2e-5
#: for unit vectors of 384 dims).
PRUNE_SLACK = 1e-4
#: Erased rows (share of all rows) above which the cache reloads the index compactly.
COMPACT_SHARE = 0.25
CODECS = ("int8", "float16")


class VectorIndex:
    """The quantised vectors of one memory under one model.

    Attributes:
        model: embedding model id of every row.
        dims: vector length.
        ident: (memory created_at, model, dims): a change starts a new index.
        epoch, seq: the ``memories`` counters this index reflects.
        size: rows held (erased rows included); ``live``: rows not erased.
        codec: ``int8`` (default) or ``float16``.
        ann: the inverted-file index, once an above-limit query built it.
    """

    def __init__(self, model: str, dims: int, epoch: object, *, ident: object = None,
                 codec: str = "int8") -> None:
        if codec not in CODECS:
            raise ValueError(f"codec must be one of {CODECS}")
        self.model, self.dims, self.epoch, self.seq = model, dims, epoch, 0
        self.ident, self.codec = ident, codec
        self.size = self.live = 0
        self._codes = np.empty((0, dims), dtype=np.int8 if codec == "int8" else np.float16)
        self._scale = np.empty(0, dtype=np.float32)
        self._seqs = np.empty(0, dtype=np.int64)
        self._scopes = np.empty(0, dtype=np.int32)
        self._scope_code: dict[str, int] = {}
        self._counts = np.zeros(0, dtype=np.int64)
        self._rows_cache: dict[int, np.ndarray] = {}
        self.ann: ClusterIndex | None = None

    # --- writes ------------------------------------------------------------------------------
    def reserve(self, rows: int) -> None:
        """Grows capacity to hold ``rows`` more rows (exactly; appends double otherwise)."""
        need = self.size + rows
        if need <= self._codes.shape[0]:
            return
        for name in ("_codes", "_scale", "_seqs", "_scopes"):
            old = getattr(self, name)
            grown = np.empty((need, *old.shape[1:]), dtype=old.dtype)
            grown[: self.size] = old[: self.size]
            setattr(self, name, grown)

    def append(self, seqs: Sequence[int], scopes: Sequence[str], vectors: np.ndarray) -> None:
        """Adds rows: ``vectors`` is float32 ``[len(seqs), dims]``, L2-normalised."""
        n = len(seqs)
        if n == 0:
            return
        if self.size + n > self._codes.shape[0]:
            self.reserve(max(n, self._codes.shape[0], 1024))
        lo, hi = self.size, self.size + n
        self._codes[lo:hi], self._scale[lo:hi] = quantise(vectors, self.codec)
        self._seqs[lo:hi] = seqs
        codes = [self._scope_code.setdefault(s, len(self._scope_code)) for s in scopes]
        self._scopes[lo:hi] = codes
        counts = np.bincount(codes, minlength=len(self._scope_code))
        counts[: len(self._counts)] += self._counts
        self._counts = counts
        self.size, self.live = hi, self.live + n
        self._rows_cache.clear()

    def erase(self, live_seqs: np.ndarray) -> int:
        """Zeroes every row whose seq is not in ``live_seqs``; returns rows erased now."""
        held = self._seqs[: self.size]
        gone = np.flatnonzero((held >= 0) & ~np.isin(held, live_seqs))
        if len(gone) == 0:
            return 0
        np.subtract.at(self._counts, self._scopes[gone], 1)
        self._codes[gone] = 0
        self._scale[gone] = 0.0
        self._seqs[gone] = -1
        self._scopes[gone] = -1
        self.live -= len(gone)
        self._rows_cache.clear()
        if self.ann is not None and not self.ann.forget(gone):
            self.ann = None  # an erased vector helped train it: rebuilt on the next use
        return len(gone)

    # --- reads -------------------------------------------------------------------------------
    def count(self, scopes: Sequence[str]) -> int:
        """Rows (documents with a vector) in the scopes."""
        return int(sum(self._counts[self._scope_code[s]] for s in set(scopes)
                       if s in self._scope_code))

    def seqs_of(self, rows: np.ndarray) -> np.ndarray:
        """The ``vectors.seq`` of row numbers."""
        return self._seqs[rows]

    def dequantised(self, rows: np.ndarray) -> np.ndarray:
        """float32 ``[len(rows), dims]`` approximations of rows."""
        return self._codes[rows].astype(np.float32) * self._scale[rows, None]

    def scores(self, query: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """Approximate cosine of ``query`` with ``rows`` (every row when None), in chunks."""
        n = self.size if rows is None else len(rows)
        out = np.empty(n, dtype=np.float32)
        for lo in range(0, n, SCORE_CHUNK_ROWS):
            hi = min(n, lo + SCORE_CHUNK_ROWS)
            part = slice(lo, hi) if rows is None else rows[lo:hi]
            out[lo:hi] = self._codes[part].astype(np.float32) @ query
        return out * (self._scale[: self.size] if rows is None else self._scale[rows])

    def candidates(self, query: np.ndarray, scopes: Sequence[str], want: int,
                   *, read_only: bool = False) -> np.ndarray | None:
        """Row numbers of (about) the ``want`` best rows of the scopes by quantised cosine,
        exact over the scopes' rows up to :data:`EXACT_MAX_ROWS`, else through the ANN.

        ``read_only``: None instead of building or re-filing the ANN, or of caching a
        scope's row list (what a thread outside the snapshot may not change)."""
        codes = sorted({self._scope_code[s] for s in scopes if s in self._scope_code})
        if not codes or self.live == 0 or want < 1:
            return np.empty(0, dtype=np.int64)
        q = np.asarray(query, dtype=np.float32)
        if sum(int(self._counts[c]) for c in codes) > EXACT_MAX_ROWS:
            allowed = np.zeros(len(self._scope_code) + 1, dtype=bool)  # [-1] (erased): False
            allowed[codes] = True
            if self.ann is None or self.ann.stale(self):
                if read_only:
                    return None
                self.ann = ClusterIndex.build(self)
            if read_only and self.ann.needs_filing(self):
                return None
            return self.ann.candidates(self, q, allowed, want)
        lists = [self._rows_cache.get(c) if read_only else self._rows(c) for c in codes]
        if any(r is None for r in lists):  # read-only: never cache a list computed here
            return None
        rows = np.concatenate(lists)
        return top_rows(rows, self.scores(q, rows), want)

    def prepare(self, scopes: Sequence[str]) -> None:
        """Caches the row lists of the scopes (inside a snapshot) so that a read-only
        :meth:`candidates` of an exact search finds them."""
        codes = {self._scope_code[s] for s in scopes if s in self._scope_code}
        if sum(int(self._counts[c]) for c in codes) <= EXACT_MAX_ROWS:
            for c in codes:
                self._rows(c)

    def state(self) -> tuple[int, ...]:
        """What changes whenever rows, scopes or the ANN change (to tell whether rows
        planned earlier are still the rows :meth:`candidates` and :meth:`prune` give)."""
        ann = self.ann
        return (int(self.seq), hash(self.epoch), self.size, self.live, len(self._scope_code),
                id(ann), ann.filed if ann is not None else -1)

    def prune(self, query: np.ndarray, rows: np.ndarray, k: int, min_score: float
              ) -> np.ndarray:
        """The candidate ``rows`` that can still be among their ``k`` best by exact cosine
        with an exact cosine of at least ``min_score`` (the others need not be read back).

        An int8 code is off by at most half its row's scale per dimension, so a row's exact
        cosine lies within ``scale / 2 * sum(|query|)`` (plus float32 slack) of its quantised
        one. A row whose upper bound is below the ``k``-th best lower bound among ``rows``,
        or below ``min_score``, cannot change the result; the search returns what it would
        have returned from every candidate. float16 codes are not pruned.
        """
        if self.codec != "int8" or len(rows) == 0:
            return rows
        approx = self.scores(query, rows)
        slack = self._scale[rows] * np.float32(0.5 * float(np.abs(query).sum()) * 1.001) \
            + np.float32(PRUNE_SLACK)
        floor = np.float32(min_score)
        if len(rows) > k:
            low = approx - slack
            floor = max(floor, np.partition(low, len(rows) - k)[len(rows) - k])
        return rows[approx + slack >= floor]

    def _rows(self, code: int) -> np.ndarray:
        """Row numbers of one scope (cached until rows are added or erased)."""
        rows = self._rows_cache.get(code)
        if rows is None:
            rows = np.flatnonzero(self._scopes[: self.size] == code)
            self._rows_cache[code] = rows
        return rows

    @property
    def scope_codes(self) -> np.ndarray:
        """Scope code per row (-1: erased); a view, do not modify."""
        return self._scopes[: self.size]

    def ram_bytes(self) -> int:
        """Bytes held by the arrays (capacity, ANN included)."""
        own = sum(a.nbytes for a in (self._codes, self._scale, self._seqs, self._scopes))
        return own + (self.ann.ram_bytes() if self.ann is not None else 0)


def quantise(vectors: np.ndarray, codec: str = "int8") -> tuple[np.ndarray, np.ndarray]:
    """(codes, scale) of float32 rows: int8 codes with a per-row scale (max |x| -> 127), or
    float16 codes with scale 1."""
    v = np.asarray(vectors, dtype=np.float32)
    if codec == "float16":
        return v.astype(np.float16), np.ones(len(v), dtype=np.float32)
    peak = np.abs(v).max(axis=1) if v.size else np.zeros(len(v), dtype=np.float32)
    scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    return np.rint(v / scale[:, None]).astype(np.int8), scale


def top_rows(rows: np.ndarray, scores: np.ndarray, want: int) -> np.ndarray:
    """The ``want`` rows with the highest scores (unordered)."""
    if len(rows) <= want:
        return rows
    return rows[np.argpartition(-scores, want - 1)[:want]]


class IndexView:
    """A :class:`VectorIndex` read inside one snapshot (``conn``): what the search uses."""

    def __init__(self, index: VectorIndex, conn: sqlite3.Connection, memory_id: str) -> None:
        self.index, self.conn, self.memory_id = index, conn, memory_id

    def count(self, scopes: Sequence[str]) -> int:
        return self.index.count(scopes)

    def plan(self, scopes: Sequence[str], k: int, min_score: float) -> CandidatePlan:
        """A :class:`CandidatePlan` of a later :meth:`search` with these arguments."""
        self.index.prepare(scopes)
        return CandidatePlan(self.index, self.index.state(), tuple(scopes), k, min_score)

    def search(self, query: np.ndarray, scopes: Sequence[str], k: int,
               min_score: float = -1.0, planned: PlannedRows | None = None
               ) -> list[tuple[str, float, str]]:
        """Top ``k`` (doc id, exact cosine, scope) among rows of ``scopes`` with cosine >=
        ``min_score``, best first.

        Args:
            query: float32 ``[dims]``, L2-normalised.
            scopes: the caller's scopes; rows of other scopes are never returned.
            k: how many to return at most.
            min_score: similarity floor (on the exact cosine).
            planned: candidate rows a :class:`CandidatePlan` computed off the snapshot;
                used only when they are for this query, these arguments and the index as it
                is now (else computed here), so the result is the same either way.
        """
        if k < 1 or not scopes:
            return []
        q = np.asarray(query, dtype=np.float32)
        if q.shape != (self.index.dims,):
            return []
        rows = planned.rows if planned is not None and planned.holds(
            self.index, query, tuple(scopes), k, min_score) else None
        if rows is None:
            rows = self.index.candidates(q, scopes, RESCORE_FACTOR * k + RESCORE_EXTRA)
            rows = self.index.prune(q, rows, k, min_score)
        if len(rows) == 0:
            return []
        wanted, hits = set(scopes), []
        for doc_id, scope, blob in self._fetch(self.index.seqs_of(rows)):
            if scope in wanted and len(blob) == 4 * self.index.dims:
                score = float(np.frombuffer(blob, dtype="<f4") @ q)
                if score >= min_score:
                    hits.append((doc_id, score, scope))
        hits.sort(key=lambda h: (-h[1], h[0]))
        return hits[:k]

    def _fetch(self, seqs: np.ndarray) -> list[tuple[str, str, bytes]]:
        """(doc id, scope, float32 blob) of the rows with these seqs, in this snapshot."""
        out: list[tuple[str, str, bytes]] = []
        ids = [int(s) for s in seqs if s >= 0]
        for i in range(0, len(ids), 500):
            chunk = ids[i:i + 500]
            out.extend(self.conn.execute(
                f"SELECT doc_id, scope, vec FROM vectors WHERE memory_id=? AND seq IN "
                f"({','.join('?' * len(chunk))}) AND model=?",
                (self.memory_id, *chunk, self.index.model)).fetchall())
        return out


@dataclass(frozen=True)
class PlannedRows:
    """Candidate rows (quantised ranking and pruning done) of one query, and what they
    were computed from."""

    plan: CandidatePlan
    query: np.ndarray
    rows: np.ndarray

    def holds(self, index: VectorIndex, query: np.ndarray, scopes: tuple[str, ...], k: int,
              min_score: float) -> bool:
        """Whether these are the rows a search of ``index`` would compute now."""
        p = self.plan
        return (p.index is index and p.state == index.state() and self.query is query
                and p.scopes == scopes and p.k == k and p.min_score == min_score)


@dataclass(frozen=True)
class CandidatePlan:
    """The in-RAM part of a :meth:`IndexView.search` (quantised scores, ANN probe, pruning),
    captured in a snapshot to run on another thread once the query vector is known: recall
    runs it on the thread that embedded the query, beside its full-text reads.

    It reads the index without the store's lock, so a concurrent change may make it read a
    mix of old and new rows; every change alters :meth:`VectorIndex.state`, and
    :meth:`PlannedRows.holds` then sends the search back to computing the rows itself.
    """

    index: VectorIndex
    state: tuple[int, ...]
    scopes: tuple[str, ...]
    k: int
    min_score: float

    def run(self, query: Any) -> PlannedRows | None:
        """The planned rows for ``query`` (float32 ``[dims]``, L2-normalised), or None when
        they need a change to the index (the search then computes them in its snapshot)."""
        if query is None:
            return None
        q = np.asarray(query, dtype=np.float32)
        if q.shape != (self.index.dims,) or self.k < 1 or not self.scopes \
                or self.index.state() != self.state:
            return None
        try:
            rows = self.index.candidates(q, self.scopes, RESCORE_FACTOR * self.k
                                         + RESCORE_EXTRA, read_only=True)
            if rows is None:
                return None
            rows = self.index.prune(q, rows, self.k, self.min_score)
        except (IndexError, ValueError):  # rows changed under it: the search computes them
            return None
        return PlannedRows(self, query, rows)


class VectorCache:
    """The indexes of one store's memories (owned by the store; one per open database)."""

    def __init__(self, codec: str = "int8") -> None:
        self._indexes: dict[str, VectorIndex] = {}
        self._lock = threading.Lock()
        self.codec = codec

    def index_for(self, conn: sqlite3.Connection, memory_id: str) -> IndexView | None:
        """The current index of a memory, loading what changed (call inside a read snapshot).

        Returns:
            None when the memory has recorded no embedding model yet (no vectors).
        """
        row = conn.execute("SELECT embedding_model, dimensions, vector_epoch, vector_seq, "
                           "created_at FROM memories WHERE memory_id=?", (memory_id,)).fetchone()
        if row is None or row[0] is None:
            self.invalidate(memory_id)
            return None
        model, dims, epoch, seq = row[0], row[1], row[2], row[3]
        ident = (row[4], model, dims)  # a deleted and re-created memory starts a new index
        with self._lock:
            idx = self._indexes.get(memory_id)
            if idx is not None and idx.ident == ident and idx.seq <= seq \
                    and idx.epoch != epoch:
                _prune(conn, memory_id, idx)
                idx.epoch = epoch
                if idx.size - idx.live > COMPACT_SHARE * max(idx.size, 1):
                    idx = None
            if idx is None or idx.ident != ident or idx.seq > seq or idx.epoch != epoch:
                idx = VectorIndex(model, dims, epoch, ident=ident, codec=self.codec)
                self._indexes[memory_id] = idx
            if idx.seq < seq:
                _load(conn, memory_id, idx, seq)
            return IndexView(idx, conn, memory_id)

    def scope_size(self, conn: sqlite3.Connection, memory_id: str,
                   scopes: Sequence[str]) -> int | None:
        """Documents of the scopes that have vectors (None when the memory has none)."""
        idx = self.index_for(conn, memory_id)
        return None if idx is None else idx.count(scopes)

    def invalidate(self, memory_id: str | None = None) -> None:
        """Drops the cached index of a memory, or every index when ``memory_id`` is None."""
        with self._lock:
            if memory_id is None:
                self._indexes.clear()
            else:
                self._indexes.pop(memory_id, None)


def _prune(conn: sqlite3.Connection, memory_id: str, idx: VectorIndex) -> int:
    """Erases from RAM the rows SQLite no longer has (index-only scan of ``vectors_seq``)."""
    live = np.fromiter((r[0] for r in conn.execute(
        "SELECT seq FROM vectors WHERE memory_id=? AND seq<=?", (memory_id, idx.seq))),
        dtype=np.int64)
    return idx.erase(live)


def _load(conn: sqlite3.Connection, memory_id: str, idx: VectorIndex, seq: int) -> None:
    """Appends the rows with ``idx.seq < seq``, reserving room for all of them first."""
    new = conn.execute("SELECT count(*) FROM vectors WHERE memory_id=? AND seq>?",
                       (memory_id, idx.seq)).fetchone()[0]
    idx.reserve(new)
    cur = conn.execute("SELECT seq, scope, vec FROM vectors WHERE memory_id=? AND seq>? "
                       "AND model=? ORDER BY seq", (memory_id, idx.seq, idx.model))
    width = idx.dims * 4
    while True:
        rows: list[Any] = cur.fetchmany(8192)
        if not rows:
            break
        rows = [r for r in rows if len(r[2]) == width]  # a foreign-width row is never loaded
        vecs = np.frombuffer(b"".join(r[2] for r in rows), dtype="<f4").reshape(-1, idx.dims)
        idx.append([r[0] for r in rows], [r[1] for r in rows], vecs)
    idx.seq = seq
