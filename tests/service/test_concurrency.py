"""Real OS processes writing one SQLite file (issue 2 "Concurrency", "Storage": kill -9).

Workers are separate Python interpreters driven line by line over stdin: the parent sends the
same round to every worker at once, so their writes race for the same key.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path

import pytest

import remem

WORKER = textwrap.dedent("""
    import json, sys
    from datetime import datetime
    import remem
    store = remem.open(sys.argv[1])
    mem = store.memory(sys.argv[2])
    print("ready", flush=True)
    for line in sys.stdin:
        cmd = json.loads(line)
        if cmd.get("stop"):
            break
        kw = dict(cmd.get("kwargs", {}))
        if "valid_at" in kw:
            kw["valid_at"] = datetime.fromisoformat(kw["valid_at"])
        if "authority" in kw:
            kw["authority"] = remem.Authority(kw["authority"])
        try:
            r = mem.remember(cmd["scope"], cmd["key"], cmd["value"], **kw)
            out = {"ok": True, **r.to_dict()}
        except remem.RememError as exc:
            out = {"ok": False, "code": exc.code, "message": exc.message}
        print(json.dumps(out), flush=True)
""")


class Workers:
    """N worker processes on one database; ``round`` sends one command to each at once."""

    def __init__(self, db: Path, memory_id: str, n: int) -> None:
        self.procs = [subprocess.Popen([sys.executable, "-c", WORKER, str(db), memory_id],
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, text=True, bufsize=1)
                      for _ in range(n)]
        for p in self.procs:
            line = p.stdout.readline()
            assert line.strip() == "ready", p.stderr.read()

    def round(self, commands: list[dict]) -> list[dict]:
        for p, cmd in zip(self.procs, commands, strict=True):
            p.stdin.write(json.dumps(cmd) + "\n")
        for p in self.procs:
            p.stdin.flush()
        out = []
        for p in self.procs:
            line = p.stdout.readline()
            assert line, p.stderr.read()
            out.append(json.loads(line))
        return out

    def close(self) -> None:
        for p in self.procs:
            try:
                p.stdin.write(json.dumps({"stop": True}) + "\n")
                p.stdin.close()
            except BrokenPipeError:
                pass
        for p in self.procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


@pytest.fixture
def shared_db(tmp_path: Path) -> Path:
    db = tmp_path / "shared.db"
    s = remem.open(db)
    s.create_memory("m1")
    s.close()
    return db


def _key_statuses(store, key: str) -> list[tuple[str, str | None]]:
    page = store.memory("m1").items(key=key, status="all", limit=100)
    return sorted((v.status, v.conflict_group) for v in page.items)


ROUNDS = 20


def test_two_processes_racing_on_a_single_key_leave_exactly_one_current_item(shared_db):
    workers = Workers(shared_db, "m1", 2)
    try:
        outcomes = []
        for k in range(ROUNDS):
            cmds = [{"scope": "user:alice", "key": f"city_round_{k}", "value": v}
                    for v in ("Paris", "Rome")]
            outcomes.append(workers.round(cmds))
    finally:
        workers.close()
    store = remem.open(shared_db)
    try:
        for k, pair in enumerate(outcomes):
            assert all(r["ok"] for r in pair), pair
            assert sorted(r["outcome"] for r in pair) in (["created", "superseded"],
                                                         ["created", "stale"]), pair
            statuses = _key_statuses(store, f"city_round_{k}")
            assert [s for s, _ in statuses] == ["current", "superseded"], (k, statuses)
            assert store.memory("m1").inspect("user:alice", f"city_round_{k}").revision == 2
        rep = store.verify()
        assert rep["ok"], rep
        assert rep["memories"]["m1"]["events"] == ROUNDS * 4  # declared, added, added, superseded
        before = store.adapter.dump("m1")
        store.rebuild("m1")
        assert store.adapter.dump("m1") == before
    finally:
        store.close()


def test_two_processes_asserting_different_values_end_in_one_conflict_or_one_current(shared_db):
    workers = Workers(shared_db, "m1", 2)
    try:
        for k in range(ROUNDS // 2):
            workers.round([{"scope": "user:bob", "key": f"employer_{k}", "value": v,
                            "kwargs": {"authority": "assert"}} for v in ("Acme", "Initech")])
    finally:
        workers.close()
    store = remem.open(shared_db)
    try:
        for k in range(ROUNDS // 2):
            statuses = _key_statuses(store, f"employer_{k}")
            kinds = [s for s, _ in statuses]
            if kinds == ["conflict", "conflict"]:
                assert statuses[0][1] == statuses[1][1] is not None  # one group
            else:  # the later writer's statement was older: kept as stale history
                assert kinds == ["current", "superseded"], statuses
        assert store.verify()["ok"]
    finally:
        store.close()


def test_the_same_idempotency_key_sent_concurrently_writes_once(shared_db):
    n, rounds = 4, 8
    workers = Workers(shared_db, "m1", n)
    try:
        results = []
        for k in range(rounds):
            cmd = {"scope": "user:carol", "key": f"diet_{k}", "value": "vegan",
                   "kwargs": {"idempotency_key": f"req-{k}",
                              "valid_at": "2024-05-01T10:00:00+00:00"}}
            results.append(workers.round([cmd] * n))
    finally:
        workers.close()
    store = remem.open(shared_db)
    try:
        for k, res in enumerate(results):
            assert all(r["ok"] for r in res), res
            assert sorted(r["replayed"] for r in res) == [False] + [True] * (n - 1), res
            assert len({r["item_id"] for r in res}) == 1
        added = Counter(e["data"]["key"] for e in store.adapter.events("m1")
                        if e["type"] == "item.added")
        assert added == {f"diet_{k}": 1 for k in range(rounds)}
        assert store.verify()["ok"]
    finally:
        store.close()


OPENER = textwrap.dedent("""
    import sys, time, os
    import remem
    go = sys.argv[2]
    while not os.path.exists(go):
        time.sleep(0.001)
    store = remem.open(sys.argv[1])
    mem = store.create_memory(sys.argv[3])
    mem.remember("user:alice", "home_city", "Paris")
    print("done", flush=True)
""")


def test_processes_opening_a_new_database_at_once_migrate_it_once(tmp_path):
    db, go = tmp_path / "fresh.db", tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, "-c", OPENER, str(db), str(go), f"m{i}"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(4)]
    time.sleep(0.3)  # let every interpreter start and poll
    go.touch()
    for p in procs:
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0 and out.strip() == "done", err
    store = remem.open(db)
    try:
        assert [m["memory_id"] for m in store.list_memories()] == ["m0", "m1", "m2", "m3"]
        versions = [r[0] for r in store.adapter.conn.execute(
            "SELECT version FROM schema_migrations ORDER BY version")]
        assert versions == sorted(set(versions)) and versions[0] == 1
        assert store.verify()["ok"]
    finally:
        store.close()


DURABLE = textwrap.dedent("""
    import sys, time
    import remem
    mem = remem.open(sys.argv[1]).memory("m1")
    for i in range(10_000):
        mem.remember(f"user:u{i}", "home_city", f"City {i}")
        print(f"acked {i}", flush=True)
    time.sleep(60)
""")


def test_an_acknowledged_write_survives_kill_9(shared_db):
    proc = subprocess.Popen([sys.executable, "-c", DURABLE, str(shared_db)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    last = -1
    try:
        while last < 25:
            line = proc.stdout.readline()
            assert line, proc.stderr.read()
            last = int(line.split()[1])
    finally:
        os.kill(proc.pid, signal.SIGKILL)  # mid-stream: later writes may be in flight
        proc.wait(timeout=20)
    assert proc.returncode == -signal.SIGKILL
    store = remem.open(shared_db)
    try:
        mem = store.memory("m1")
        for i in range(last + 1):
            assert mem.inspect(f"user:u{i}", "home_city").value == f"City {i}", i
        rep = store.verify()
        assert rep["ok"], rep
        before = store.adapter.dump("m1")  # the read model matches the ledger after the crash
        store.rebuild("m1")
        assert store.adapter.dump("m1") == before
    finally:
        store.close()
