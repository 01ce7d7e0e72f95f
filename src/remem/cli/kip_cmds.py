"""CLI: the KIP 2.0 Memory Interface (thin commands).

``remem kip --file req.json`` serves one request (prints the KIP response; exit 1 when it
failed), ``remem kip describe`` prints the descriptor, ``remem kip stage`` stages a source that
requests then name by ``source_ref``.
"""

from __future__ import annotations

from typing import Annotated

import typer

from remem.cli.output import emit, json_text


def register(app: typer.Typer) -> None:
    from remem.cli.main import current_memory, run

    kip_app = typer.Typer(help="KIP 2.0 Memory Interface: requests, descriptor, staged "
                               "sources.", invoke_without_command=True, no_args_is_help=False)

    @kip_app.callback()
    def kip(ctx: typer.Context,
            file: Annotated[str | None, typer.Option(
                "--file", "-f", help="KIP request JSON, or - for stdin.")] = None) -> None:
        """Serve one KIP request (--file), or run a subcommand."""
        if ctx.invoked_subcommand is not None:
            return
        if file is None:
            typer.echo(ctx.get_help())
            raise typer.Exit(2)

        def body():
            from remem.cli.main import MAX_FILE_BYTES, read_input
            from remem.domain import jsondoc

            req = jsondoc.loads(read_input(file, "file", MAX_FILE_BYTES), field="request")
            out = current_memory().kip(req)
            emit(out, json_text(out))
            if out.get("status") == "failed":
                raise typer.Exit(1)
        run(body)

    @kip_app.command()
    def describe() -> None:
        """Print the binding's descriptor (bundles, default budget, tokenizer,
        minimum_response_tokens)."""
        def body():
            out = current_memory().kip_descriptor()
            emit(out, json_text(out))
        run(body)

    @kip_app.command()
    def stage(scope: str, source_ref: str,
              file: Annotated[str, typer.Option("--file", "-f",
                                                help="The source's exact text, or - for stdin.")],
              role: Annotated[str, typer.Option(help="user, assistant, agent, tool, ...")] = "user",
              actor: Annotated[str | None, typer.Option(help="Who said it.")] = None,
              digest: Annotated[str | None, typer.Option(
                  help="sha256:<hex> of the text's UTF-8 bytes (checked).")] = None,
              kind: Annotated[str | None, typer.Option(
                  help="Log entry kind (user-message, tool-result, ...; default: from role)."
              )] = None,
              payload: Annotated[str | None, typer.Option(
                  help="Kind-specific payload, a JSON object (unknown fields kept).")] = None,
              caused_by: Annotated[str | None, typer.Option(
                  help="Source id of the log entry that caused this one.")] = None) -> None:
        """Stage a host-captured source for KIP observe/revise/feedback."""
        def body():
            from remem.cli.main import MAX_FILE_BYTES, read_input
            from remem.errors import InvalidInput

            raw = read_input(file, "file", MAX_FILE_BYTES)
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InvalidInput("The source text is not valid UTF-8.", field="file") from exc
            from remem.cli.recall_cmds import parse_json_option

            out = current_memory().stage_source(
                scope, text, source_ref=source_ref, digest=digest, role=role, actor=actor,
                kind=kind, payload=parse_json_option(payload, "--payload"),
                caused_by_log_id=caused_by)
            emit(out, json_text(out))
        run(body)

    app.add_typer(kip_app, name="kip")


__all__ = ["register"]
