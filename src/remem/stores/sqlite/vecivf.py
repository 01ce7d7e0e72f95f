"""Inverted-file ANN over the quantised rows of a ``vecindex.VectorIndex``.

Rows are grouped into ``lists`` around centroids found by spherical k-means on a sample of the
rows; a query scores the centroids, takes the rows of the nearest lists (filtered to the
caller's scopes before anything is scored) and scores them with the quantised vectors. It
holds no vectors of its own: centroids (``lists x dims`` float32), one list number per row
(int16/int32) and the rows sorted by list (int32): about 6 MB at 1M rows.

Why not a graph library (measured here, 100k x 384 clustered vectors, one thread): usearch
2.26 HNSW (i8) took 66 s of CPU to build with connectivity 16 (26 s with connectivity 8 and
expansion_add 32), holding 85 MB of its own (its own i8 copy of every vector plus the graph),
i.e. 4-11 min and ~850 MB at 1M beside our 400 MB matrix: over the memory budget, and its
Python search has no filter. Here k-means plus assignment at 100k took 16 s (wall, loaded
machine) and holds ~1 MB; no vector is stored twice.

Probing (real all-MiniLM-L6-v2 vectors of 24k bench phrases, 2 of 3 scopes allowed): 1/16 of
the lists recalled 0.968 of the exact top 10, 1/8 0.988, 1/4 0.996. On the scale bench's rows
(its 20k-phrase pool drawn 100k / 1M times, its "what <topic> involve <adj> <noun>?" queries,
every scope allowed; float scores, 150 queries) the phrases are denser: at 100k rows (316 lists)
1/8 of the lists recalled 0.887, 1/4 0.965, 1/3 0.985 (36% of the rows scored); at 1M (1,000
lists) 1/8 0.980, 1/4 0.993. Hence a quarter of the lists and at least 112: 0.985+ at both
sizes. Filing each row in its two nearest lists gave the same recall for the same rows scored
(100k: 3/16 of the lists, two lists per row: 0.984 at 34%), so it was not adopted.

Incremental: rows added after the build are kept in a tail that every query scores in full,
and are filed into their nearest lists once the tail exceeds :data:`TAIL_MAX_SHARE` of the
rows; when the rows have grown :data:`REBUILD_GROWTH` times since training the index is rebuilt.
Erasure: erased rows carry scope code -1 (never allowed) and zero vectors; the index also
remembers which rows trained the centroids, and :meth:`ClusterIndex.forget` tells the caller
to discard it when one of them is erased (a centroid of few rows could resemble one).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from remem.stores.sqlite.vecindex import VectorIndex

#: Lists: about ``sqrt(rows)``, within these bounds.
LISTS_MIN, LISTS_MAX = 32, 2048
#: Training sample: this many rows per list (at most), k-means iterations.
SAMPLE_PER_LIST, KMEANS_ITERATIONS = 40, 10
#: Lists probed: this share of the lists, at least ``PROBE_MIN``; doubled while fewer
#: in-scope rows than wanted were found.
PROBE_SHARE, PROBE_MIN = 1 / 4, 112
#: Tail rows (added since the last filing) above this share of all rows are filed into lists.
TAIL_MAX_SHARE = 0.02
#: Rebuild when the rows have grown this many times since training.
REBUILD_GROWTH = 2.0
_ASSIGN_CHUNK_ROWS = 8192


class ClusterIndex:
    """Lists of row numbers around centroids (see the module docstring).

    Attributes:
        centroids: float32 ``[lists, dims]``, L2-normalised.
        trained_rows: rows held when built (for :meth:`stale`).
        build_s: seconds the build took (wall).
    """

    def __init__(self, centroids: np.ndarray, sample: np.ndarray, trained_rows: int) -> None:
        self.centroids, self.sample, self.trained_rows = centroids, np.sort(sample), trained_rows
        self.labels = np.empty(0, dtype=np.int16 if len(centroids) < 2**15 else np.int32)
        self.order = np.empty(0, dtype=np.int32)
        self.offsets = np.zeros(len(centroids) + 1, dtype=np.int64)
        self.filed = 0  # rows [0, filed) are in the lists; [filed, size) are the tail
        self.build_s = 0.0

    @classmethod
    def build(cls, index: VectorIndex, seed: int = 0) -> ClusterIndex:
        """Trains centroids on a sample of ``index``'s live rows and files every row."""
        import time

        started = time.perf_counter()
        live = np.flatnonzero(index.scope_codes >= 0)
        lists = min(LISTS_MAX, max(LISTS_MIN, round(math.sqrt(len(live)))))
        rng = np.random.default_rng(seed)
        take = min(len(live), lists * SAMPLE_PER_LIST)
        sample = np.sort(rng.choice(live, size=take, replace=False))
        centroids = _kmeans(_unit(index.dequantised(sample)), lists, rng)
        out = cls(centroids, sample, index.size)
        out.file(index)
        out.build_s = time.perf_counter() - started
        return out

    def stale(self, index: VectorIndex) -> bool:
        """True when the rows grew :data:`REBUILD_GROWTH` times since training."""
        return index.size > REBUILD_GROWTH * max(self.trained_rows, 1)

    def file(self, index: VectorIndex) -> None:
        """Files the tail rows into their nearest lists and re-sorts the rows by list."""
        lo, hi = self.filed, index.size
        if hi <= lo:
            return
        labels = np.empty(hi, dtype=self.labels.dtype)
        labels[:lo] = self.labels[:lo]
        for start in range(lo, hi, _ASSIGN_CHUNK_ROWS):
            rows = np.arange(start, min(hi, start + _ASSIGN_CHUNK_ROWS))
            labels[rows] = _nearest(index.dequantised(rows), self.centroids)
        self.labels = labels
        order = np.argsort(labels, kind="stable").astype(np.int32)
        self._set_order(order[index.scope_codes[order] >= 0])  # erased rows are not filed
        self.filed = hi

    def _set_order(self, order: np.ndarray) -> None:
        self.order = order
        counts = np.bincount(self.labels[order], minlength=len(self.centroids))
        self.offsets = np.concatenate([[0], np.cumsum(counts)])

    def forget(self, rows: np.ndarray) -> bool:
        """Drops erased rows from the lists; False when one of them trained the centroids
        (then the caller discards this index)."""
        if np.isin(rows, self.sample).any():
            return False
        keep = ~np.isin(self.order, rows)
        if not keep.all():
            self._set_order(self.order[keep])
        return True

    def needs_filing(self, index: VectorIndex) -> bool:
        """Whether the next :meth:`candidates` files the tail first (changes this index)."""
        return index.size - self.filed > TAIL_MAX_SHARE * index.size

    def candidates(self, index: VectorIndex, query: np.ndarray, allowed: np.ndarray,
                   want: int) -> np.ndarray:
        """Row numbers of about the ``want`` best allowed rows (``allowed[scope code]``)."""
        from remem.stores.sqlite.vecindex import top_rows

        if self.needs_filing(index):
            self.file(index)
        lists = len(self.centroids)
        ranked = np.argsort(-(self.centroids @ query))
        probe = min(lists, max(PROBE_MIN, math.ceil(lists * PROBE_SHARE)))
        codes, done = index.scope_codes, 0
        found = [np.arange(self.filed, index.size)]  # the tail, scored in full
        found[0] = found[0][allowed[codes[found[0]]]]
        total = len(found[0])
        while done < lists:
            for c in ranked[done:probe]:
                rows = self.order[self.offsets[c]:self.offsets[c + 1]]
                rows = rows[allowed[codes[rows]]]
                found.append(rows)
                total += len(rows)
            done, probe = probe, min(lists, probe * 2)
            if total >= want:
                break
        rows = np.concatenate(found).astype(np.int64)
        return top_rows(rows, index.scores(query, rows), want)

    def ram_bytes(self) -> int:
        return sum(a.nbytes for a in (self.centroids, self.sample, self.labels, self.order,
                                      self.offsets))


def _unit(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms > 0, norms, 1.0)


def _kmeans(points: np.ndarray, lists: int, rng: np.random.Generator) -> np.ndarray:
    """Spherical k-means: ``lists`` unit centroids of unit ``points`` (empty lists reseeded
    from random points)."""
    lists = min(lists, len(points))
    centroids = points[rng.choice(len(points), size=lists, replace=False)].copy()
    for _ in range(KMEANS_ITERATIONS):
        labels = _nearest(points, centroids)
        counts = np.bincount(labels, minlength=lists)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        full = counts > 0
        sums = np.zeros_like(centroids)
        sums[full] = np.add.reduceat(points[np.argsort(labels, kind="stable")], starts[full],
                                     axis=0)
        empty = np.flatnonzero(~full)
        sums[empty] = points[rng.choice(len(points), size=len(empty))]
        centroids = _unit(sums)
    return centroids.astype(np.float32)


def _nearest(points: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    """Index of the nearest (highest dot product) centroid per point, in chunks."""
    out = np.empty(len(points), dtype=np.int64)
    for lo in range(0, len(points), _ASSIGN_CHUNK_ROWS):
        out[lo:lo + _ASSIGN_CHUNK_ROWS] = np.argmax(
            points[lo:lo + _ASSIGN_CHUNK_ROWS] @ centroids.T, axis=1)
    return out
