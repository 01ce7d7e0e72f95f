"""Slot jobs: one queued job per (memory, kind), re-armed every interval, brought forward.

Consolidation and retention are slot jobs (KickSide: "a slot job per memory that re-arms
every consolidation_interval_hours"). Both are armed when a memory is created, re-arm
themselves after each run, and can be brought forward (deactivate, resummarize).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from remem.domain.timefmt import to_iso
from remem.service.ids import new_id

DEFAULT_INTERVAL_HOURS = 24.0
#: The shortest re-arm interval (6 minutes): a job re-armed due at once would keep the shared
#: worker busy with one memory and never idle (owed erasure scrubs run when it is idle).
MIN_INTERVAL_HOURS = 0.1


def interval_hours(config: dict[str, Any], kind: str) -> float:
    """The re-arm interval of a slot job from the memory config (default 24 hours; at least
    ``MIN_INTERVAL_HOURS``, also for a config stored before that floor)."""
    if kind == "consolidate":
        value = config.get("consolidation_interval_hours")
    else:
        value = (config.get("retention") or {}).get("interval_hours")
    return max(MIN_INTERVAL_HOURS, float(DEFAULT_INTERVAL_HOURS if value is None else value))


def arm(memory: Any, kind: str, *, now_: bool = False, at: Any = None) -> dict[str, Any]:
    """Arms the memory's next ``kind`` job one interval from now (``now_``: due at once;
    ``at``: an aware datetime it is due at instead).

    An already queued job of that kind is kept (never two); it is only moved earlier.
    Returns ``{"job_id", "kind", "run_at"}``.
    """
    now = memory.clock.now()
    hours = interval_hours(memory.config, kind)
    run_at = to_iso(now if now_ else now + timedelta(hours=hours))
    if at is not None and not now_:
        run_at = to_iso(max(at, now))
    existing = memory.store.job_scheduled(memory.id, kind)
    if existing is not None:
        if existing["run_at"] > run_at:
            memory.store.reschedule_job(existing["job_id"], run_at, to_iso(now))
            return {"job_id": existing["job_id"], "kind": kind, "run_at": run_at}
        return {"job_id": existing["job_id"], "kind": kind, "run_at": existing["run_at"]}
    job_id = memory.store.enqueue_job(memory.id, kind, {}, run_at=run_at, now=to_iso(now),
                                      job_id=new_id("job"))
    return {"job_id": job_id, "kind": kind, "run_at": run_at}


def arm_all(memory: Any) -> list[dict[str, Any]]:
    """Arms every slot job of a new memory (consolidation and retention)."""
    return [arm(memory, "consolidate"), arm(memory, "retention")]
