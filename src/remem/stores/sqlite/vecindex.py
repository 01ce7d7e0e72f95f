"""Exact in-process vector index per memory (numpy), cached and kept in step with SQLite.

Vectors are float32, L2-normalised, so cosine similarity is a dot product. A query multiplies
the rows of the caller's scopes by the query vector and takes the top k with ``argpartition``:
when those scopes hold under half the rows they are gathered first (row lists per scope are
cached), else the whole ``[n, dim]`` matrix is multiplied (one BLAS sgemv: about 5 ms at
100k x 384 on one thread here) and other scopes are masked. Exact, no training, no tuning;
measure before adding an ANN.

Freshness: ``memories.vector_seq`` counts inserts and each row carries its ``seq``, so a cached
index loads only rows newer than the last it saw; ``memories.vector_epoch`` bumps whenever rows
are deleted or replaced (erasure, reembed), and then the index reloads completely. Both are read
in the caller's snapshot, so a query never mixes vectors from two database states.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence

import numpy as np

class VectorIndex:
    """The vectors of one memory under one model.

    Attributes:
        model: embedding model id of every row.
        dims: vector length.
        epoch, seq: the ``memories`` counters this index reflects.
        size: rows loaded.
    """

    def __init__(self, model: str, dims: int, epoch: object) -> None:
        self.model, self.dims, self.epoch, self.seq = model, dims, epoch, 0
        self.size = 0
        self._matrix = np.empty((0, dims), dtype=np.float32)
        self._scopes = np.empty(0, dtype=np.int32)
        self._doc_ids: list[str] = []
        self._scope_code: dict[str, int] = {}
        self._rows_cache: dict[int, tuple[int, np.ndarray]] = {}

    def append(self, doc_ids: Sequence[str], scopes: Sequence[str], blob: bytes) -> None:
        """Adds rows: ``blob`` is the concatenation of ``len(doc_ids)`` float32 vectors."""
        if not doc_ids:
            return
        rows = np.frombuffer(blob, dtype="<f4").reshape(len(doc_ids), self.dims)
        need = self.size + len(doc_ids)
        if need > self._matrix.shape[0]:
            cap = max(need, 2 * self._matrix.shape[0], 1024)
            grown = np.empty((cap, self.dims), dtype=np.float32)
            grown[: self.size] = self._matrix[: self.size]
            self._matrix = grown
            codes = np.empty(cap, dtype=np.int32)
            codes[: self.size] = self._scopes[: self.size]
            self._scopes = codes
        self._matrix[self.size:need] = rows
        self._scopes[self.size:need] = [self._scope_code.setdefault(s, len(self._scope_code))
                                        for s in scopes]
        self._doc_ids.extend(doc_ids)
        self.size = need

    def search(self, query: np.ndarray, scopes: Sequence[str], k: int,
               min_score: float = -1.0) -> list[tuple[str, float, str]]:
        """Top ``k`` (doc id, cosine, scope) among rows of ``scopes`` with cosine >=
        ``min_score``.

        Args:
            query: float32 ``[dims]``, L2-normalised.
            scopes: the caller's scopes; rows of other scopes are never returned.
            k: how many to return at most.
            min_score: similarity floor.
        """
        codes = [self._scope_code[s] for s in scopes if s in self._scope_code]
        if not codes or self.size == 0 or k < 1:
            return []
        q = query.astype(np.float32, copy=False)
        if len(codes) == len(self._scope_code):
            rows = None
            scores = self._matrix[: self.size] @ q
        else:
            rows = np.concatenate([self._rows(c) for c in codes])
            if len(rows) * 2 < self.size:  # a small share: gather those rows only
                scores = self._matrix[rows] @ q
            else:
                scores = self._matrix[: self.size] @ q
                mask = np.zeros(self.size, dtype=bool)
                mask[rows] = True
                scores = np.where(mask, scores, -np.inf)
                rows = None
        if len(scores) == 0:
            return []
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        ids = top if rows is None else rows[top]
        names = list(self._scope_code)  # code -> scope (codes are insertion order)
        return [(self._doc_ids[i], float(s), names[self._scopes[i]])
                for i, s in zip(ids, scores[top], strict=True) if s >= min_score]

    def count(self, scopes: Sequence[str]) -> int:
        """Rows (documents with a vector) in the scopes."""
        return sum(len(self._rows(self._scope_code[s])) for s in scopes if s in self._scope_code)

    def _rows(self, code: int) -> np.ndarray:
        """Row numbers of one scope (cached until rows are added)."""
        cached = self._rows_cache.get(code)
        if cached is None or cached[0] != self.size:
            cached = (self.size, np.flatnonzero(self._scopes[: self.size] == code))
            self._rows_cache[code] = cached
        return cached[1]


class VectorCache:
    """The indexes of one store's memories (owned by the store; one per open database)."""

    def __init__(self) -> None:
        self._indexes: dict[str, VectorIndex] = {}
        self._lock = threading.Lock()

    def index_for(self, conn: sqlite3.Connection, memory_id: str) -> VectorIndex | None:
        """The current index of a memory, loading what changed (call inside a read snapshot).

        Returns:
            None when the memory has recorded no embedding model yet (no vectors).
        """
        row = conn.execute("SELECT embedding_model, dimensions, vector_epoch, vector_seq, "
                           "created_at FROM memories WHERE memory_id=?", (memory_id,)).fetchone()
        if row is None or row[0] is None:
            self.invalidate(memory_id)
            return None
        model, dims, seq = row[0], row[1], row[3]
        epoch = (row[4], row[2])  # a deleted and re-created memory starts a new index
        with self._lock:
            idx = self._indexes.get(memory_id)
            if idx is None or (idx.epoch, idx.model, idx.dims) != (epoch, model, dims) \
                    or idx.seq > seq:
                idx = VectorIndex(model, dims, epoch)
                self._indexes[memory_id] = idx
            if idx.seq < seq:
                _load(conn, memory_id, idx, seq)
            return idx

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


def _load(conn: sqlite3.Connection, memory_id: str, idx: VectorIndex, seq: int) -> None:
    cur = conn.execute("SELECT doc_id, scope, vec FROM vectors WHERE memory_id=? AND seq>? "
                       "AND model=? ORDER BY seq", (memory_id, idx.seq, idx.model))
    width = idx.dims * 4
    while True:
        rows = cur.fetchmany(8192)
        if not rows:
            break
        rows = [r for r in rows if len(r[2]) == width]  # a foreign-width row is never loaded
        idx.append([r[0] for r in rows], [r[1] for r in rows], b"".join(r[2] for r in rows))
    idx.seq = seq
