"""Index health in ``status`` (issue 13.5), on SQLite and PostgreSQL: pending and failed
derive jobs, the oldest pending age, the last error (without driver text) and receipts."""

from __future__ import annotations

import pytest

import remem
from remem.errors import ExtractionFailed, PermissionDenied
from remem.service.jobs.derive import run_derive
from remem.service.jobs.runner import Worker


@pytest.fixture
def worker_store(store_url, clock):
    s = remem.open(store_url, clock=clock, derive="worker")
    yield s
    s.close()


def test_a_fresh_memory_is_healthy(mem):
    h = mem.status()["index_health"]
    assert h["state"] == "healthy" and h["pending"] == 0 and h["failed"] == 0
    assert h["last_error"] is None and h["oldest_pending_age_s"] is None


def test_pending_derive_jobs_are_counted_with_the_oldest_age(worker_store, clock):
    mem = worker_store.create_memory("m1")
    mem.observe("user:a", "I live in Lyon.")
    clock.advance(seconds=90)
    mem.observe("user:a", "I work at Acme.")
    clock.advance(seconds=10)
    h = mem.status()["index_health"]
    assert h["state"] == "pending" and h["pending"] == 2
    assert h["jobs"]["derive"]["pending"] == 2
    assert h["oldest_pending_age_s"] == 100.0
    assert h["receipts"]["recorded"] == 2
    Worker(worker_store).run_until_idle("m1")
    h = mem.status()["index_health"]
    assert h["state"] == "healthy" and h["pending"] == 0
    assert h["receipts"] == {"recorded": 0, "processed": 0, "available": 2, "failed": 0}


def test_failed_jobs_show_the_last_error_without_driver_text(worker_store, clock):
    mem = worker_store.create_memory("m1")
    mem.observe("user:a", "I live in Lyon.")
    mem.observe("user:a", "I work at Acme.")

    def typed_failure(memory, job, run_id):
        raise ExtractionFailed("The extractor returned no JSON; check the model provider.")
    typed_failure.on_final_failure = run_derive.on_final_failure
    Worker(worker_store, {"derive": typed_failure}).run_once("m1")
    h = mem.status()["index_health"]
    assert h["state"] == "failing" and h["failed"] == 1 and h["pending"] == 1
    assert h["last_error"]["kind"] == "derive" and h["last_error"]["state"] == "failed"
    assert h["last_error"]["error"] == ("The extractor returned no JSON; check the model "
                                        "provider.")
    assert h["receipts"]["failed"] == 1

    def driver_failure(memory, job, run_id):
        raise RuntimeError("SELECT secret FROM payloads WHERE path='/var/lib/x'\n  File ...")
    clock.advance(seconds=1)
    Worker(worker_store, {"derive": driver_failure}).run_once("m1")  # retried later
    h = mem.status()["index_health"]
    err = h["last_error"]["error"]
    assert err.startswith("RuntimeError") and "SELECT" not in err and "/var" not in err
    assert h["last_error"]["state"] == "queued" and h["pending"] == 1


def test_status_needs_a_memory_wide_caller(mem):
    from remem.domain.access import Principal, Role

    scoped = mem.as_principal(Principal("m1", Role.ADMIN, "user:a", token_id="t1"))
    with pytest.raises(PermissionDenied):
        scoped.status()
