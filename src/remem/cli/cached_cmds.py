"""CLI: Kind-B cached facts — refresh one now, run the background sweep, show the source."""

from __future__ import annotations

from typing import Annotated

import typer

from remem.cli.output import emit, escape_controls
from remem.errors import InvalidInput


def _refresh_human(out: dict) -> str:
    line = f"{out['state']}: item {out['item_id']}"
    if out.get("new_item_id") and out["new_item_id"] != out["item_id"]:
        line += f" -> item {out['new_item_id']}"
    if out.get("stale"):
        line += " (stale)"
    if out.get("reason"):
        line += f": {escape_controls(out['reason'])}"
    return line


def register(app: typer.Typer) -> None:
    from remem.cli.main import current_memory, run

    @app.command()
    def refresh(
        item_id: Annotated[str | None, typer.Argument(metavar="ITEM_ID")] = None,
        due: Annotated[bool, typer.Option("--due", help="Sweep every stale background "
                                          "cached fact now (what the refresh job does).")
                       ] = False,
    ) -> None:
        """Refresh a Kind-B cached fact from its source now: `refresh ITEM_ID`, or
        `refresh --due` for the background sweep.

        A new value supersedes the item (history and the ledger see it); an unchanged one
        (HTTP 304 or the same body) only advances lastVerifiedAt; a failure keeps the fact
        and labels it stale with the reason. Exit 3 when the refresh failed.
        """
        def body():
            m = current_memory()
            if due:
                out = m.refresh_due()
                emit(out, ", ".join(f"{k} {v}" for k, v in out.items()))
                return
            if item_id is None:
                raise InvalidInput("refresh needs ITEM_ID, or --due for the sweep.",
                                   field="item_id")
            out = m.refresh(item_id)
            emit(out, _refresh_human(out))
            if out["state"] == "failed":
                raise typer.Exit(3)
        run(body)
