"""CLI: ``remem mcp`` (the memory tools and pinned profile over MCP, stdio)."""

from __future__ import annotations

from typing import Annotated

import typer

from remem.cli.output import ProvidersFile, use_providers_file


def register(app: typer.Typer) -> None:
    from remem.cli.main import STATE, open_store, run

    @app.command("mcp")
    def mcp_cmd(
        scope: Annotated[str, typer.Option(
            "--scope", "-s", help="The caller's own scope, e.g. user:alice: the only scope "
                                  "the tools write or forget in.")],
        memory: Annotated[str | None, typer.Option(
            "--memory", "-m", help="Memory id (default: the global --memory / REMEM_MEMORY).")
        ] = None,
        agent: Annotated[str | None, typer.Option(
            "--agent", help="The agent's scope, e.g. agent:bot: searched and pinned, never "
                            "written.")] = None,
        create: Annotated[bool, typer.Option(
            "--create", help="Create the memory (default config) if it does not exist.")
        ] = False,
        providers_file: ProvidersFile = None,
    ) -> None:
        """Serve SearchMemory, Remember, ForgetMemory and remem://profile over MCP (stdio).

        Stdout carries the protocol; errors before serving go to stderr.
        """
        use_providers_file(providers_file)

        def body():
            from remem.agent.binding import Binding
            from remem.agent.mcp import serve
            from remem.errors import InvalidInput, NotFound

            memory_id = memory or STATE.memory
            if not memory_id:
                raise InvalidInput("No memory selected; pass --memory ID.", field="memory")
            Binding.parse(scope, agent)
            store = open_store()
            try:
                mem = store.memory(memory_id)
            except NotFound:
                if not create:
                    raise
                mem = store.create_memory(memory_id)
            try:
                serve(mem, user_scope=scope, agent_scope=agent)
            finally:
                store.close()

        STATE.json = False  # stdout is the protocol stream: errors go to stderr as text
        run(body)
