"""CLI: receipts, job runs and the worker process (thin commands; KIP: kip_cmds)."""

from __future__ import annotations

import json
import signal
from typing import Annotated

import typer
from remem.domain.jsondoc import UnrepresentableNumber, parse_float
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

    @app.command("observe-many")
    def observe_many(
        scope: str,
        file: Annotated[str, typer.Option(
            "--file", help="JSON Lines, one turn per line: {text, id?, role?, actor?, "
                           "occurred_at?, kind?, idempotency_key?, metadata?}; - reads "
                           "stdin.")],
        run_id: Annotated[str | None, typer.Option(help="Conversation/run id (chain).")
                          ] = None,
        batch_size: Annotated[int, typer.Option(
            help="Turns per batch (one embedding call and one transaction each).")] = 256,
    ) -> None:
        """Record many turns of one scope from a JSONL file, in batches."""
        def body():
            from remem.cli.main import MAX_LINE_BYTES, read_lines
            from remem.errors import InvalidInput
            from remem.service.intake import MAX_OBSERVE_MANY

            if not 1 <= batch_size <= MAX_OBSERVE_MANY:
                raise InvalidInput(f"--batch-size must be in 1..{MAX_OBSERVE_MANY}.",
                                   field="batch_size")
            turns = []
            for n, line in enumerate(read_lines(file, "file", MAX_LINE_BYTES), start=1):
                if line.strip():
                    try:
                        turns.append(json.loads(line, parse_float=parse_float))
                    except UnrepresentableNumber as exc:
                        raise exc.refusal(f"line {n} of --file") from None
                    except ValueError as exc:
                        raise InvalidInput(f"line {n} of --file is not JSON.",
                                           field="file", line=n) from exc
            m, receipts = current_memory(), []
            for start in range(0, len(turns), batch_size):
                receipts += m.observe_many(scope, turns[start:start + batch_size],
                                           run_id=run_id)
            new = sum(not r.replayed for r in receipts)
            emit([r.to_dict() for r in receipts],
                 f"{len(receipts)} turns: {new} recorded, {len(receipts) - new} replayed")
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
    def resummarize(
        run_now: Annotated[bool, typer.Option(
            "--run", help="Also run the memory's due jobs now (embedded use).")] = False,
    ) -> None:
        """Bring the memory's consolidation forward (maintenance); --run runs it now."""
        def body():
            m = current_memory()
            out = dict(m.resummarize())
            if run_now:
                out["ran"] = m.run_jobs()
            emit(out, f"consolidation {out['job_id']} due {out['run_at'][:19]}"
                      + (f"; ran {len(out['ran'])} job(s)" if run_now else ""))
        run(body)

    @app.command()
    def worker(
        once: Annotated[bool, typer.Option("--once", help="Run due jobs and owed erasure scrubs, then exit.")] = False,
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
                w.finish_erasures()  # scrubs a forget left pending (e.g. a large table)
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
