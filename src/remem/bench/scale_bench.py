"""``remem bench scale``: what remem costs at 10k, 100k (and 1M) items.

For each size a fresh memory is filled with synthetic claims spread over ``scopes`` user scopes
(multi-valued topics such as ``likes`` or ``travel_plans`` whose values are generated phrases,
"hiking near quiet lakes in Lisbon", plus a few single-valued keys restated over time), all
through the public write path (``Memory.remember``: decision, ledger, payloads, full text,
vector). Each size runs in its own process, so its RSS is its own.

Measured per size:

- **write throughput, batched**: all but the last ``single_sample`` items, in chunks of
  ``batch_size``. With
  ``Memory.remember_many`` (when the API has it) one call per chunk; without it the texts of a
  chunk are embedded in one model call (``prime``) and each item is still its own
  ``remember`` transaction. Which path ran is recorded (``batch_api``), and the embedding and
  write shares are timed apart.
- **text pool**: with ``pool`` (the CLI's ``--text-pool``, 20,000 by default) the pool's
  vectors are embedded once per run and cached in the out dir (``pool-<digest>.npy``, the
  digest over model id, dimensions and texts); every size's process loads them
  (``pool_vectors``: "embedded" or "loaded from cache"). A long size logs a progress line per
  ~5% of its items (rate, wall and CPU seconds).
- **write throughput, single**: the last ``single_sample`` items, into the nearly full memory,
  one ``remember`` per transaction, each embedding its own text (one model call per item):
  what an agent writing one fact at a time gets at that size.
- **recall latency**: in a freshly opened store (cold caches; the vector index load is timed
  apart), ``queries`` timed ``Memory.recall`` calls after a warm-up, each over one user scope
  plus the agent scope: query embedding, search, fusion, filtering and budgeted rendering.
  p50 / p95 / mean (ms) and the hit rate (the item a query was made from is returned).
- **size on disk**: SQLite file + WAL; PostgreSQL ``pg_database_size`` (the whole database;
  earlier ``scale-*`` bench memories in it are deleted before each size).
- **RSS**: current and peak resident set of the process (the client process only for
  PostgreSQL; the server's memory is not included).

The goal checked (``growth``): recall p95 grows at most 3x per 10x items, i.e.
``(p95[i] / p95[i-1]) ** (1 / log10(n[i] / n[i-1])) <= 3`` (a size stopped early counts at
the items it holds).

Measured (2026-12-01, SQLite, 2 cores shared by five engineers, load 6-13, ``nice -n 5``; CPU
figures are the comparable ones, wall ones are mostly waiting for a core):

- bulk load, ``remember_many`` of 100k items (pool 20,000), before and after batching the
  search writer, the read-model rows, an ASCII path through the full-text rewrite and a
  faster canonical-JSON check, both runs at once: 503 -> 726 items per CPU-second
  (198.7 -> 137.8 s CPU); same rows (``tests/contract/test_bulk_*_identity.py``).
- ``--items 10000,100000,1000000 --serve`` (the 1M size stopped by ``STOP`` at 338,408 items
  after 62 min wall; 846 s CPU for the whole run): batched writes 698 / 616 / 634 items per
  CPU-second; recall CPU p50/p95 20.5/23.7, 24.4/27.1, 30.2/37.9 ms (wall p95 98, 234, 63 ms:
  scheduler waits); DB 43 / 435 / 1,474 MB; ``remem serve`` peak RSS 439 / 477 / 562 MB; ANN
  R@10 (IVF above 10k rows) 0.926 at 100k, 0.98 at 338k. The 1M write rate fell from ~750 to
  ~550 items per CPU-second between 50k and 300k items: 1M extrapolates to ~1,900 s CPU of
  writes and ~37 min CPU for the whole run on an idle core (over the 30 min goal).
- ``remem serve`` over 1,000,000 vectors (the 100k database's vectors copied 9 times; 100k
  items), after 50 HTTP recalls: RSS 824 MB, peak 942 MB (goal <= 1.5 GB).
- Why the bulk write rate falls (2026-12-02, SQLite, three 150k loads run side by side, so
  under the same load, 8-10 on 2 cores; items per CPU-second per 25k window): before
  950/782/605/581/560/532; with the 64 MiB page cache 1010/875/686/648/634/559; with the
  cache and the batch-deferred WAL checkpoint 1033/899/709/661/638/546. Whole load: 237 ->
  212 CPU-s (user 191 -> 196, system 46 -> 16) and 11.0 -> 6.3 GiB written. The system
  time (page copies, writes) was the part that grew with the file, and it is gone; the user
  time per item still grows (24 -> 40 s per 25k from 25k to 150k, the same with and without
  the settings: B-tree work inside SQLite and the Python around it), so the rate still
  falls, by the same curve in user CPU. Not FTS5 merging: two 100k loads side by side with
  FTS5 ``automerge`` 4 (the default) and 16 took 124 and 123 CPU-s, the same per window.
- The cause (2026-12-02, SQLite, a 300,032-item file of this plan, then 10,240 more items
  timed per variant on a scratch copy, one run each, load 7-9 on 2 cores, ``nice -n 5``):
  the claim lookup of each multi-key decision (``Writer._projection``: items WHERE memory_id,
  claim_id, scope, key) was planned on ``items_key`` (three equality columns beat
  ``items_claim``'s two when there are no statistics), so every write read all items of its
  (scope, key): ~150 rows at 300k, ~500 at 1M. A profile put 73 of 172 s in that read.
  Items per CPU-second (user + system CPU-s): as it was 439 (19.3 + 4.0); page cache 1 GiB
  505 (19.0 + 1.3); ``items_claim`` dropped 414, ``items_status`` dropped 412 (random-key
  index inserts are not the cost); ``items_claim`` on (memory_id, claim_id, scope, key)
  (SQLite migration 016) 1060 (8.5 + 1.1), and with a 1 GiB cache on top 930 (within the
  noise: not adopted; the 64 MiB cache stays). The old load fell 1093/915/658/570/555 items
  per CPU-second per 50k window to 250k; with 016 the rate at 300k is the rate at 50k.
"""

from __future__ import annotations

import json
import math
import random
import resource
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import remem
from remem.bench.scale_ann import ann_pass
from remem.bench.scale_pg import BulkLoad

MEMORY_PREFIX = "scale"
#: A file of this name in the out dir makes the size being written stop writing at the next
#: chunk and be measured at what it holds (``items_stored``; ``stopped_early``).
STOP_FILE = "STOP"
P95_GROWTH_GOAL = 3.0
TOPICS = ("likes", "dislikes", "hobbies", "goals", "projects", "skills", "travel_plans",
          "favorite_books", "favorite_movies", "favorite_foods", "owned_items", "routines",
          "health_notes", "work_tasks", "friends", "places_visited", "purchases", "courses",
          "music", "recipes")
VERBS = ("hiking", "reading", "cooking", "painting", "visiting", "building", "learning",
         "collecting", "writing", "restoring", "photographing", "sailing", "running",
         "planting", "repairing", "studying", "baking", "sketching", "climbing", "teaching")
ADJS = ("quiet", "old", "red", "tiny", "ancient", "modern", "wild", "green", "golden",
        "rusty", "busy", "frozen", "sunny", "hidden", "famous", "wooden", "silver", "foggy",
        "broken", "bright", "remote", "noisy", "gentle", "crowded", "elegant")
NOUNS = ("lakes", "bicycles", "castles", "gardens", "violins", "trains", "bridges", "markets",
         "novels", "cameras", "mountains", "kitchens", "boats", "temples", "forests",
         "lighthouses", "museums", "vineyards", "islands", "canyons", "libraries", "harbors",
         "glaciers", "orchards", "bakeries", "observatories", "deserts", "clocks", "maps",
         "lanterns")
PLACES = ("Lisbon", "Kyoto", "Oslo", "Nairobi", "Lima", "Quebec", "Hanoi", "Tbilisi",
          "Seville", "Reykjavik", "Porto", "Cusco", "Bergen", "Zanzibar", "Valparaiso",
          "Krakow", "Bruges", "Hobart", "Tallinn", "Marrakesh")
SINGLE = {"home_city": PLACES, "employer": ("Acme", "Globex", "Initech", "Umbrella", "Hooli"),
          "diet": ("vegetarian", "vegan", "pescatarian", "omnivore")}
CONFIG = {"keys": {t: {"cardinality": "multi", "kind": "preference"} for t in TOPICS}}

Claim = tuple[str, str, str, str]  # (scope, key, value, kind)
Log = Callable[[str], None]


def text_pool(size: int, seed: int = 3) -> list[tuple[str, str]]:
    """``size`` distinct (topic, phrase) pairs: the texts a bulk load embeds, once each."""
    rng = random.Random(seed)
    pool: dict[tuple[str, str], None] = {}
    while len(pool) < size:
        pool[(rng.choice(TOPICS), f"{rng.choice(VERBS)} near {rng.choice(ADJS)} "
                                  f"{rng.choice(NOUNS)} in {rng.choice(PLACES)}")] = None
    return list(pool)


def plan_claims(n: int, scopes: int, seed: int = 7, pool: int | None = None) -> list[Claim]:
    """``n`` distinct synthetic claims: 20 agent rules, 3 restated values of each single key per
    user scope, the rest multi-valued topic phrases in random user scopes. With ``pool``, the
    phrases come from ``text_pool(pool)`` (many users share a liking, as real users do), so a
    bulk load embeds at most ``pool`` distinct texts whatever ``n`` is."""
    rng = random.Random(seed)
    shared = text_pool(pool) if pool else None
    plan: list[Claim] = [("agent:bench", f"rule_{i}", f"when asked about {NOUNS[i]} answer in "
                          f"{rng.choice(['bullets', 'one sentence', 'a table'])}", "rule")
                         for i in range(20)]
    for s in range(scopes):
        for key, values in SINGLE.items():
            plan += [(f"user:u{s}", key, v, "profile_slot") for v in rng.sample(values, 3)]
    seen: set[tuple[str, str, str]] = set()
    while len(plan) < n:
        scope, topic = f"user:u{rng.randrange(scopes)}", rng.choice(TOPICS)
        if shared is not None:
            topic, value = shared[rng.randrange(len(shared))]
        else:
            value = (f"{rng.choice(VERBS)} near {rng.choice(ADJS)} {rng.choice(NOUNS)} in "
                     f"{rng.choice(PLACES)}")
        if (scope, topic, value) not in seen:
            seen.add((scope, topic, value))
            plan.append((scope, topic, value, "preference"))
    return plan[:n]


def _rss_mb() -> tuple[float, float]:
    """(current, peak) resident set size of this process in MiB."""
    current = 0.0
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                current = int(line.split()[1]) / 1024
    except OSError:
        pass
    return current, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _fresh_memory(store: Any, memory_id: str) -> Any:
    """A new memory; every earlier bench memory in the database is deleted first, so the size
    on disk of a shared PostgreSQL database is this size's alone."""
    for m in store.list_memories():
        if m["memory_id"].startswith(f"{MEMORY_PREFIX}-"):
            store.delete_memory(m["memory_id"])
    return store.create_memory(memory_id, CONFIG)


def spread(plan: Sequence[Claim], batch_size: int) -> list[list[Claim]]:
    """The plan in chunks of ``batch_size`` in which no text repeats (a repeated text would be
    embedded again inside the write: precomputed vectors are handed over once per chunk).
    Each claim goes to the first open chunk after the last one holding its text."""
    from remem.domain.textindex import item_text

    chunks: list[list[Claim]] = []
    last: dict[str, int] = {}
    low = 0  # first chunk that is not full
    for c in plan:
        t = item_text(c[1], c[2], None)
        j = max(low, last.get(t, -1) + 1)
        while j < len(chunks) and len(chunks[j]) >= batch_size:
            j += 1
        while j >= len(chunks):
            chunks.append([])
        chunks[j].append(c)
        last[t] = j
        while low < len(chunks) and len(chunks[low]) >= batch_size:
            low += 1
    return chunks


def pool_vectors(mem: Any, pool: int, cache_dir: Path | None,
                 log: Log | None = None) -> tuple[dict[str, Any], bool]:
    """``{text: vector}`` of ``text_pool(pool)`` under the memory's embedder, and whether it
    came from ``cache_dir/pool-<digest of model, dimensions, texts>.npy`` (a run embeds the
    pool once; every size loads it). ``cache_dir`` None: embedded, nothing written."""
    import hashlib

    import numpy as np

    from remem.domain.textindex import item_text

    texts = [item_text(k, v, None) for k, v in text_pool(pool)]
    e = mem.ctx.embedding.embedder
    key = hashlib.sha256("\n".join([e.model_id, str(e.dimensions), *texts]).encode()
                         ).hexdigest()[:16]
    path = cache_dir / f"pool-{key}.npy" if cache_dir is not None else None
    if path is not None and path.exists():
        vecs = np.load(path)
        if vecs.shape == (len(texts), e.dimensions):
            return dict(zip(texts, vecs, strict=True)), True
    parts = []
    for start in range(0, len(texts), 256):
        parts.append(mem.ctx.embedding.embed(texts[start:start + 256]))
        if log and (start // 256) % 16 == 15:
            log(f"  embedded {start + 256}/{len(texts)} pool texts")
    vecs = np.concatenate(parts).astype(np.float32)
    if path is not None:
        tmp = path.with_suffix(".tmp.npy")
        np.save(tmp, vecs)
        tmp.replace(path)
    return dict(zip(texts, vecs, strict=True)), False


class _Progress:
    """A log line per ~5% of the items: done, rate and CPU so far, and the rate, user and
    system CPU seconds of the last window (where a long load's time goes as the file grows)."""

    def __init__(self, total: int, log: Log | None) -> None:
        self.total, self.log, self.next = total, log, max(1, total // 20)
        self.t0, self.cpu0 = time.perf_counter(), time.process_time()
        self.last = (0, self.t0, *_cpu_split())

    def __call__(self, done: int) -> None:
        if self.log is None or done < self.next:
            return
        now, (user, system) = time.perf_counter(), _cpu_split()
        wall, cpu = now - self.t0, time.process_time() - self.cpu0
        d0, t0, u0, s0 = self.last
        self.log(f"  {done}/{self.total} items ({100 * done // self.total}%): "
                 f"{done / wall:.0f} items/s, {wall:.0f} s wall, {cpu:.0f} s CPU; last "
                 f"{done - d0}: {(done - d0) / (now - t0):.0f} items/s, {now - t0:.0f} s "
                 f"wall, {user - u0:.0f} s user + {system - s0:.0f} s system CPU")
        self.last = (done, now, user, system)
        self.next = (done // max(1, self.total // 20) + 1) * max(1, self.total // 20)


def _cpu_split() -> tuple[float, float]:
    """(user, system) CPU seconds of this process so far."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime, r.ru_stime


def _write(mem: Any, plan: Sequence[Claim], single_sample: int, batch_size: int,
           log: Log | None, pooled: bool = False, pool: int | None = None,
           cache_dir: Path | None = None) -> dict[str, Any]:
    """Writes the plan (batched, then the last ``single_sample`` one at a time); returns the
    throughput figures. ``pooled``: the plan's texts repeat (``plan_claims(pool=...)``), so
    each text of the pool is embedded once per run (``pool_vectors``, cached in
    ``cache_dir``; timed as ``batched_embed_s``, 0 when loaded) and handed to the writes
    (``EmbeddingService.preload``); every item still goes through ``remember_many``:
    decision, ledger, payloads, full text, vector."""
    from remem.domain.textindex import item_text

    many = getattr(mem, "remember_many", None)
    rest, single = plan[:len(plan) - single_sample], plan[len(plan) - single_sample:]
    embed_s = write_s = 0.0
    cpu0 = time.process_time()
    vectors: dict[str, Any] = {}
    cached = False
    if pooled:
        t = time.perf_counter()
        vectors, cached = pool_vectors(mem, pool or len(rest), cache_dir, log)
        embed_s = time.perf_counter() - t
        if log:
            log(f"  pool of {len(vectors)} texts {'loaded' if cached else 'embedded'} "
                f"in {embed_s:.1f} s")
        embed_s = 0.0 if cached else embed_s
        t = time.perf_counter()  # the rules and single-key values outside the pool
        others = list(dict.fromkeys(x for x in (item_text(k, v, None) for _, k, v, _ in rest)
                                    if x not in vectors))
        for start in range(0, len(others), 256):
            part = others[start:start + 256]
            vectors.update(zip(part, mem.ctx.embedding.embed(part), strict=True))
        embed_s += time.perf_counter() - t
    progress = _Progress(len(plan), log)
    chunks = spread(rest, batch_size) if pooled else [
        list(rest[i:i + batch_size]) for i in range(0, len(rest), batch_size)]
    done, written = 0, []
    stop = cache_dir / STOP_FILE if cache_dir is not None else None
    bulk = BulkLoad(mem.store, mem.id, log).__enter__()  # PostgreSQL: index built at the end
    for chunk in chunks:
        if stop is not None and stop.exists():  # an operator cut the size short: measure it
            if log:
                log(f"  {STOP_FILE} found: writes stop at {done} items")
            break
        t = time.perf_counter()
        if pooled:
            texts = [item_text(k, v, None) for _, k, v, _ in chunk]
            mem.ctx.embedding.preload(texts, [vectors[x] for x in texts])
        if many is not None:
            many([{"scope": s, "key": k, "value": v, "kind": kd} for s, k, v, kd in chunk])
            write_s += time.perf_counter() - t
        else:
            mem.ctx.embedding.prime([item_text(k, v, None) for _, k, v, _ in chunk])
            t1 = time.perf_counter()
            embed_s += t1 - t
            for scope, key, value, kind in chunk:
                mem.remember(scope, key, value, kind=kind)
            write_s += time.perf_counter() - t1
        done += len(chunk)
        written += chunk
        progress(done)
    bulk.__exit__(None, None, None)
    write_s += bulk.build_s
    batched_s = embed_s + write_s
    batched_cpu_s = time.process_time() - cpu0
    t0 = time.perf_counter()
    for scope, key, value, kind in single:
        mem.remember(scope, key, value, kind=kind)
    single_s = time.perf_counter() - t0
    return {
        "single_items": len(single),
        "single_items_per_s": round(len(single) / single_s, 1) if single_s else None,
        "batched_items": done,
        "batched_items_per_s": round(done / batched_s, 1) if batched_s else None,
        "batched_cpu_s": round(batched_cpu_s, 1),
        "batch_size": batch_size,
        "batch_api": ("remember_many" if many is not None else
                      "none: one embedding call per chunk (prime), one remember transaction "
                      "per item") + (", pooled texts embedded once" if pooled else ""),
        "distinct_texts": len({item_text(k, v, None) for _, k, v, _ in rest}) if pooled
        else None,
        "pool_vectors": ("loaded from cache" if cached else "embedded") if pooled else None,
        "batched_embed_s": round(embed_s, 2) if (many is None or pooled) else None,
        "batched_write_s": round(write_s, 2),
        "index_build_s": round(bulk.build_s, 2),
        "write_s": round(single_s + batched_s, 2),
        "_written": written + list(single)}


def _db_mb(url: str, memory_path: Path | None) -> float:
    if memory_path is not None:
        return sum(p.stat().st_size for p in memory_path.parent.glob(memory_path.name + "*")
                   ) / 2**20
    import psycopg

    with psycopg.connect(url) as conn:
        return conn.execute("SELECT pg_database_size(current_database())").fetchone()[0] / 2**20


def _recall(url: str, memory_id: str, plan: Sequence[Claim], scopes: int, queries: int,
            budget_tokens: int) -> dict[str, Any]:
    """Times recall in a freshly opened store."""
    rng = random.Random(11)
    targets = [c for c in plan if c[3] == "preference"]
    work = []
    for _ in range(queries + 20):
        scope, key, value, _ = rng.choice(targets)
        words = value.split()  # "<verb> near <adj> <noun> in <place>"
        work.append((scope, f"what {key.replace('_', ' ')} involve {words[2]} {words[3]}?",
                     value))
    store = remem.open(url)
    try:
        mem = store.memory(memory_id)
        t0 = time.perf_counter()
        mem.recall(["user:u0", "agent:bench"], "warm up", budget_tokens=budget_tokens)
        first_s = time.perf_counter() - t0  # model + vector index load
        for scope, q, _ in work[:20]:
            mem.recall([scope, "agent:bench"], q, budget_tokens=budget_tokens)
        lat, cpu, hits, truncated = [], [], 0, 0
        for scope, q, value in work[20:]:
            t, c = time.perf_counter(), time.process_time()
            r = mem.recall([scope, "agent:bench"], q, budget_tokens=budget_tokens)
            lat.append((time.perf_counter() - t) * 1000)
            cpu.append((time.process_time() - c) * 1000)
            hits += any(i.value == value for i in r.items)
            truncated += r.truncated
        ann = ann_pass(mem, [w[1] for w in work[20:70]], scopes)
    finally:
        store.close()
    ms, cms = sorted(lat), sorted(cpu)
    return {"first_recall_s": round(first_s, 3), "p50_ms": round(statistics.median(ms), 2),
            "p95_ms": round(ms[max(0, math.ceil(0.95 * len(ms)) - 1)], 2),
            "cpu_p50_ms": round(statistics.median(cms), 2),
            "cpu_p95_ms": round(cms[max(0, math.ceil(0.95 * len(cms)) - 1)], 2), **ann,
            "mean_ms": round(statistics.fmean(ms), 2), "queries": len(ms),
            "hit_rate": round(hits / len(ms), 3), "truncated_rate": round(truncated / len(ms), 3),
            "budget_tokens": budget_tokens}


def _serve_rss(url: str, memory_id: str, queries: Sequence[tuple[str, str]],
               budget_tokens: int) -> dict[str, Any]:
    """Peak RSS of a real ``remem serve`` process on the database after it answered
    ``queries`` (scope, text) over HTTP (the vector index loaded, the model loaded)."""
    import httpx

    from remem.service.tokens import Tokens
    from remem.testing.served import Server

    store = remem.open(url)
    try:
        token, _ = Tokens(store).create(memory_id, "admin", "admin", label="scale-bench")
    finally:
        store.close()
    with Server(url) as server:
        head = {"Authorization": f"Bearer {token}"}
        for scope, q in queries:
            httpx.post(f"{server.base}/memory/{memory_id}/recall", headers=head, timeout=120,
                       json={"scopes": [scope, "agent:bench"], "query": q,
                             "budget_tokens": budget_tokens}).raise_for_status()
        status = Path(f"/proc/{server.proc.pid}/status").read_text()
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    return {"serve_rss_mb": round(int(fields["VmRSS"].split()[0]) / 1024, 1),
            "serve_peak_rss_mb": round(int(fields["VmHWM"].split()[0]) / 1024, 1)}


def measure_size(n: int, *, db: str | None, out_dir: str, scopes: int, queries: int,
                 budget_tokens: int, single_sample: int, batch_size: int,
                 verbose: bool = True, pool: int | None = None,
                 serve: bool = False) -> dict[str, Any]:
    """Builds and measures one size (run in a child process; see :func:`run_scale`)."""
    def log(msg: str) -> None:
        if verbose:
            print(msg, file=sys.stderr, flush=True)

    path = None
    if db is None:
        path = Path(out_dir) / f"scale-{n}.db"
        for old in path.parent.glob(path.name + "*"):
            old.unlink()
        url = str(path)
    else:
        url = db
    memory_id = f"{MEMORY_PREFIX}-{n}"
    plan = plan_claims(n, scopes, pool=pool)
    store = remem.open(url)
    try:
        mem = _fresh_memory(store, memory_id)
        mem.ctx.embedding.embedder.embed_batch(["warm up"])  # model load is not write time
        log(f"writing {n} items into {'PostgreSQL' if path is None else path} ...")
        writes = _write(mem, plan, min(single_sample, n), batch_size, log,
                        pooled=bool(pool), pool=pool, cache_dir=Path(out_dir))
        items = sum(mem.status()["items"].values())
    finally:
        store.close()
    written = writes.pop("_written")
    stopped = len(written) < n
    if stopped:  # recall is asked about what was written
        plan = written
    log(f"measuring recall at {n} ...")
    row = {"items": n, "items_stored": items, "scopes": scopes,
           "stopped_early": stopped,
           "backend": "sqlite" if path is not None else "postgres", **writes,
           **_recall(url, memory_id, plan, scopes, queries, budget_tokens)}
    row["db_mb"] = round(_db_mb(url, path), 1)
    row["rss_mb"], row["peak_rss_mb"] = (round(x, 1) for x in _rss_mb())
    if serve:
        log(f"measuring remem serve at {n} ...")
        rng = random.Random(13)
        picks = [rng.choice(plan) for _ in range(50)]
        row.update(_serve_rss(url, memory_id, [(c[0], f"what {c[1].replace('_', ' ')} "
                                                f"{c[2].split()[0]}") for c in picks],
                              budget_tokens))
    (Path(out_dir) / f"row-{n}.json").write_text(json.dumps(row, indent=2) + "\n",
                                                 encoding="utf-8")  # kept if a later size fails
    return row


def growth(rows: Sequence[dict[str, Any]], field: str = "p95_ms") -> list[dict[str, Any]]:
    """Per consecutive pair of sizes: the factor ``field`` grew by per 10x items."""
    out = []
    for a, b in zip(rows, rows[1:], strict=False):
        decades = math.log10(_held(b) / _held(a))
        ratio = b[field] / a[field] if a[field] else float("inf")
        per_10x = ratio ** (1 / decades) if decades > 0 else float("nan")
        out.append({"from": _held(a), "to": _held(b), "field": field,
                    "ratio": round(ratio, 2), "per_10x": round(per_10x, 2),
                    "goal_per_10x": P95_GROWTH_GOAL, "ok": per_10x <= P95_GROWTH_GOAL})
    return out


def _held(row: dict[str, Any]) -> int:
    """The items a row was measured at: those stored when its writes were stopped early."""
    return row["items_stored"] if row.get("stopped_early") else row["items"]


def run_scale(sizes: Sequence[int], *, db: str | None = None,
              out_dir: Path = Path("bench-out/scale"), scopes: int = 100, queries: int = 200,
              budget_tokens: int = 1000, single_sample: int = 1000, batch_size: int = 512,
              verbose: bool = True, pool: int | None = None,
              serve: bool = False) -> dict[str, Any]:
    """Measures every size, each in a fresh process; writes ``results.json`` and ``scale.png``.

    Args:
        sizes: item counts, e.g. (10_000, 100_000).
        db: a ``postgresql://`` URL, or None for one SQLite file per size in ``out_dir``.
        scopes: user scopes the items spread over.
        queries: timed recalls per size.
        single_sample: the last items, written one ``remember`` at a time after the batches.
        pool: draw the topic phrases from this many distinct texts (each embedded once); None:
            every phrase distinct (one embedding per item).
        serve: also measure a real ``remem serve`` process's RSS after 50 HTTP recalls.

    Returns:
        ``{"rows": [...], "growth": [...], "settings": {...}}``.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    for n in sorted(set(sizes)):
        with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn")) as child:
            rows.append(child.submit(
                measure_size, n, db=db, out_dir=str(out_dir), scopes=scopes, queries=queries,
                budget_tokens=budget_tokens, single_sample=single_sample,
                batch_size=batch_size, verbose=verbose, pool=pool, serve=serve).result())
    doc = {"benchmark": "scale", "rows": rows, "growth": growth(rows),
           "settings": {"scopes": scopes, "queries": queries, "budget_tokens": budget_tokens,
                        "single_sample": single_sample, "batch_size": batch_size,
                        "text_pool": pool, "serve": serve,
                        "backend": "postgres" if db else "sqlite"}}
    (out_dir / "results.json").write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    plot_scale(doc, out_dir / "scale.png")
    return doc


COLUMNS = (("items", "items"), ("single_items_per_s", "remember/s single"),
           ("batched_items_per_s", "remember/s batched"), ("p50_ms", "recall p50 ms"),
           ("p95_ms", "recall p95 ms"), ("cpu_p95_ms", "recall p95 CPU ms"),
           ("hit_rate", "hit rate"), ("ann_recall_at_10", "ANN R@10"), ("db_mb", "DB MB"),
           ("rss_mb", "RSS MB"), ("peak_rss_mb", "peak RSS MB"),
           ("serve_peak_rss_mb", "serve peak RSS MB"))


def markdown_table(doc: dict[str, Any]) -> str:
    lines = ["| " + " | ".join(h for _, h in COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for r in doc["rows"]:
        lines.append("| " + " | ".join(str(r.get(c, "-")) for c, _ in COLUMNS) + " |")
    for g in doc["growth"]:
        lines.append(f"\nrecall p95 {g['from']} -> {g['to']}: x{g['ratio']} "
                     f"(x{g['per_10x']} per 10x items; goal <= x{g['goal_per_10x']}: "
                     f"{'met' if g['ok'] else 'NOT met'})")
    return "\n".join(lines)


def rich_table(doc: dict[str, Any]) -> Any:
    from remem.bench.metrics import rows_table

    return rows_table(f"remem scale ({doc['settings']['backend']}, "
                      f"{doc['settings']['scopes']} user scopes)", COLUMNS, doc["rows"])


def plot_scale(doc: dict[str, Any], path: Path) -> None:
    """A PNG of cost growth: recall latency, write throughput, size on disk and RSS vs items."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = doc["rows"]
    xs = [r["items"] for r in rows]
    fig, axes = plt.subplots(2, 2, figsize=(10, 7))
    panels = [
        (axes[0][0], "recall latency (ms)", [("p50_ms", "p50"), ("p95_ms", "p95")], True),
        (axes[0][1], "remember throughput (items/s)",
         [("single_items_per_s", "single"), ("batched_items_per_s", "batched")], False),
        (axes[1][0], "size on disk (MiB)", [("db_mb", "database")], True),
        (axes[1][1], "RSS (MiB)", [("rss_mb", "current"), ("peak_rss_mb", "peak")], False),
    ]
    for ax, title, series, logy in panels:
        for field, label in series:
            ys = [r.get(field) or 0 for r in rows]
            ax.plot(xs, ys, marker="o", label=label)
        ax.set_xscale("log")
        if logy:
            ax.set_yscale("log")
        ax.set_title(title)
        ax.set_xlabel("items")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(f"remem cost growth ({doc['settings']['backend']})", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
