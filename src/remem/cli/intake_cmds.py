"""CLI: receipts, job runs, the worker process and KIP requests (thin commands)."""

from __future__ import annotations

import json
import signal
from typing import Annotated

import typer
from remem.cli.output import (
    STATE,
    ProvidersFile,
    emit,
    escape_controls,
    say,
    table,
    use_providers_file,
)


def register(app: typer.Typer) -> None:
    from remem.cli.main import current_memory, open_store, run

    @app.command()
    def receipt(receipt_id: str) -> None:
        """Show an intake receipt's phase (recorded, processed, available, failed)."""
        def body():
            r = current_memory().receipt(receipt_id)
            emit(r, f"{r.receipt_id}: {r.phase} (accepted_seq {r.accepted_seq}, available_seq "
                    f"{r.available_seq}, disposition {r.disposition})"
                    + (f" reason: {escape_controls(r.reason)}" if r.reason else ""))
        run(body)

    @app.command()
    def runs(limit: Annotated[int, typer.Option(help="How many runs.")] = 20) -> None:
        """List recent job runs (derive, consolidate) with status and failure reason."""
        def body():
            rows = current_memory().runs(limit)
            t = table("runs", ("run", "kind", "status", "started", "reason / stats"),
                      ((r["run_id"], r["kind"], r["status"], r["started_at"][:19],
                        r["reason"] or json.dumps(r["stats"])) for r in rows))
            emit(rows, t if rows else "(no runs yet)")
        run(body)

    @app.command()
    def worker(
        once: Annotated[bool, typer.Option("--once", help="Run due jobs, then exit.")] = False,
        poll_s: Annotated[float, typer.Option(help="Idle poll interval, seconds.")] = 0.5,
        providers_file: ProvidersFile = None,
    ) -> None:
        """Run background jobs (derive, consolidate) for every memory until stopped."""
        use_providers_file(providers_file)

        def body():
            from remem.service.jobs.runner import Worker

            w = Worker(open_store())
            if once:
                out = w.run_until_idle()
                emit(out, f"ran {len(out)} jobs")
                return
            stopping = {"now": False}

            def stop(*_):
                stopping["now"] = True

            signal.signal(signal.SIGTERM, stop)
            signal.signal(signal.SIGINT, stop)
            say(f"remem worker {w.worker_id} on {STATE.db}; Ctrl-C stops.")
            w.run_forever(poll_s=poll_s, stop=lambda: stopping["now"],
                          on_job=lambda r: emit(r, f"{r['kind']} {r['status']} {r['job_id']}"))
        run(body)

    @app.command()
    def kip(file: Annotated[str, typer.Option("--file", "-f",
                                              help="KIP request JSON, or - for stdin.")]) -> None:
        """Serve one KIP 2.0 Memory Interface request."""
        def body():
            from remem.cli.main import read_input
            from remem.domain import jsondoc

            req = jsondoc.loads(read_input(file, "file"), field="request")
            out = current_memory().kip(req)
            emit(out)  # the JSON itself, unwrapped (rich would fold long lines inside strings)
        run(body)
