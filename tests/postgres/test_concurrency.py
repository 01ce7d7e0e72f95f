"""Many OS processes writing one PostgreSQL database (issue 8 "Concurrency test"):
4 processes x 200 writes on overlapping keys -> no duplicate items, exactly one current item
per single key, every chain verifies, and the read model equals a refold of the ledger.

The memory embeds with the cheap ``hash`` provider: this test is about the database, and the
bundled model would spend the two cores on ONNX instead of on contention.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from collections import Counter

import remem
import remem.testing.hashembed  # noqa: F401 - the memory embeds with the "hash" provider

PROCESSES, WRITES = 4, 200
SCOPES = [f"user:u{i}" for i in range(3)]
SINGLE_KEYS = ["home_city", "employer", "diet"]
CITIES = ["Paris", "Rome", "Oslo", "Lima", "Kyoto"]
LANGUAGES = ["French", "German", "Basque", "Welsh", "Tamil", "日本語"]

WORKER = textwrap.dedent("""
    import json, sys, time
    import remem
    import remem.testing.hashembed  # the memory embeds with the cheap "hash" provider
    url, worker, writes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    scopes, single, cities, langs = json.loads(sys.argv[4])
    mem = remem.open(url).memory("m1")
    print("ready", flush=True)
    sys.stdin.readline()  # go: every worker starts together
    outcomes, errors = {}, []
    t0 = time.perf_counter()
    for i in range(writes):
        scope = scopes[(i + worker) % len(scopes)]
        try:
            if i % 4 == 3:  # a multi key: the same values from every worker
                r = mem.remember(scope, "languages", langs[(i * 7 + worker) % len(langs)])
            elif i % 10 == 5:  # the same request from every worker: one write, then replays
                r = mem.remember(scopes[i % len(scopes)], "nickname", f"nick {i}",
                                 idempotency_key=f"shared-{i}", valid_at=remem_time)
            else:
                key = single[(i // 2 + worker) % len(single)]
                r = mem.remember(scope, key, cities[(i * 3 + worker) % len(cities)])
            k = r.outcome + (" replayed" if r.replayed else "")
            outcomes[k] = outcomes.get(k, 0) + 1
        except remem.RememError as exc:
            errors.append(f"{exc.code}: {exc.message}")
    print(json.dumps({"outcomes": outcomes, "errors": errors,
                      "seconds": time.perf_counter() - t0}), flush=True)
""").replace("remem_time", "__import__('datetime').datetime(2024, 1, 1, "
             "tzinfo=__import__('datetime').timezone.utc)")


def _live_claims(mem: remem.Memory) -> list:
    views, cursor = [], None
    while True:
        page = mem.items(status="all", cursor=cursor, limit=1000)
        views.extend(page.items)
        if page.next_cursor is None:
            return views
        cursor = page.next_cursor


def test_four_processes_writing_overlapping_keys_keep_the_ledger_and_read_model_sound(pg_url):
    store = remem.open(pg_url)
    store.create_memory("m1", {"keys": {"nickname": {"cardinality": "single"}},
                               "embedding": {"provider": "hash", "dimensions": 32}})
    args = json.dumps([SCOPES, SINGLE_KEYS, CITIES, LANGUAGES])
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, pg_url, str(w), str(WRITES), args],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
             for w in range(PROCESSES)]
    try:
        for p in procs:
            assert p.stdout.readline().strip() == "ready", p.stderr.read()
        t0 = time.perf_counter()
        for p in procs:
            p.stdin.write("go\n")
            p.stdin.flush()
        results = []
        for p in procs:
            line = p.stdout.readline()
            assert line, p.stderr.read()
            results.append(json.loads(line))
        wall = time.perf_counter() - t0
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait(timeout=30)
    assert all(r["errors"] == [] for r in results), [r["errors"][:3] for r in results]
    outcomes = sum((Counter(r["outcomes"]) for r in results), Counter())
    assert sum(outcomes.values()) == PROCESSES * WRITES
    # each shared request wrote once and replayed in every other worker
    shared = sum(1 for i in range(WRITES) if i % 4 != 3 and i % 10 == 5)
    replays = sum(n for k, n in outcomes.items() if k.endswith(" replayed"))
    assert replays == shared * (PROCESSES - 1), outcomes

    mem = store.memory("m1")
    views = _live_claims(mem)
    live = [v for v in views if v.status in ("current", "conflict")]
    claims = Counter(v.claim_id for v in live)
    assert max(claims.values()) == 1, "a live claim exists twice"
    for scope in SCOPES:
        for key in [*SINGLE_KEYS, "nickname"]:
            current = [v for v in live if (v.scope, v.key) == (scope, key)]
            assert len(current) == 1 and current[0].status == "current", (scope, key, current)
            assert mem.inspect(scope, key).revision == max(
                v.revision for v in views if (v.scope, v.key) == (scope, key))
        langs = [v.value for v in live if (v.scope, v.key) == (scope, "languages")]
        assert len(langs) == len(set(langs)) <= len(LANGUAGES)
    added = [e for e in store.adapter.events("m1") if e["type"] == "item.added"]
    assert len(added) == len(views) == len({v.item_id for v in views})
    rep = store.verify()
    assert rep["ok"], rep
    before = store.adapter.dump("m1")
    store.rebuild("m1")
    assert store.adapter.dump("m1") == before
    store.close()
    print(f"\n{PROCESSES}x{WRITES} writes in {wall:.2f}s "
          f"({PROCESSES * WRITES / wall:.0f} writes/s); outcomes {dict(outcomes)}")
