"""PostgreSQL-specific guarantees behind the shared contract: lazy connection, error
translation, the ledger-key backstop, migrations across processes, per-memory partitions and
the physical scrub that waits for older snapshots."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time

import psycopg
import pytest

from remem.service.writer import append_events

import remem
from remem.errors import ArtifactUnavailable, HeadMoved, StoreUnavailable
from remem.stores.postgres import PostgresStore
from remem.testing.pgdb import database_bytes

SECRET = "Zanzibar-Quokka-7731"


def test_the_constructor_never_connects_and_a_dead_server_is_store_unavailable():
    store = remem.open("postgresql://remem:s3cret-pw@127.0.0.1:9/nowhere",
                       connect_timeout_s=1)  # nothing listens on port 9
    with pytest.raises(StoreUnavailable) as info:
        store.list_memories()
    assert info.value.retryable and info.value.code == "store_unavailable"
    said = info.value.message + repr(info.value.details)
    for internal in ("s3cret-pw", "127.0.0.1", ":9", "nowhere", "remem@"):
        assert internal not in said  # no password, host, port or database name
    assert "REMEM_DATABASE_URL" in info.value.message
    store.close()


def test_without_the_driver_the_error_names_the_extra_to_install():
    code = textwrap.dedent("""
        import sys
        sys.modules["psycopg"] = None  # as if the extra were not installed
        import remem
        from remem.errors import ArtifactUnavailable
        try:
            remem.open("postgresql://u:p@localhost/db")
        except ArtifactUnavailable as exc:
            print(exc.code, exc.message)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert "artifact_unavailable" in out.stdout and "pip install 'remem[postgres]'" in out.stdout
    assert issubclass(ArtifactUnavailable, remem.RememError)


def test_a_colliding_append_raises_head_moved_and_rolls_the_whole_write_back(pg_url):
    store = remem.open(pg_url)
    mem = store.create_memory("m1")
    mem.remember("user:alice", "home_city", "Paris")
    adapter: PostgresStore = store.adapter
    head = adapter.head_seq("m1")
    # Another writer (bypassing the memory lock) holds an uncommitted event at head + 1.
    other = psycopg.connect(pg_url)
    other.execute("INSERT INTO ledger(memory_id, seq, type, data, actor, at, prev_hash, hash) "
                  "VALUES ('m1', %s, 'memory.configured', '{}', 'x', 'x', 'x', 'x')",
                  (head + 1,))
    errors: list[BaseException] = []

    def write() -> None:
        from remem.domain.events import Event, EventType

        try:
            with adapter.unit_of_work("m1") as uow:
                uow.put_payload("pl_staged", "itm_staged", "staged", None, b"salt")
                event = Event(EventType.MEMORY_CONFIGURED, {"config_digest": "0" * 64})
                append_events(uow, [event], actor="t", at="2024-01-01T00:00:00.000000Z",
                           expected_seq=head)
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    t = threading.Thread(target=write)
    t.start()
    time.sleep(0.3)  # the append now waits on the other transaction's key
    other.commit()
    t.join(10)
    other.close()
    assert len(errors) == 1 and isinstance(errors[0], HeadMoved), errors
    assert errors[0].retryable
    assert isinstance(errors[0].__cause__, psycopg.errors.UniqueViolation)
    assert adapter.payloads("m1", ["pl_staged"]) == {}  # nothing staged stayed behind
    assert adapter.head_seq("m1") == head + 1
    store.close()


def test_writers_of_one_memory_take_turns_and_other_memories_do_not_wait(pg_url):
    store = remem.open(pg_url)
    store.create_memory("m1")
    store.create_memory("m2")
    adapter = store.adapter
    order: list[str] = []
    with adapter.unit_of_work("m1"):
        def second(memory_id: str) -> None:
            with adapter.unit_of_work(memory_id):
                order.append(memory_id)

        same = threading.Thread(target=second, args=("m1",))
        other = threading.Thread(target=second, args=("m2",))
        same.start()
        other.start()
        other.join(5)
        time.sleep(0.2)
        order.append("first m1 commits")
    same.join(5)
    assert order == ["m2", "first m1 commits", "m1"]
    store.close()


OPENER = textwrap.dedent("""
    import sys, time, os
    import remem
    import remem.testing.hashembed  # no model load: this test is about migrations
    url, go, mid = sys.argv[1:4]
    while not os.path.exists(go):
        time.sleep(0.001)
    store = remem.open(url)
    store.create_memory(mid, {"embedding": {"provider": "hash"}}).remember(
        "user:alice", "home_city", "Paris")
    print("done", flush=True)
""")


def test_processes_opening_a_new_database_at_once_migrate_it_once(pg_url, tmp_path):
    go = tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, "-c", OPENER, pg_url, str(go), f"m{i}"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(4)]
    time.sleep(0.5)
    go.touch()
    for p in procs:
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0 and out.strip() == "done", err
    with psycopg.connect(pg_url) as conn:
        versions = [r[0] for r in conn.execute("SELECT version FROM schema_migrations "
                                                "ORDER BY version")]
    assert versions == list(range(1, len(versions) + 1)) and len(versions) >= 4
    store = remem.open(pg_url)
    assert [m["memory_id"] for m in store.list_memories()] == ["m0", "m1", "m2", "m3"]
    assert store.verify()["ok"]
    store.close()


def _partitions(url: str, memory_id: str) -> list[str]:
    with psycopg.connect(url) as conn:
        return [r[0] for r in conn.execute(
            "SELECT c.relname FROM pg_class c JOIN pg_inherits i ON i.inhrelid = c.oid "
            "WHERE pg_get_expr(c.relpartbound, c.oid) = %s ORDER BY 1",
            (f"FOR VALUES IN ('{memory_id}')",))]


def test_each_memory_has_its_own_text_partitions_and_delete_drops_them(pg_url):
    store = remem.open(pg_url)
    store.create_memory("m1").remember("user:alice", "home_city", "Paris")
    store.create_memory("m2")
    parts = _partitions(pg_url, "m1")
    assert {p.rsplit("_m", 1)[0] for p in parts} >= {"payloads", "idempotency", "sources",
                                                      "search_docs", "vectors",
                                                      "profile_renders"}
    store.delete_memory("m1")
    assert _partitions(pg_url, "m1") == []
    assert _partitions(pg_url, "m2")
    store.close()


def test_an_older_snapshot_keeps_the_erasure_pending_until_it_ends(pg_server, pg_url):
    store = remem.open(pg_url, scrub_wait_s=0.3)
    mem = store.create_memory("m1")
    for n in range(20):
        mem.remember(f"user:u{n}", "home_city", f"City {n}")
    r = mem.remember("user:alice", "hideout", SECRET)
    reader = psycopg.connect(pg_url)  # a long report that started before the forget
    reader.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
    assert reader.execute("SELECT count(*) FROM payloads").fetchone()[0] == 21
    rep = mem.forget(r.item_id)
    assert rep.state == "pending" and rep.surfaces["payloads"]["state"] == "pending"
    assert "transaction older" in rep.reason and store.pending_erasures("m1") == 1
    assert SECRET.encode() in database_bytes(pg_server, pg_url)  # it could still be read
    assert reader.execute("SELECT count(*) FROM payloads").fetchone()[0] == 21
    reader.rollback()
    reader.close()
    done = {"state": "completed", "reason": None, "pending": 0}
    assert store.finish_erasures() == done
    assert SECRET.encode() not in database_bytes(pg_server, pg_url)
    assert all(n == 0 for n in store.adapter.erasure_remaining("m1", [r.item_id], []).values())
    assert store.finish_erasures() == done and store.pending_erasures() == 0  # nothing owed
    store.close()
