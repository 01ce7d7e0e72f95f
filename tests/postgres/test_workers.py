"""Receipts, barriers and job claims across processes on one PostgreSQL database: API
processes observe, worker processes claim derive jobs with FOR UPDATE SKIP LOCKED, and a
recall in a third process waits on the receipts (issue 8)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections import Counter

import psycopg

import remem
import remem.testing.hashembed  # noqa: F401 - the memory embeds with the "hash" provider

WORKER = textwrap.dedent("""
    import json, sys
    import remem, remem.testing.hashembed
    from remem.service.jobs.runner import Worker
    store = remem.open(sys.argv[1], derive="worker")
    print("ready", flush=True)
    sys.stdin.readline()
    out = Worker(store, worker_id=sys.argv[2]).run_until_idle()
    print(json.dumps([r["status"] for r in out]), flush=True)
""")

TURNS = ["I live in Lisbon", "I work at Acme", "I am vegetarian", "my sister is called Ana",
         "I moved to Porto last year", "I love hiking", "I have a dog named Rex",
         "I speak Portuguese", "I play the violin", "my favourite colour is green"]


def test_workers_in_other_processes_claim_each_job_once_and_release_the_barrier(pg_url):
    api = remem.open(pg_url, derive="worker")
    mem = api.create_memory("m1", {"embedding": {"provider": "hash", "dimensions": 32}})
    receipts = [mem.observe("user:alice", t, source_id=f"turn-{i}", run_id="chat-1")
                for i, t in enumerate(TURNS)]
    assert {r.phase for r in receipts} == {"recorded"}
    ids = [r.receipt_id for r in receipts]
    waiting = mem.recall("user:alice", "where do I live", budget_tokens=1500, after=ids)
    assert waiting.status == "pending" and not waiting.action_eligible
    assert sorted(waiting.unresolved) == sorted(ids)

    procs = [subprocess.Popen([sys.executable, "-c", WORKER, pg_url, f"w{n}"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for n in range(3)]
    try:
        for p in procs:
            assert p.stdout.readline().strip() == "ready", p.stderr.read()
        for p in procs:
            p.stdin.write("go\n")
            p.stdin.flush()
        done = [json.loads(p.stdout.readline() or "null") for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait(timeout=30)
    assert all(d is not None for d in done), [p.stderr for p in procs]
    assert sum(len(d) for d in done) == len(TURNS)  # every job ran, none twice
    assert Counter(s for d in done for s in d) == {"succeeded": len(TURNS)}
    with psycopg.connect(pg_url) as conn:
        per_job = conn.execute("SELECT job_id, count(*) FROM runs GROUP BY job_id").fetchall()
        workers = {r[0] for r in conn.execute("SELECT DISTINCT worker FROM runs")}
    assert len(per_job) == len(TURNS) and all(n == 1 for _, n in per_job)
    assert workers <= {"w0", "w1", "w2"}

    reader = remem.open(pg_url, derive="worker")  # a third process's view
    try:
        m = reader.memory("m1")
        assert {m.receipt(i).phase for i in ids} == {"available"}
        ready = m.recall("user:alice", "where do I live", budget_tokens=1500, after=ids)
        assert ready.status == "succeeded" and ready.action_eligible
        assert reader.verify()["ok"]
    finally:
        reader.close()
        api.close()
