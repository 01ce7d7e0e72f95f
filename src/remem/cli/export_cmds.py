"""CLI: ``remem export --format log-facts`` and ``remem import`` (thin: parse, call, render)."""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer

from remem.cli.output import STATE, emit, err_console
from remem.errors import InvalidInput, NotFound

FORMATS = ("log-facts",)


@contextmanager
def _bar(label: str, enabled: bool):
    """A rich progress bar on stderr when it is a terminal (and not --json); yields the
    ``progress(done, total)`` callback the service calls, or None."""
    if not enabled or STATE.json or not err_console.is_terminal:
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    with Progress("[progress.description]{task.description}", BarColumn(),
                  MofNCompleteColumn(), TimeRemainingColumn(), console=err_console) as bar:
        task = bar.add_task(label, total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total or None)

        yield progress


def _summary_text(verb: str, s: dict[str, Any], where: str) -> str:
    rate = f", {s['records_per_s']:,.0f} records/s" if s.get("records_per_s") else ""
    lines = [f"{verb} {s['records']} records ({s['log_entries']} log entries, {s['facts']} "
             f"facts, {s['tombstones']} tombstones) {where}: {s['bytes']:,} bytes in "
             f"{s['seconds']:.2f}s{rate}."]
    return "\n".join(lines + [f"warning: {w}" for w in s.get("warnings", [])])


def register(app: typer.Typer) -> None:
    from remem.cli.main import current_memory, open_store, run

    @app.command("export")
    def export_cmd(
        out: Annotated[str, typer.Option("--out", "-o", help="File to write (JSON Lines); "
                                                             "- for stdout.")],
        fmt: Annotated[str, typer.Option("--format", help="Export format: log-facts "
                                                          "(Log+Facts 1.3.0 JSON Lines).")
                       ] = "log-facts",
        tenant: Annotated[str | None, typer.Option(
            help="tenantId written in every record's scope (default: the memory's tenant)."
        )] = None,
        memory: Annotated[str | None, typer.Option(
            "--memory", "-m", help="Memory id (overrides the global --memory).")] = None,
        claim_key: Annotated[bool, typer.Option(
            "--claim-key/--no-claim-key",
            help="With tombstones, carry the memory's claim key so an import under the same "
                 "id keeps forgotten claims forgotten (--no-claim-key: an audit copy that "
                 "cannot confirm guesses of forgotten values).")] = True,
    ) -> None:
        """Export a memory as Log+Facts JSON Lines: one LogEntry or Fact per line, each
        validated against the schema while writing (owner or admin). Forgotten content is
        never exported; tombstones are."""
        def body():
            if fmt not in FORMATS:
                raise InvalidInput(f"--format {fmt!r} is not supported; use log-facts.",
                                   field="format")
            if memory:
                STATE.memory = memory
            mem = current_memory()
            to_stdout = out == "-"
            with _bar("exporting", not to_stdout) as progress:
                if to_stdout:
                    s = mem.export_log_facts_to(sys.stdout.buffer, tenant=tenant,
                                                progress=progress, claim_key=claim_key)
                    sys.stdout.buffer.flush()
                    return
                try:
                    # 0600 when created: the export holds every memory's text
                    fh = os.fdopen(os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600),
                                   "wb")
                except OSError as exc:
                    raise InvalidInput(f"--out {out!r} cannot be written ({exc.strerror}).",
                                       field="out") from exc
                with fh:
                    s = mem.export_log_facts_to(fh, tenant=tenant, progress=progress,
                                                claim_key=claim_key)
            doc = {"memory": mem.id, "out": out, **s.to_dict()}
            emit(doc, _summary_text("Exported", doc, f"to {out}"))
        run(body)

    @app.command("import")
    def import_cmd(
        file: Annotated[Path, typer.Argument(help="Log+Facts JSON Lines file.")],
        memory: Annotated[str | None, typer.Option(
            "--memory", "-m", help="Memory id (overrides the global --memory); created when "
                                   "it does not exist.")] = None,
    ) -> None:
        """Import a Log+Facts JSON Lines file: every line is validated first (nothing is
        written if one is invalid; the error names its line and field), then the memory is
        rebuilt through the decision (ledger, chains and read model consistent)."""
        def body():
            if memory:
                STATE.memory = memory
            if not file.is_file():
                raise InvalidInput(f"{str(file)!r} is not a readable file.", field="file")
            try:
                mem, created = current_memory(), False
            except NotFound:  # validate before creating it: a bad file writes nothing
                from remem.service.logfacts_import import check_file

                check_file(file)
                mem, created = open_store().create_memory(STATE.memory), True
            with _bar("importing", True) as progress:
                s = mem.import_log_facts(file, progress=progress)
            doc = {"memory": mem.id, "created": created, **s.to_dict()}
            emit(doc, _summary_text("Imported", doc, f"into {mem.id}"))
        run(body)
