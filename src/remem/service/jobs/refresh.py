"""Refresh as a scheduled job: sweep the stale ``background`` cached facts, then re-arm.

Armed when a ``background`` cached fact is remembered, for the earliest time one turns stale
(``lastVerifiedAt + ttlSeconds``); each run refreshes at most ``service.cached.SWEEP_LIMIT``
stale facts, highest ``refresh.priority`` first, then re-arms for the next due fact, no sooner
than :data:`MIN_INTERVAL_S` from now (a source that keeps failing is retried at that pace).
The run's stats hold counts only.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from remem.domain.timefmt import from_iso, to_iso
from remem.service.jobs.schedule import arm

MIN_INTERVAL_S = 60.0
_END_OF_TIME = "9999-12-31T23:59:59.999999Z"


def next_refresh_at(memory: Any, floor: datetime) -> datetime | None:
    """When the next sweep is due (not before ``floor``); None when no ``background`` fact
    has a TTL or a failed check (nothing will ever be due)."""
    store, now = memory.store, memory.clock.now()
    if not store.cached_due(memory.id, "background", _END_OF_TIME, 1):
        return None
    if store.cached_due(memory.id, "background", to_iso(now), 1):
        return max(now, floor)
    due = store.next_cached_due(memory.id, "background")
    return max(from_iso(due), floor) if due is not None else floor


def arm_refresh(memory: Any) -> dict[str, Any] | None:
    """Arms the memory's refresh job for its next due ``background`` fact (an earlier armed
    job is kept); returns ``{"job_id", "kind", "run_at"}`` or None (nothing will be due)."""
    at = next_refresh_at(memory, memory.clock.now())
    return arm(memory, "refresh", at=at) if at is not None else None


def run_refresh_job(memory: Any, job: dict[str, Any], run_id: str) -> dict[str, Any]:
    """Job handler: refresh what is due, record counts, re-arm."""
    counts = memory.ctx.cached.sweep()
    at = next_refresh_at(memory, memory.clock.now() + timedelta(seconds=MIN_INTERVAL_S))
    if at is not None:
        arm(memory, "refresh", at=at)
    return counts
