"""KickSide lifecycle: consolidation and retention are slot jobs armed on creation, re-armed
every interval, and brought forward by resummarize and by a session's deactivate. Both
backends, a clock the test moves by hand, jobs run by the real job runner."""

from __future__ import annotations

from datetime import timedelta

import pytest
from service.kickside_kit import T0  # noqa: F401

import remem
from remem.domain.timefmt import to_iso
from remem.errors import NotFound, PermissionDenied
from remem.service.clock import FixedClock

CONFIG = {"consolidation_interval_hours": 6, "retention": {"interval_hours": 2},
          "keys": {"allergies": {"cardinality": "multi"}}}


@pytest.fixture
def clock():
    return FixedClock(T0)


@pytest.fixture
def store(store_url, clock):
    s = remem.open(store_url, clock=clock)
    yield s
    s.close()


@pytest.fixture
def mem(store):
    return store.create_memory("m1", config=CONFIG)


def queued(mem, kind):
    return mem.store.job_scheduled(mem.id, kind)


def kinds_run(outcomes):
    return sorted(o["kind"] for o in outcomes)


def test_creation_arms_consolidation_and_retention_on_their_intervals(mem):
    assert queued(mem, "consolidate")["run_at"] == to_iso(T0 + timedelta(hours=6))
    assert queued(mem, "retention")["run_at"] == to_iso(T0 + timedelta(hours=2))
    assert mem.run_jobs() == []  # nothing is due yet


def test_each_slot_job_runs_when_due_and_re_arms_itself(mem, clock):
    clock.advance(hours=2)
    assert kinds_run(mem.run_jobs()) == ["retention"]
    assert queued(mem, "retention")["run_at"] == to_iso(T0 + timedelta(hours=4))
    clock.advance(hours=4)
    assert kinds_run(mem.run_jobs()) == ["consolidate", "retention"]
    assert queued(mem, "consolidate")["run_at"] == to_iso(T0 + timedelta(hours=12))
    assert queued(mem, "retention")["run_at"] == to_iso(T0 + timedelta(hours=8))
    assert {r["status"] for r in mem.runs()} == {"succeeded"}


def test_scheduled_retention_erases_an_expired_item(mem, clock):
    item = mem.remember("user:alice", "diet", "vegetarian")
    mem.set_retention(item.item_id, keep_until=T0 + timedelta(hours=1))
    clock.advance(hours=2)
    ran = mem.run_jobs()
    assert ran[0]["kind"] == "retention" and ran[0]["stats"] == {"erased": 1, "blocked": 0,
                                                                   "blobs": 0,
                                                                   "orphan_blobs": 0}
    with pytest.raises(NotFound):
        mem.get(item.item_id)
    assert mem.owner.verify()["ok"]


def test_resummarize_brings_consolidation_forward_without_a_second_job(mem, clock):
    a = mem.remember("user:alice", "allergies", "Peanuts.")
    b = mem.remember("user:alice", "allergies", "peanuts")
    clock.advance(minutes=5)
    job = mem.resummarize()
    assert job["run_at"] == to_iso(T0 + timedelta(minutes=5))
    assert job["job_id"] == queued(mem, "consolidate")["job_id"]  # moved, not duplicated
    assert kinds_run(mem.run_jobs()) == ["consolidate"]
    assert mem.get(b.item_id).superseded_by == a.item_id  # the duplicate merged
    assert queued(mem, "consolidate")["run_at"] == to_iso(
        T0 + timedelta(minutes=5, hours=6))  # re-armed one interval on


def test_deactivate_captures_the_last_turns_and_brings_consolidation_forward(mem, clock):
    clock.advance(minutes=1)
    out = mem.deactivate("user:alice", "chat", "conv1",
                         [{"id": "t1", "role": "user", "text": "I live in Lyon."}])
    assert out["captured"]["position"] == 1
    assert out["consolidation"]["run_at"] == to_iso(T0 + timedelta(minutes=1))
    assert "consolidate" in kinds_run(mem.run_jobs())
    assert [i.value for i in mem.items(scope="user:alice", key="home_city").items] == ["Lyon"]


def test_resummarize_needs_a_memory_admin_and_deactivate_a_writer_of_the_scope(store, mem):
    from remem.service.tokens import Tokens

    writer, _ = mem.create_token("writer", "user:alice")
    scoped = store.memory("m1", principal=Tokens(store).authenticate(writer))
    with pytest.raises(PermissionDenied):
        scoped.resummarize()
    with pytest.raises(PermissionDenied):
        scoped.deactivate("user:bob", "chat", "c2")
    assert scoped.deactivate("user:alice", "chat", "c2")["captured"] is None


def test_a_worker_arms_memories_created_before_slot_jobs_existed(store, mem, store_url):
    from remem.service.jobs.runner import Worker

    with mem.store.unit_of_work(mem.id) as uow:  # a memory from before: nothing queued
        uow.conn.execute("DELETE FROM jobs WHERE memory_id='m1'")
    assert queued(mem, "consolidate") is None
    stopped = iter([False, True])
    Worker(store).run_forever(poll_s=0, stop=lambda: next(stopped, True))
    assert queued(mem, "consolidate")["run_at"] == to_iso(T0 + timedelta(hours=6))
    assert queued(mem, "retention")["run_at"] == to_iso(T0 + timedelta(hours=2))
    Worker(store).arm_slot_jobs()  # idempotent: still one of each
    with mem.store.unit_of_work(mem.id) as uow:
        rows = uow.conn.execute("SELECT kind, COUNT(*) FROM jobs WHERE memory_id='m1' AND "
                                "state='queued' GROUP BY kind ORDER BY kind").fetchall()
    rows = [tuple(r.values()) if isinstance(r, dict) else tuple(r) for r in rows]
    assert rows == [("consolidate", 1), ("retention", 1)]
