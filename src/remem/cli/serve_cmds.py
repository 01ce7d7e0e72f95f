"""CLI: ``remem serve`` (HTTP API and the /ui manage view on uvicorn), ``remem token
create|list|revoke`` and ``remem openapi`` (regenerate the committed ``openapi.json``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from remem.cli.output import (
    STATE,
    ProvidersFile,
    SafeTable,
    emit,
    fail,
    say,
    table,
    use_providers_file,
)

from remem.errors import InvalidInput, NotFound

OPENAPI_FILE = "openapi.json"


def openapi_text() -> str:
    """The app's OpenAPI document as committed: 2-space JSON with a final newline."""
    from remem.api.app import openapi_schema

    return json.dumps(openapi_schema(), indent=2, ensure_ascii=False) + "\n"


def _tokens_table(rows: list[dict]) -> SafeTable:
    cols = ("token_id", "memory_id", "role", "subject", "label", "created_at", "revoked_at")
    return table("tokens", cols, ((r[c] or "" for c in cols) for r in rows))


def register(app: typer.Typer) -> None:
    from remem.cli.main import open_store, run

    @app.command()
    def serve(
        host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
        port: Annotated[int, typer.Option(help="TCP port.", min=1, max=65535)] = 8080,
        log_level: Annotated[str, typer.Option(help="uvicorn log level.")] = "info",
        providers_file: ProvidersFile = None,
    ) -> None:
        """Serve the HTTP API and the manage view at /ui on uvicorn (tokens from `remem token
        create`)."""
        use_providers_file(providers_file)

        def body():
            import uvicorn

            from remem.api import create_app
            from remem.api.access_log import log_config

            store = open_store()
            store.list_memories()  # open and migrate now: a bad --db fails before listening
            try:
                uvicorn.run(create_app(store), host=host, port=port, log_level=log_level,
                            log_config=log_config())
            finally:
                store.close()
        run(body)

    token_app = typer.Typer(help="API bearer tokens: create (shown once), list, revoke.",
                            no_args_is_help=True)
    app.add_typer(token_app, name="token")

    @token_app.command("create")
    def token_create(
        role: Annotated[str, typer.Option(help="reader | writer | admin")],
        subject: Annotated[str, typer.Option(help="admin | user:<id> | agent:<id> | ...")],
        memory: Annotated[str | None, typer.Option(
            "--memory", "-m", help="Memory the token is bound to (may not exist yet).")] = None,
        label: Annotated[str | None, typer.Option(help="A note for `token list`.")] = None,
        tenant: Annotated[str | None, typer.Option(
            help="Tenant of a memory not created yet (default: the memory's own).")] = None,
    ) -> None:
        """Create a token and print it once (only its sha256 is stored)."""
        def body():
            from remem.errors import InvalidInput
            from remem.service.tokens import Tokens

            memory_id = memory or STATE.memory
            if not memory_id:
                raise InvalidInput("token create needs --memory ID.", field="memory")
            token, info = Tokens(open_store()).create(memory_id, role, subject, label,
                                                      tenant_id=tenant)
            if STATE.json:
                emit({**info.to_dict(), "token": token})
                return
            typer.echo(token)  # plain, unwrapped: the only time the token is shown
            say(f"token {info.token_id}: {info.role} {info.subject} on memory "
                f"{info.memory_id}. Shown once; store it now.", err=True)
        run(body)

    @token_app.command("list")
    def token_list(
        memory: Annotated[str | None, typer.Option(
            "--memory", "-m", help="Only this memory's tokens.")] = None,
    ) -> None:
        """List tokens (ids, roles, subjects; never the tokens)."""
        def body():
            from remem.service.tokens import Tokens

            rows = [t.to_dict() for t in Tokens(open_store()).list(memory or STATE.memory)]
            emit(rows, _tokens_table(rows) if rows else "(no tokens)")
        run(body)

    @token_app.command("revoke")
    def token_revoke(token_id: str) -> None:
        """Revoke a token by id: it stops authenticating at once."""
        def body():
            from remem.service.tokens import Tokens

            info = Tokens(open_store()).revoke(token_id)
            emit(info.to_dict(), f"Revoked token {info.token_id} ({info.subject}).")
        run(body)

    @app.command()
    def openapi(
        output: Annotated[Path, typer.Option("--output", "-o", help="File to write.")]
        = Path(OPENAPI_FILE),
        check: Annotated[bool, typer.Option(
            "--check", help="Exit 1 if the file differs instead of writing it.")] = False,
    ) -> None:
        """Regenerate openapi.json from the app (or --check that it is current)."""
        text = openapi_text()
        if check:
            if not output.is_file():
                fail(NotFound(f"{output} does not exist; run `remem openapi` to write it, or "
                              "give the file to check with --output.", file=str(output)))
            if output.read_text(encoding="utf-8") != text:
                fail(InvalidInput(f"{output} is out of date; run `remem openapi`.",
                                  field="output", file=str(output)))
            emit({"file": str(output), "current": True}, f"{output} is current.")
            return
        output.write_text(text, encoding="utf-8")
        emit({"file": str(output), "written": True}, f"Wrote {output}.")
