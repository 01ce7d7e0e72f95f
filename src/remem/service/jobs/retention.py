"""Retention as a scheduled slot job: erase expired items, then re-arm.

Runs ``Forgetter.run_retention`` (items past ``keep_until`` or the memory's
``retention.keep_days``; held items are skipped) every ``retention.interval_hours`` (default
24). It also sweeps orphan blob files (``memory_facts.sweep_orphan_blobs``: no payload
refers to them, older than an hour). The run's stats hold counts only: items erased, held
items blocked, blob files deleted with erased items (``blobs``), orphan blob files swept
(``orphan_blobs``).
"""

from __future__ import annotations

from typing import Any

from remem.service.jobs.schedule import arm


def run_retention_job(memory: Any, job: dict[str, Any], run_id: str) -> dict[str, Any]:
    """Job handler: erase what expired, record counts, re-arm the next run."""
    from remem.service.forget import Forgetter
    from remem.service.memory_facts import sweep_orphan_blobs

    out = Forgetter(memory).run_retention()
    arm(memory, "retention")
    blobs = sum(r["surfaces"].get("blobs", {}).get("erased", 0) for r in out["reports"])
    return {"erased": len(out["erased"]), "blocked": len(out["blocked"]), "blobs": blobs,
            "orphan_blobs": sweep_orphan_blobs(memory)}
