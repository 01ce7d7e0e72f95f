"""CLI: forget, legal holds and retention (thin commands over Memory)."""

from __future__ import annotations

from typing import Annotated

import typer
from remem.cli.output import STATE, SafeTable, emit, escape_controls, table
from remem.errors import InvalidInput, LegalHoldActive


def _report_table(rep: dict) -> SafeTable:
    return table(f"erasure report: {rep['state']}  ({len(rep['items'])} items, "
                 f"{rep['tombstones']} tombstones)",
                 ["surface", ("erased", {"justify": "right"}), "state"],
                 ((name, s["erased"], s["state"]) for name, s in rep["surfaces"].items()))


def register(app: typer.Typer) -> None:
    from remem.cli.main import current_memory, run

    @app.command()
    def forget(
        scope_or_item: Annotated[str | None, typer.Argument(metavar="SCOPE|ITEM_ID")] = None,
        key: Annotated[str | None, typer.Argument()] = None,
        value: Annotated[str | None, typer.Option(help="Forget only this value (multi keys).")] = None,
        expected_revision: Annotated[int | None, typer.Option(
            help="Required with SCOPE KEY: the revision shown by inspect.")] = None,
        all_in_scope: Annotated[str | None, typer.Option(
            "--all-in-scope", metavar="SCOPE",
            help="Forget every item and source of SCOPE (asks first unless --yes).")] = None,
        yes: Annotated[bool, typer.Option("--yes", help="Do not ask (--all-in-scope).")] = False,
    ) -> None:
        """Forget for real: `forget SCOPE KEY --expected-revision N`, `forget ITEM_ID`, or
        `forget --all-in-scope SCOPE`.

        Erases every copy: the item, every occurrence of the same claim, and every earlier or
        later value linked to it by supersession or merge (a key's history goes with it);
        other values of a multi-valued key stay. A tombstone keeps it from being re-learned.
        --all-in-scope erases every item and every source of one scope in one report.
        """
        def body():
            m = current_memory()
            if all_in_scope is not None or scope_or_item is None:
                return _forget_scope(m, all_in_scope, scope_or_item, yes)
            try:
                if key is None:
                    rep = m.forget(scope_or_item)
                else:
                    if expected_revision is None:
                        raise InvalidInput("forget SCOPE KEY needs --expected-revision N (see "
                                           "`remem inspect SCOPE KEY`).",
                                           field="expected_revision")
                    rep = m.forget(scope=scope_or_item, key=key, value=value,
                                   expected_revision=expected_revision)
            except LegalHoldActive as exc:
                if STATE.json:
                    raise
                emit(exc.details.get("report"), _report_table(exc.details["report"]))
                raise
            out = rep.to_dict()
            emit(out, _report_table(out))
            if out["state"] != "completed":
                raise typer.Exit(3)
        run(body)

    def _forget_scope(m, scope: str | None, positional: str | None, yes: bool) -> None:
        if scope is None or positional is not None:
            raise InvalidInput("Give what to forget: ITEM_ID, SCOPE KEY, or --all-in-scope "
                               "SCOPE (alone).", field="scope")
        if not yes:
            if STATE.json:
                raise InvalidInput("forget --all-in-scope with --json needs --yes (it does "
                                   "not ask).", field="yes")
            typer.confirm(f"Forget every item and source of scope "
                          f"'{escape_controls(scope)}'? This cannot be undone.", abort=True)
        try:
            out = m.forget_scope(scope).to_dict()
        except LegalHoldActive as exc:
            if not STATE.json:
                emit(exc.details.get("report"), _report_table(exc.details["report"]))
            raise
        emit(out, _report_table(out))
        if out["state"] != "completed":
            raise typer.Exit(3)

    @app.command()
    def hold(item_id: str,
             release: Annotated[bool, typer.Option("--release", help="Release the hold.")] = False
             ) -> None:
        """Set (or --release) a legal hold on an item (admin)."""
        def body():
            mem = current_memory()
            out = mem.release_hold(item_id) if release else mem.set_legal_hold(item_id, True)
            emit(out, f"{'Released' if release else 'Set'} legal hold on {item_id}.")
        run(body)

    retention = typer.Typer(help="Retention: keep_until / keep_days and the retention job.",
                            no_args_is_help=True)
    app.add_typer(retention, name="retention")

    @retention.command("run")
    def retention_run() -> None:
        """Erase every expired item (actor system:retention) and report it."""
        def body():
            out = current_memory().run_retention()
            emit(out, f"Erased {len(out['erased'])} items; {len(out['blocked'])} blocked by "
                      "legal hold.")
        run(body)

    @retention.command("set")
    def retention_set(
        item_id: str,
        keep_days: Annotated[int | None, typer.Option(help="Keep for N days after creation.")] = None,
        keep_until: Annotated[str | None, typer.Option(help="ISO time with zone.")] = None,
    ) -> None:
        """Set an item's retention."""
        def body():
            from remem.domain.timefmt import from_iso
            out = current_memory().set_retention(
                item_id, keep_days=keep_days,
                keep_until=from_iso(keep_until) if keep_until else None)
            emit(out, f"{item_id} kept until {out['keep_until']}.")
        run(body)

