"""The job runner: claim with a lease -> run -> complete or fail (recorded as runs).

Jobs live in the database, so a worker in another process (``remem worker``) or the embedded
in-process drain see the same queue. A crashed worker's job is claimable again once its lease
expires; a job that keeps failing is closed as failed after ``max_attempts``.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from remem.domain.timefmt import to_iso
from remem.errors import RememError
from remem.service.ids import new_id

#: handler(memory, job, run_id) -> stats dict; raise to fail the run.
Handler = Callable[[Any, dict[str, Any], str], dict[str, Any]]


def default_worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


class Worker:
    """Runs jobs of one store.

    Args:
        store: a RememStore.
        handlers: job kind -> handler; defaults to derive, consolidate and retention.
        worker_id: recorded on claims and runs.
        lease_s: how long a claim is held before another worker may take it over.
    """

    def __init__(self, store: Any, handlers: dict[str, Handler] | None = None, *,
                 worker_id: str | None = None, lease_s: float = 120.0) -> None:
        from remem.service.jobs.consolidate import run_consolidation
        from remem.service.jobs.derive import run_derive
        from remem.service.jobs.retention import run_retention_job

        self.store = store
        self.adapter = store.adapter
        from remem.service.jobs.refresh import run_refresh_job

        self.handlers = handlers or {"derive": run_derive, "consolidate": run_consolidation,
                                     "retention": run_retention_job,
                                     "refresh": run_refresh_job}
        self.worker_id = worker_id or default_worker_id()
        self.lease_s = lease_s

    def run_once(self, memory_id: str | None = None) -> dict[str, Any] | None:
        """Claims and runs one due job; returns {job_id, kind, status, run_id} or None."""
        now = self.store.clock.now()
        job = self.adapter.claim_job(self.worker_id, to_iso(now),
                                     to_iso(now + timedelta(seconds=self.lease_s)),
                                     memory_id=memory_id, kinds=list(self.handlers))
        if job is None:
            return None
        run_id = self.adapter.start_run(job["memory_id"], job["job_id"], job["kind"],
                                        self.worker_id, to_iso(now),
                                        run_id=new_id("run"))
        try:
            memory = self.store.memory(job["memory_id"])
            stats = self.handlers[job["kind"]](memory, job, run_id)
        except RememError as exc:
            return self._failed(job, run_id, exc.message, retry=exc.retryable)
        except Exception as exc:  # a bug or an outage: retried, then closed as failed
            return self._failed(job, run_id, f"{type(exc).__name__}: {exc}", retry=True)
        done = to_iso(self.store.clock.now())
        self.adapter.finish_run(run_id, status="succeeded", now=done, stats=stats)
        self.adapter.finish_job(job["job_id"], state="done", now=done)
        return {"job_id": job["job_id"], "kind": job["kind"], "status": "succeeded",
                "run_id": run_id, "stats": stats}

    def _failed(self, job: dict[str, Any], run_id: str, reason: str, *,
                retry: bool) -> dict[str, Any]:
        now = to_iso(self.store.clock.now())
        capture = (job.get("payload") or {}).get("capture")
        self.adapter.finish_run(run_id, status="failed", now=now, reason=reason,
                                stats={"capture": capture} if capture else None)
        final = not retry or job["attempts"] >= job["max_attempts"]
        self.adapter.finish_job(job["job_id"], state="failed" if final else "queued", now=now,
                                error=reason)
        if final:
            on_fail = getattr(self.handlers.get(job["kind"]), "on_final_failure", None)
            if on_fail is not None:
                on_fail(self.store.memory(job["memory_id"]), job, reason)
        return {"job_id": job["job_id"], "kind": job["kind"], "status": "failed",
                "run_id": run_id, "reason": reason, "final": final}

    def finish_erasures(self) -> dict[str, Any] | None:
        """Runs owed erasure scrubs if any; returns the outcome, or None when none was owed."""
        if not self.adapter.pending_erasures(None):
            return None
        return self.store.finish_erasures()

    def run_until_idle(self, memory_id: str | None = None, max_jobs: int | None = None
                       ) -> list[dict[str, Any]]:
        """Runs due jobs until none is left (or ``max_jobs``); returns their outcomes."""
        out: list[dict[str, Any]] = []
        while max_jobs is None or len(out) < max_jobs:
            r = self.run_once(memory_id)
            if r is None:
                break
            out.append(r)
        return out

    def arm_slot_jobs(self) -> int:
        """Arms consolidation and retention for every memory that has none queued (memories
        created before slot jobs existed); returns how many memories were checked."""
        from remem.service.jobs.refresh import arm_refresh
        from remem.service.jobs.schedule import arm_all

        memories = self.store.list_memories()
        for m in memories:
            arm_all(self.store.memory(m["memory_id"]))
            arm_refresh(self.store.memory(m["memory_id"]))  # background cached facts, if any
        return len(memories)

    def run_forever(self, *, poll_s: float = 0.5, stop: Callable[[], bool] = lambda: False,
                    on_job: Callable[[dict[str, Any]], None] | None = None) -> None:
        """Arms missing slot jobs, then polls for jobs until ``stop()`` is true (``remem
        worker``); when idle, finishes owed erasure scrubs (erasures a reader's snapshot or a
        crash left pending)."""
        self.arm_slot_jobs()
        while not stop():
            r = self.run_once()
            if r is None:
                self.finish_erasures()
                time.sleep(poll_s)
            elif on_job is not None:
                on_job(r)
