"""CLI: `remem status` — ledger head, item counts and index health of the selected memory."""

from __future__ import annotations

from typing import Any

import typer

from remem.cli.output import STATE, emit, say, table


def _health_table(status: dict[str, Any]):
    h = status["index_health"]
    age = h["oldest_pending_age_s"]
    tenant = f" (tenant {status['tenant']})" if status.get("tenant") else ""
    title = (f"{status['memory']}{tenant}: head {status['head_seq']}, index {h['state']} "
             f"({h['pending']} pending, {h['failed']} failed"
             + (f", oldest pending {age:.0f}s" if age is not None else "") + ")")
    rows = [(kind, c["pending"], c["running"], c["scheduled"], c["failed"])
            for kind, c in sorted(h["jobs"].items())]
    err = h["last_error"]
    if err is not None:
        rows.append((f"last error ({err['kind']}, {err['state']}, {err['at'][:19]})",
                     err["error"], "", "", ""))
    # the summary is its own line: as the table's title it would wrap to the table's width
    return title, table(None, ["jobs", "pending", "running", "scheduled", "failed"], rows)


def register(app: typer.Typer) -> None:
    from remem.cli.main import current_memory, run

    @app.command()
    def status() -> None:
        """Ledger head, item counts per status and index health: pending and failed
        derive/index jobs, the oldest pending age and the last error (admin)."""
        def body():
            out = current_memory().status()
            title, jobs = _health_table(out)
            if not STATE.json:
                say(title)
            emit(out, jobs)
        run(body)
