"""The scale bench's ANN pass: recall@k of the vector search a store uses above its exact-search
limit, against exact search over the same rows (split from :mod:`remem.bench.scale_bench`).

PostgreSQL (pgvector HNSW, m = 16, ef_construction = 64): what decides recall@10 at scale is how
often one vector is stored. pgvector folds up to 10 rows holding the same vector into one graph
element; a vector stored more often gets several identical elements, and those cost recall.
Measured 2026-12-02 on the bench pool's real MiniLM vectors (19,800 texts; 100 held-out pool
texts as queries; tie-aware; a scratch table shaped like the vectors partition, the index built
after the load in enough ``maintenance_work_mem``), recall@10 at ``ef_search`` 40 / 100 / 200 /
400:

=================================  ========  ==============  =============================
rows (texts x copies)               index     elements/text   recall@10
=================================  ========  ==============  =============================
100k (19.8k x 5)                    39 MB     1               0.99 / 1.00 / 1.00 / 1.00
198k (19.8k x 10)                   39 MB     1               1.00 / 1.00 / 1.00 / 1.00
218k (19.8k x 11)                   77 MB     2               0.96 / 0.99 / 0.99 / 0.99
218k, 64 MB build (on-disk)         77 MB     2               0.96 / 0.98 / 0.98 / -
500k (19.8k x 25)                   130 MB    3               0.84 / 0.91 / 0.95 / 0.98
500k (19.8k x 25), ef_constr. 128   120 MB    3               0.89 / 0.95 / 0.97 / 1.00
498k (49.8k x 10)                   98 MB     1               0.99 / 0.99 / 0.99 / 1.00
=================================  ========  ==============  =============================

Builds: 39 s (100k), 142 s (218k), 385 s with 64 MB (the graph stopped fitting after 28k
tuples), 249 s (500k), 522 s with ef_construction 128, 329 s (498k x 10), on a loaded machine.
The same distinct vectors, one copy more than pgvector folds (10 -> 11), lose recall; the
query shape does not matter (``hnsw.iterative_scan`` off, strict or relaxed order, relaxed
results re-sorted in a MATERIALIZED CTE, with or without the 100-scope and model filters:
identical recall in every cell). The bench's text pool (20,000 texts for any size) stores each
text ~27 times at 550k rows, hence its 0.56 / 0.78 / 0.96 at ef_search 100 / 200 / 800 there
(its queries are farther from the pool's texts than held-out pool texts). A bench whose items
repeat a text at most 10 times (a pool of at least n / 10 texts: 498k rows of 49.8k texts
score 0.99 at ef_search 40) measures the index as real memories use it; :func:`ann_pass`
reports the copies per text beside the recall.
Near-duplicates are a different case: the 500k rows with each copy moved by Gaussian noise
(sigma 0.003 per dimension, cosine ~0.998 to its text) are all distinct (a 977 MB index) and
score 0.75 / 0.84 / 0.92 / 0.96: the exact top 10 are 10 of a tight cluster of 25.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from typing import Any

#: ``hnsw.ef_search`` floors the PostgreSQL pass also measures (beside the store's own).
EF_SEARCH_PROBES = (100, 200, 400, 800)


def ann_pass(mem: Any, queries: Sequence[str], scopes: int, k: int = 10) -> dict[str, Any]:
    """Recall@k of the vector search the store uses for a scope set above its exact-search
    limit (every user scope), against exact search over the same rows, on ``queries``
    (tie-aware, see :func:`tie_aware_overlap`). SQLite's exact search is its int8 scan of
    every row rescored exactly; its ANN is built on the first query (not timed).

    On PostgreSQL also ``ann_recall_by_ef`` (recall at each :data:`EF_SEARCH_PROBES` floor)
    and ``ann_rows_per_text`` (stored vectors per distinct text; see the module docstring)."""
    if mem.store.backend == "postgres":
        from remem.stores.postgres import search as limits
        kind = "HNSW"
    else:  # the in-process index: int8 rows, inverted-file ANN, exact rescoring
        from remem.stores.sqlite import vecindex as limits
        kind = "IVF (int8, rescored)"
    scope_set = [f"user:u{i}" for i in range(scopes)]
    vecs = mem.ctx.embedding.embed(list(queries))
    limit, found, ann_ms = limits.EXACT_MAX_ROWS, 0.0, []
    by_ef: dict[int, float] = {}
    with mem.ctx.embedding.index.read(mem.id) as snap:
        snap.vectors(vecs[0], scope_set, k, -1.0)  # builds an in-process ANN (timed apart)
        for q in vecs:
            t = time.perf_counter()
            approx = snap.vectors(q, scope_set, k, -1.0)
            ann_ms.append((time.perf_counter() - t) * 1000)
            exact = _exact(limits, snap, q, scope_set, k)
            found += tie_aware_overlap(approx, exact)
            if kind == "HNSW":
                for ef, got in _probe_ef(limits, snap, q, scope_set, k).items():
                    by_ef[ef] = by_ef.get(ef, 0.0) + tie_aware_overlap(got, exact)
        copies = snap.vector_copies() if hasattr(snap, "vector_copies") else None
    n = mem.status()["items"]
    above = sum(n.values()) > limit
    out = {"ann": f"{kind} above {limit} rows" if above else f"exact (<= {limit} rows)",
           "ann_recall_at_10": round(found / len(vecs), 3) if len(vecs) else None,
           "ann_p50_ms": round(statistics.median(ann_ms), 2) if ann_ms else None}
    if kind == "HNSW" and len(vecs):
        out["ann_recall_by_ef"] = {ef: round(v / len(vecs), 3) for ef, v in by_ef.items()}
        out["ann_rows_per_text"] = round(copies, 1) if copies is not None else None
    return out


def _exact(limits: Any, snap: Any, q: Any, scope_set: list[str], k: int) -> list:
    """The exact top k (the store's exact-search limit lifted for the call)."""
    limit = limits.EXACT_MAX_ROWS
    limits.EXACT_MAX_ROWS = 10**12
    try:
        return snap.vectors(q, scope_set, k, -1.0)
    finally:
        limits.EXACT_MAX_ROWS = limit


def _probe_ef(limits: Any, snap: Any, q: Any, scope_set: list[str], k: int
              ) -> dict[int, list]:
    """PostgreSQL's approximate top k at each ``ef_search`` floor of :data:`EF_SEARCH_PROBES`."""
    floor, out = limits.EF_SEARCH_MIN, {}
    try:
        for ef in EF_SEARCH_PROBES:
            limits.EF_SEARCH_MIN = ef
            out[ef] = snap.vectors(q, scope_set, k, -1.0)
    finally:
        limits.EF_SEARCH_MIN = floor
    return out


def tie_aware_overlap(approx: Sequence[tuple[str, float, str]],
                       exact: Sequence[tuple[str, float, str]]) -> float:
    """Share of the exact top k that the approximate top k matched: a hit counts when it is one
    of the exact hits or scores (exact cosine, both backends return it) at least the exact k-th
    score. Identical texts embed identically, and with a text pool many rows tie: which of
    them fills the k-th place is arbitrary on both sides."""
    if not exact:
        return 1.0
    ids, kth = {d for d, _s, _c in exact}, exact[-1][1] - 1e-6
    return min(1.0, sum(1 for d, s, _c in approx if d in ids or s >= kth) / len(exact))
