"""CLI: end a host session (``deactivate``) and the KickSide queryable contract (``query``)."""

from __future__ import annotations

from typing import Annotated

import typer
from remem.cli.output import emit, table
from remem.cli.recall_cmds import ScopeOpt


def register(app: typer.Typer) -> None:
    from remem.cli.main import current_memory, run

    @app.command()
    def deactivate(
        scope: Annotated[str, typer.Option("--scope", "-s", help="The session's scope "
                                           "(writable by the caller), e.g. user:alice.")],
        session: Annotated[str, typer.Option("--session", help="The host's session "
                                             "(conversation) id, as captured.")],
        host_kind: Annotated[str, typer.Option(help="The host's name for sessions.")] = "chat",
    ) -> None:
        """End a session: bring the memory's consolidation forward (a worker runs it)."""
        def body():
            out = current_memory().deactivate(scope, host_kind, session)
            job = out["consolidation"]
            emit(out, f"session {host_kind}:{session} deactivated; consolidation "
                      f"{job['job_id']} due {job['run_at'][:19]}")
        run(body)

    @app.command()
    def query(
        text: str, scope: ScopeOpt,
        limit: Annotated[int, typer.Option(help="Most results (1-100).")] = 10,
    ) -> None:
        """Current items nearest TEXT with meta (node_type, similarity, created_at)."""
        def body():
            results = current_memory().query(scope, text, limit=limit)
            rows = ((r["key"], _short(r["value"]), r["meta"]["node_type"],
                     f"{r['meta']['similarity']:.4f}", r["meta"]["created_at"][:19], r["id"])
                    for r in results)
            emit({"results": results}, table("query", ("key", "value", "node_type",
                                                       "similarity", "created", "id"), rows)
                 if results else "(no current items match)")
        run(body)


def _short(value: object) -> str:
    import json

    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."
