"""``remem bench recall``: recall latency at 10k / 100k synthetic claims.

Data: ``scopes`` user scopes, each with multi-valued topics (``likes``, ``travel_plans``, ...)
whose values are generated phrases ("hiking near quiet lakes in Lisbon"), plus a few single
keys restated over time (history) and twenty agent rules. Items are written through the real
write path (``Memory.remember``: decision, ledger, payloads, full text, vectors); embeddings
are computed in batches ahead of the writes (``prime``). A database is reused when it already
holds the requested number of items.

Measured per size, in a fresh store (cold caches): the vector index load time, then
``queries`` timed ``recall`` calls (query embedding, search, fusion, filtering and token-budget
rendering included) after a short warm-up: p50 / p95 / mean wall-clock latency, the same in
process CPU time (what the machine spends, independent of other load on a shared host; the
1-minute load average is reported too), the embedding share, the hit rate (the item a query
was made from is among the results), RSS and file size.
"""

from __future__ import annotations

import os
import random
import resource
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import remem

MEMORY = "bench"
PER_KEY = 60
TOPICS = ["likes", "dislikes", "hobbies", "goals", "projects", "skills", "travel_plans",
          "favorite_books", "favorite_movies", "favorite_foods", "owned_items", "routines",
          "health_notes", "work_tasks", "friends", "places_visited", "purchases", "courses",
          "music", "recipes"]
VERBS = ["hiking", "reading", "cooking", "painting", "visiting", "building", "learning",
         "collecting", "writing", "restoring", "photographing", "sailing", "running",
         "planting", "repairing", "studying", "baking", "sketching", "climbing", "teaching"]
ADJS = ["quiet", "old", "red", "tiny", "ancient", "modern", "wild", "green", "golden",
        "rusty", "busy", "frozen", "sunny", "hidden", "famous", "wooden", "silver", "foggy",
        "broken", "bright", "remote", "noisy", "gentle", "crowded", "elegant"]
NOUNS = ["lakes", "bicycles", "castles", "gardens", "violins", "trains", "bridges", "markets",
         "novels", "cameras", "mountains", "kitchens", "boats", "temples", "forests",
         "lighthouses", "museums", "vineyards", "islands", "canyons", "libraries", "harbors",
         "glaciers", "orchards", "bakeries", "observatories", "deserts", "clocks", "maps",
         "lanterns"]
PLACES = ["Lisbon", "Kyoto", "Oslo", "Nairobi", "Lima", "Quebec", "Hanoi", "Tbilisi",
          "Seville", "Reykjavik", "Porto", "Cusco", "Bergen", "Zanzibar", "Valparaiso",
          "Krakow", "Bruges", "Hobart", "Tallinn", "Marrakesh"]
SINGLE = {"home_city": PLACES, "employer": ["Acme", "Globex", "Initech", "Umbrella", "Hooli"],
          "diet": ["vegetarian", "vegan", "pescatarian", "omnivore"]}


def _phrase(rng: random.Random) -> tuple[str, list[str]]:
    words = [rng.choice(VERBS), rng.choice(ADJS), rng.choice(NOUNS)]
    place = rng.choice(PLACES)
    return f"{words[0]} near {words[1]} {words[2]} in {place}", [*words, place]


def _rss_mb() -> tuple[float, float]:
    current = 0.0
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                current = int(line.split()[1]) / 1024
    except OSError:
        pass
    return current, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def build(path: Path, n_items: int, scopes: int, log: Callable[[str], None] | None,
          seed: int = 7) -> dict[str, Any]:
    """Writes ``n_items`` synthetic items; returns {"items", "seconds", "targets"}."""
    rng = random.Random(seed)
    store = remem.open(path)
    # At most ~PER_KEY values per (scope, key): many scopes use the topic names as keys; few
    # scopes spread a topic over buckets (likes_0, likes_1, ...) so no single key grows huge.
    buckets = max(1, n_items // (scopes * len(TOPICS) * PER_KEY))
    keys = TOPICS if buckets == 1 else [f"{t}_{b}" for t in TOPICS for b in range(buckets)]
    config = {"keys": {k: {"cardinality": "multi", "kind": "preference"} for k in keys}}
    mem = store.create_memory(MEMORY, config)
    plan: list[tuple[str, str, str, str]] = []  # (scope, key, value, kind)
    for i in range(20):
        plan.append(("agent:bench", f"rule_{i}", f"when asked about {NOUNS[i]} answer in "
                     f"{rng.choice(['bullets', 'one sentence', 'a table'])}", "rule"))
    for s in range(scopes):
        for key, values in SINGLE.items():
            for v in rng.sample(values, 3):
                plan.append((f"user:u{s}", key, v, "profile_slot"))
    seen: set[tuple[str, str, str]] = set()
    while len(plan) < n_items:
        scope, topic = f"user:u{rng.randrange(scopes)}", rng.choice(TOPICS)
        if buckets > 1:
            topic = f"{topic}_{rng.randrange(buckets)}"
        value, _ = _phrase(rng)
        if (scope, topic, value) not in seen:
            seen.add((scope, topic, value))
            plan.append((scope, topic, value, "preference"))
    t0 = time.perf_counter()
    from remem.domain.textindex import item_text

    for start in range(0, len(plan), 512):
        chunk = plan[start:start + 512]
        mem.ctx.embedding.prime([item_text(k, v, None) for _, k, v, _ in chunk])
        for scope, key, value, kind in chunk:
            mem.remember(scope, key, value, kind=kind)
        if log and (start // 512) % 20 == 0:
            log(f"  {start + len(chunk)}/{len(plan)} items "
                f"({time.perf_counter() - t0:.0f} s)")
    store.close()
    return {"items": len(plan), "seconds": time.perf_counter() - t0}


def _queries(mem: Any, rng: random.Random, n: int, scopes: int
             ) -> list[tuple[list[str], str, str]]:
    """(scopes, query, target item id): a stored item's topic plus two words of its value."""
    out = []
    while len(out) < n:
        scope = f"user:u{rng.randrange(scopes)}"
        page = mem.items(scope=scope, kind="preference", limit=100)
        if not page.items:
            continue
        item = rng.choice(page.items)
        words = item.value.split()  # "<verb> near <adj> <noun> in <place>"
        out.append(([scope, "agent:bench"],
                    f"what {item.key.replace('_', ' ')} involve {words[2]} {words[3]}?",
                    item.item_id))
    return out


def measure(path: Path, queries: int, budget_tokens: int, scopes: int) -> dict[str, Any]:
    """Times recall on an existing database in a fresh store."""
    store = remem.open(path)
    mem = store.memory(MEMORY)
    counts = mem.status()["items"]
    emb = mem.ctx.embedding
    emb.embedder.embed_batch(["warm up"])  # model load is not index load
    t0 = time.perf_counter()
    with emb.index.read(MEMORY) as snap:
        snap.vectors(emb.embedder.embed_batch(["x"])[0], ["user:u0"], 1, -1.0)
    load_s = time.perf_counter() - t0
    rng = random.Random(11)
    work = _queries(mem, rng, queries + 20, scopes)
    for sc, q, _ in work[:20]:
        mem.recall(sc, q, budget_tokens=budget_tokens)
    lat, cpu, emb_lat, hits, truncated = [], [], [], 0, 0
    for sc, q, target in work[20:]:
        t = time.perf_counter()
        emb.embedder.embed_batch([q])
        emb_lat.append(time.perf_counter() - t)
        t, c = time.perf_counter(), time.process_time()
        r = mem.recall(sc, q, budget_tokens=budget_tokens)
        lat.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
        hits += any(i.id == target for i in r.items)
        truncated += r.truncated
    rss, peak = _rss_mb()
    store.close()
    ms = sorted(x * 1000 for x in lat)
    cpu_ms = sorted(x * 1000 for x in cpu)
    return {"items": sum(counts.values()), "index_load_s": round(load_s, 3),
            "p50_ms": round(statistics.median(ms), 2),
            "p95_ms": round(ms[int(0.95 * (len(ms) - 1))], 2),
            "mean_ms": round(statistics.fmean(ms), 2),
            "cpu_p50_ms": round(statistics.median(cpu_ms), 2),
            "cpu_p95_ms": round(cpu_ms[int(0.95 * (len(cpu_ms) - 1))], 2),
            "load_avg_1m": round(os.getloadavg()[0], 2),
            "embed_p50_ms": round(statistics.median(emb_lat) * 1000, 2),
            "hit_rate": round(hits / len(lat), 3), "truncated_rate": round(truncated / len(lat), 3),
            "rss_mb": round(rss, 1), "peak_rss_mb": round(peak, 1),
            "db_mb": round(sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))
                           / 2**20, 1),
            "queries": len(lat), "budget_tokens": budget_tokens}


def run_bench(sizes: list[int], *, out_dir: Path, queries: int = 200,
              budget_tokens: int = 1000, scopes: int = 100,
              log: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """Builds (or reuses) one database per size and measures it; returns one row per size."""
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    for n in sizes:
        path = out_dir / f"recall-{n}-{scopes}.db"
        built = None
        if not _usable(path, n):
            for old in out_dir.glob(path.name + "*"):
                old.unlink()
            if log:
                log(f"building {n} items in {path} ...")
            built = build(path, n, scopes, log)
        if log:
            log(f"measuring {n} ...")
        row = measure(path, queries, budget_tokens, scopes)
        if built:
            row["ingest_items_per_s"] = round(built["items"] / built["seconds"], 1)
        rows.append(row)
    return rows


def _usable(path: Path, n: int) -> bool:
    if not path.exists():
        return False
    try:
        store = remem.open(path)
        try:
            total = sum(store.memory(MEMORY).status()["items"].values())
        finally:
            store.close()
    except remem.RememError:
        return False
    return total >= n


def format_table(rows: list[dict[str, Any]]) -> str:
    """A Markdown table of the results."""
    cols = ["items", "p50_ms", "p95_ms", "cpu_p50_ms", "cpu_p95_ms", "embed_p50_ms",
            "index_load_s", "hit_rate", "rss_mb", "db_mb", "ingest_items_per_s", "load_avg_1m"]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        lines.append("| " + " | ".join(str(r.get(c, "-")) for c in cols) + " |")
    return "\n".join(lines)
