"""``remem bench vecindex``: the SQLite vector index alone, at 100k and 1M rows.

For each size a SQLite file gets ``n`` random-but-clustered 384-d unit vectors (2,000 topics,
``n / 40`` subtopics; see :func:`chunks`; spread uniformly over ``scopes`` user scopes)
through the search writer (``put_vectors``: no decision, no ledger, no text). Then, in a fresh
process per codec (so RSS is the index's own):

- **load**: seconds and RSS growth to build the in-RAM index from SQLite; the index's own
  arrays (``index_mb``);
- **scope search**: ``snap.vectors`` over one user scope (``n / scopes`` rows; exact path when
  at most ``EXACT_MAX_ROWS``), p50/p95 wall and CPU ms;
- **all-scopes search**: every user scope (above the limit: the ANN), p50/p95; the ANN's build
  time on the first such query, apart;
- **recall@10** of both against exact float32 search (the vectors regenerated from the seed,
  scored in chunks, so the reference costs no RAM), and after the timing so peak RSS is the
  index's.

Queries are stored vectors plus noise (cosine ~0.8 with the row they came from). The
generator's subtopic centres (``n / 40`` x 384 float32: 38 MB at 1M) are in the peak RSS.
"""

from __future__ import annotations

import json
import math
import statistics
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import numpy as np

import remem

DIMS, MODEL, MEMORY = 384, "bench-clustered-384", "vecbench"
CHUNK = 20_000
COLUMNS = [("items", "items"), ("codec", "codec"), ("index_mb", "index MB"),
           ("load_s", "load s"), ("scope_cpu_p50_ms", "1 scope CPU p50 ms"),
           ("scope_cpu_p95_ms", "p95"), ("scope_recall_at_10", "R@10"),
           ("all_cpu_p50_ms", "all scopes CPU p50 ms"), ("all_cpu_p95_ms", "p95"),
           ("all_recall_at_10", "R@10"), ("ann_build_s", "ANN build s")]


def _unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def subtopics(n: int, seed: int, topics: int = 2000, rows_per_subtopic: int = 40) -> np.ndarray:
    """Unit centres of ``n / rows_per_subtopic`` subtopics spread over ``topics`` topics
    (cosine ~0.6 between subtopics of one topic)."""
    rng = np.random.default_rng([seed, 0])
    count = max(1, n // rows_per_subtopic)
    tops = _unit(rng.standard_normal((topics, DIMS)))
    return _unit(tops[rng.integers(0, topics, count)]
                 + 0.8 * _unit(rng.standard_normal((count, DIMS))))


def chunks(n: int, *, scopes: int, seed: int = 7
           ) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """(first row, float32 unit vectors, scope numbers) per chunk of :data:`CHUNK` rows, the
    same on every call: rows have cosine ~0.85 with their subtopic's centre (~0.7 with each
    other), like texts that restate or paraphrase each other."""
    subs = subtopics(n, seed)
    for lo in range(0, n, CHUNK):
        rng = np.random.default_rng([seed, 1, lo])
        m = min(CHUNK, n - lo)
        v = subs[rng.integers(0, len(subs), m)] + rng.standard_normal((m, DIMS)).astype(
            np.float32) * np.float32(0.62 / math.sqrt(DIMS))
        yield lo, _unit(v), rng.integers(0, scopes, m)


def fill(path: Path, n: int, scopes: int) -> float:
    """Writes the vectors of ``n`` rows into a fresh SQLite file; returns seconds."""
    path.unlink(missing_ok=True)
    started = time.perf_counter()
    store = remem.open(str(path))
    try:
        store.create_memory(MEMORY)
        adapter = store.adapter
        index = adapter.search_index
        for lo, vecs, scope_nos in chunks(n, scopes=scopes):
            with adapter.unit_of_work(MEMORY) as uow:
                w = index.writer(uow)
                w.record_embedding(MODEL, DIMS)
                w.put_vectors(MODEL, [(f"d{lo + i}", "item", f"user:u{s}", f"h{lo + i}", v)
                                      for i, (v, s) in enumerate(zip(vecs, scope_nos,
                                                                     strict=True))])
    finally:
        store.close()
    return time.perf_counter() - started


def _rss_mb(field: str = "VmRSS") -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def _queries(n: int, count: int, scopes: int, seed: int = 11) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    _lo, vecs, _s = next(chunks(n, scopes=scopes))
    picked = vecs[rng.choice(len(vecs), size=count, replace=False)]
    q = picked + rng.standard_normal(picked.shape).astype(np.float32) * np.float32(
        0.75 / math.sqrt(DIMS))
    return list(q / np.linalg.norm(q, axis=1, keepdims=True))


def _exact_top(n: int, scopes: int, queries: Sequence[np.ndarray], allowed: Sequence[set[int]],
               k: int = 10) -> list[set[str]]:
    """Exact float32 top ``k`` doc ids per query among rows whose scope is allowed."""
    qm = np.stack(queries)
    best = [(np.empty(0, np.float32), np.empty(0, np.int64)) for _ in queries]
    for lo, vecs, scope_nos in chunks(n, scopes=scopes):
        s = vecs @ qm.T
        for j, ok in enumerate(allowed):
            mask = np.isin(scope_nos, list(ok))
            sc = np.concatenate([best[j][0], s[mask, j]])
            ids = np.concatenate([best[j][1], lo + np.flatnonzero(mask)])
            keep = np.argsort(-sc)[:k]
            best[j] = (sc[keep], ids[keep])
    return [{f"d{i}" for i in b[1]} for b in best]


def _timed(snap: Any, queries: Sequence[np.ndarray], scope_sets: Sequence[list[str]],
           k: int = 10) -> tuple[list[set[str]], list[float], list[float]]:
    found, wall, cpu = [], [], []
    for q, scope_set in zip(queries, scope_sets, strict=True):
        t, c = time.perf_counter(), time.process_time()
        hits = snap.vectors(q, scope_set, k, -1.0)
        wall.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c) * 1000)
        found.append({h[0] for h in hits})
    return found, wall, cpu


def _p(values: Sequence[float], q: float) -> float:
    s = sorted(values)
    return round(s[max(0, math.ceil(q * len(s)) - 1)], 2)


def measure(path: str, n: int, scopes: int, queries: int, codec: str) -> dict[str, Any]:
    """Loads the index of ``path`` with ``codec`` and measures it (run in a fresh process)."""
    from remem.stores.sqlite.vecindex import VectorCache

    qs = _queries(n, queries, scopes)
    store = remem.open(path)
    try:
        index = store.adapter.search_index
        index.cache = VectorCache(codec=codec)
        before = _rss_mb()
        with index.read(MEMORY) as snap:
            t = time.perf_counter()
            view = index.cache.index_for(snap.conn, MEMORY)
            load_s = time.perf_counter() - t
            grown = _rss_mb() - before
            one = [[f"user:u{i % scopes}"] for i in range(len(qs))]
            every = [f"user:u{i}" for i in range(scopes)]
            _timed(snap, qs[:3], one[:3])  # warm-up
            t = time.perf_counter()
            snap.vectors(qs[0], every, 10, -1.0)  # builds the ANN when above the limit
            first_all_s = time.perf_counter() - t
            scope_found, scope_ms, scope_cpu = _timed(snap, qs, one)
            all_found, all_ms, all_cpu = _timed(snap, qs, [every] * len(qs))
            ann = view.index.ann
            index_mb = view.index.ram_bytes() / 2**20
        peak = _rss_mb("VmHWM")
    finally:
        store.close()
    exact_one = _exact_top(n, scopes, qs, [{i % scopes} for i in range(len(qs))])
    exact_all = _exact_top(n, scopes, qs, [set(range(scopes))] * len(qs))
    recall = (lambda got, ref: round(statistics.fmean(
        len(g & r) / max(1, len(r)) for g, r in zip(got, ref, strict=True)), 4))
    return {"items": n, "codec": codec, "load_s": round(load_s, 2),
            "index_mb": round(index_mb, 1), "rss_growth_mb": round(grown, 1),
            "peak_rss_mb": round(peak, 1), "scope_rows": n // scopes,
            "scope_p50_ms": _p(scope_ms, 0.5), "scope_p95_ms": _p(scope_ms, 0.95),
            "scope_cpu_p50_ms": _p(scope_cpu, 0.5), "scope_cpu_p95_ms": _p(scope_cpu, 0.95),
            "scope_recall_at_10": recall(scope_found, exact_one),
            "all_p50_ms": _p(all_ms, 0.5), "all_p95_ms": _p(all_ms, 0.95),
            "all_cpu_p50_ms": _p(all_cpu, 0.5), "all_cpu_p95_ms": _p(all_cpu, 0.95),
            "all_recall_at_10": recall(all_found, exact_all),
            "first_all_query_s": round(first_all_s, 2),
            "ann_build_s": round(ann.build_s, 2) if ann is not None else None,
            "ann_lists": len(ann.centroids) if ann is not None else None}


def run_vecindex(sizes: Sequence[int], *, out_dir: Path, scopes: int = 100,
                 queries: int = 50, codecs: Sequence[str] = ("int8", "float16"),
                 log: Any = print) -> dict[str, Any]:
    """Fills one file per size and measures each codec in its own process; writes
    ``results.json`` in ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    for n in sizes:
        path = out_dir / f"vecindex-{n}.db"
        fill_s = fill(path, n, scopes)
        log(f"{n} rows written in {fill_s:.1f} s")
        for codec in codecs:
            with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn")) as child:
                row = child.submit(measure, str(path), n, scopes, queries, codec).result()
            rows.append({**row, "fill_s": round(fill_s, 1)})
            log(json.dumps(rows[-1]))
    doc = {"settings": {"scopes": scopes, "queries": queries, "dims": DIMS}, "rows": rows}
    (out_dir / "results.json").write_text(json.dumps(doc, indent=2))
    return doc


def rich_table(doc: dict[str, Any]) -> Any:
    from remem.bench.metrics import rows_table

    return rows_table(f"remem vector index (SQLite, {doc['settings']['scopes']} user scopes, "
                      f"{doc['settings']['dims']}-d clustered vectors)", COLUMNS, doc["rows"])
