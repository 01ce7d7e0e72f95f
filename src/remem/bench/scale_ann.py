"""The scale bench's ANN pass: recall@k of the vector search a store uses above its exact-search
limit, against exact search over the same rows (split from :mod:`remem.bench.scale_bench`)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from typing import Any


def ann_pass(mem: Any, queries: Sequence[str], scopes: int, k: int = 10) -> dict[str, Any]:
    """Recall@k of the vector search the store uses for a scope set above its exact-search
    limit (every user scope), against exact search over the same rows, on ``queries``
    (tie-aware, see :func:`tie_aware_overlap`). SQLite's exact search is its int8 scan of
    every row rescored exactly; its ANN is built on the first query (not timed)."""
    if mem.store.backend == "postgres":
        from remem.stores.postgres import search as limits
        kind = "HNSW"
    else:  # the in-process index: int8 rows, inverted-file ANN, exact rescoring
        from remem.stores.sqlite import vecindex as limits
        kind = "IVF (int8, rescored)"
    scope_set = [f"user:u{i}" for i in range(scopes)]
    vecs = mem.ctx.embedding.embed(list(queries))
    limit, found, ann_ms = limits.EXACT_MAX_ROWS, 0.0, []
    with mem.ctx.embedding.index.read(mem.id) as snap:
        snap.vectors(vecs[0], scope_set, k, -1.0)  # builds an in-process ANN (timed apart)
        for q in vecs:
            t = time.perf_counter()
            approx = snap.vectors(q, scope_set, k, -1.0)
            ann_ms.append((time.perf_counter() - t) * 1000)
            limits.EXACT_MAX_ROWS = 10**12
            try:
                exact = snap.vectors(q, scope_set, k, -1.0)
            finally:
                limits.EXACT_MAX_ROWS = limit
            found += tie_aware_overlap(approx, exact)
    n = mem.status()["items"]
    above = sum(n.values()) > limit
    return {"ann": f"{kind} above {limit} rows" if above else f"exact (<= {limit} rows)",
            "ann_recall_at_10": round(found / len(vecs), 3) if len(vecs) else None,
            "ann_p50_ms": round(statistics.median(ann_ms), 2) if ann_ms else None}


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
