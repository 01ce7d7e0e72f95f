"""Index health for ``status``: open and failed derive/index jobs, their last error, the age of
the oldest pending job and receipts per phase (issue 13.5).

Job errors are stored as the runner wrote them: a typed error's message (which never holds
SQL, hosts, paths or stacks) or ``"<ExceptionType>: <text>"`` for an unexpected failure, whose
text may come from a driver. The report keeps a typed message's first line and reduces an
unexpected failure to its exception type.
"""

from __future__ import annotations

import re
from typing import Any

from remem.domain.timefmt import from_iso, to_iso

#: The longest error text ``status`` shows (characters).
MAX_ERROR_CHARS = 300

_UNEXPECTED = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Failure|Timeout|Exit))\b:?")


def presentable_error(text: str | None) -> str | None:
    """Error text safe to show a memory admin: one line, no driver text, bounded.

    >>> presentable_error('OperationalError: no such table: items\\nSELECT * FROM items')
    'OperationalError (an unexpected failure; the worker log has the details)'
    """
    if not text:
        return None
    m = _UNEXPECTED.match(text)
    if m:
        return f"{m.group(1).rsplit('.', 1)[-1]} (an unexpected failure; the worker log has " \
               "the details)"
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= MAX_ERROR_CHARS else line[:MAX_ERROR_CHARS - 1] + "…"


def index_health(store: Any, memory_id: str, now: Any) -> dict[str, Any]:
    """The index-health section of ``status``.

    Args:
        store: the memory's store adapter (``job_health``, ``receipt_phases``).
        now: the memory clock's aware UTC datetime.

    Returns:
        ``{"state": healthy | pending | failing, "pending": n, "failed": n,
        "jobs": {kind: {pending, running, scheduled, failed}}, "oldest_pending_age_s": float
        or None, "last_error": {job_id, kind, state, at, error} or None,
        "receipts": {recorded, processed, available, failed}}``; ``pending`` counts due
        queued and running jobs, ``failed`` the jobs closed as failed.
    """
    jobs = store.job_health(memory_id, to_iso(now))
    kinds = jobs["kinds"]
    pending = sum(k["pending"] + k["running"] for k in kinds.values())
    failed = sum(k["failed"] for k in kinds.values())
    oldest = jobs["oldest_pending_at"]
    age_s = max(0.0, (now - from_iso(oldest)).total_seconds()) if oldest else None
    err = jobs["last_error"]
    if err is not None:
        err = {**err, "error": presentable_error(err["error"])}
    phases = store.receipt_phases(memory_id)
    receipts = {p: phases.get(p, 0) for p in ("recorded", "processed", "available", "failed")}
    state = "failing" if failed or receipts["failed"] else ("pending" if pending else "healthy")
    return {"state": state, "pending": pending, "failed": failed, "jobs": kinds,
            "oldest_pending_age_s": round(age_s, 3) if age_s is not None else None,
            "last_error": err, "receipts": receipts}
