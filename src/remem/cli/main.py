"""``remem`` command line: ``remem [--db PATH] [--memory ID] [--json] COMMAND``."""

from __future__ import annotations

import contextlib
import os
import re
import sys
from pathlib import Path
from typing import Annotated, Any

import click
import typer

import remem
from remem.cli import recall_cmds
from remem.cli.instantkv import InstantKVGroup, set_options
from remem.cli.output import (
    STATE,
    emit,
    escape_controls,
    fail,
    items_table,
    json_text,
    say,
    value_text,
)
from remem.domain import jsondoc
from remem.errors import InvalidInput, RememError

app = typer.Typer(help="remem: long-term memory for LLM agents.", no_args_is_help=True,
                  pretty_exceptions_enable=False, add_completion=False, cls=InstantKVGroup)
memory_app = typer.Typer(help="Create, list, show and delete memories.", no_args_is_help=True)
app.add_typer(memory_app, name="memory")

DEFAULT_DB = "remem.db"


@app.callback()
def main_options(
    db: Annotated[str | None, typer.Option(
        "--db", envvar="REMEM_DATABASE_URL",
        help="SQLite file path or postgresql:// URL [env: REMEM_DATABASE_URL; default remem.db]"
    )] = None,
    memory: Annotated[str | None, typer.Option(
        "--memory", "-m", envvar="REMEM_MEMORY", help="Memory id [env: REMEM_MEMORY].")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")] = False,
    providers_file: Annotated[str | None, typer.Option(
        "--providers-file", envvar="REMEM_PROVIDERS_FILE",
        help="Operator file (JSON or TOML) registering model providers by name; memory "
             "configs pick one by name.")] = None,
    url: Annotated[str | None, typer.Option(
        "--url", help="instantKV drop-in: a running `remem serve` (loopback http origin "
                      "only; redirects rejected). Needs --namespace and --secrets-file.")] = None,
    secrets_file: Annotated[str | None, typer.Option(
        "--secrets-file", help="instantKV drop-in: private file with INSTANTKV_APP_TOKEN= or "
                               "REMEM_TOKEN= (read, never sourced).")] = None,
    namespace: Annotated[str | None, typer.Option(
        "--namespace", help="instantKV drop-in: the memory id; apply/profile/context/"
                            "inspect/forget/capture then take instantKV's arguments.")] = None,
    scope: Annotated[str | None, typer.Option(
        "--scope", help="instantKV drop-in: the scope entity 'user' names; a bare NAME is "
                        "user:NAME (personal -> user:personal).")] = None,
) -> None:
    STATE.db = db or DEFAULT_DB
    STATE.providers_file = providers_file
    STATE.memory = namespace or memory
    STATE.json = json_output
    set_options(url, secrets_file, namespace, scope)


def open_store() -> remem.RememStore:
    """The database of --db with the providers of --providers-file; REMEM_DERIVE=worker
    leaves derive jobs to `remem worker`.

    Raises:
        ConfigInvalid: the providers file cannot be read or has a bad entry.
    """
    import os

    settings = remem.load_settings(STATE.db, STATE.providers_file)
    return remem.open(settings, derive=os.environ.get("REMEM_DERIVE", "inline"))


def current_memory(create: bool = False) -> remem.Memory:
    if not STATE.memory:
        raise InvalidInput("No memory selected; pass --memory ID (or set REMEM_MEMORY).",
                           field="memory")
    store = open_store()
    return store.memory(STATE.memory)


class InternalError(RememError):
    """An unexpected exception in a command (a bug), reported without its traceback."""

    code = "internal_error"


def run(fn) -> Any:
    """Runs a command body, turning RememError into a clean message and exit code 1; any other
    exception is a bug: one line naming its type (no traceback, paths or SQL) and exit code 2,
    unless ``REMEM_DEBUG=1`` asks for the traceback."""
    try:
        return fn()
    except RememError as exc:
        fail(exc)
    except (typer.Exit, typer.Abort, click.exceptions.Exit, click.exceptions.Abort,
            click.ClickException):
        raise  # a command's own exit code or usage error, not a bug
    except Exception as exc:  # noqa: BLE001 - the last line of defence of a command
        if os.environ.get("REMEM_DEBUG") == "1":
            raise
        fail(InternalError(f"remem hit an internal error ({type(exc).__name__}); nothing "
                        "should have been half-written, but this is a bug: please report the "
                        "command (REMEM_DEBUG=1 shows the traceback)."), exit_code=2)


#: Bytes a request-sized file argument may hold (``kip --file``, ``kip stage --file``,
#: ``memory create --config``): the HTTP API's body limit.
MAX_FILE_BYTES = 65_536


def _unreadable(path: str | Path, option: str, exc: OSError) -> InvalidInput:
    return InvalidInput(f"--{option} {str(path)!r} cannot be read ({exc.strerror}); give an "
                        "existing file, or - for stdin.", field=option)


def open_input(path: str | Path, option: str) -> Any:
    """A binary stream of a file, or of stdin for ``-`` (left open: the caller's stdin).

    Raises:
        InvalidInput: the file is missing or unreadable (no traceback reaches the user).
    """
    if str(path) == "-":
        return contextlib.nullcontext(sys.stdin.buffer)
    try:
        return open(path, "rb")  # noqa: SIM115 - the caller closes it (with ...)
    except OSError as exc:
        raise _unreadable(path, option, exc) from exc


def over_limit(option: str, limit: int) -> InvalidInput:
    return InvalidInput(f"--{option.replace('_', '-')} is over {limit:,} bytes; nothing was "
                        "read past that and nothing was written. Give a smaller file.",
                        field=option, limit=limit)


def read_input(path: str | Path, option: str, limit: int) -> bytes:
    """Bytes of a file, or of stdin for ``-``: at most ``limit`` (one more byte is read to
    tell, never the rest, so ``/dev/zero`` or a pipe that stays open is refused at once).

    Raises:
        InvalidInput: unreadable, or over ``limit`` bytes (``details.limit``).
    """
    try:
        with open_input(path, option) as stream:
            data = stream.read(limit + 1)
    except OSError as exc:  # e.g. a directory: open works, read fails
        raise _unreadable(path, option, exc) from exc
    if len(data) > limit:
        raise over_limit(option, limit)
    return data


#: Bytes one line of a JSON Lines file argument may hold (``observe-many --file``: a turn's
#: text is at most 16,384 bytes, escaped JSON up to six times that, plus its metadata).
MAX_LINE_BYTES = 1024 * 1024


def read_lines(path: str | Path, option: str, limit: int) -> list[str]:
    """The lines of a UTF-8 file (or stdin for ``-``), each at most ``limit`` bytes: a longer
    line is refused as soon as it passes the limit, without reading the rest.

    Raises:
        InvalidInput: unreadable, not UTF-8, or a line over ``limit`` bytes (``details.limit``).
    """
    lines = []
    try:
        with open_input(path, option) as stream:
            while line := stream.readline(limit + 1):  # a full line, or one byte too many
                if len(line.rstrip(b"\r\n")) > limit:
                    raise over_limit(option, limit)
                lines.append(line.decode("utf-8"))
    except OSError as exc:
        raise _unreadable(path, option, exc) from exc
    except UnicodeDecodeError:
        raise InvalidInput(f"--{option} is not UTF-8 text.", field=option) from None
    return [ln.rstrip("\r\n") for ln in lines]


def read_json_file(path: str | Path, option: str) -> Any:
    """Parsed JSON of a file (strict: ``domain.jsondoc``); bad JSON is InvalidInput naming
    the option."""
    return jsondoc.loads(read_input(path, option, MAX_FILE_BYTES), field=f"--{option}")


def parse_json_value(text: str, as_json: bool) -> Any:
    if not as_json:
        return text
    try:
        return jsondoc.loads(text, field="value")
    except InvalidInput as exc:
        if exc.details.get("reason") != "syntax":
            raise
        raise InvalidInput(f"--json-value: {text!r} is not JSON; quote text or drop "
                           "--json-value.", field="value") from None


# --- memory admin ------------------------------------------------------------------------
@memory_app.command("create")
def memory_create(
    memory_id: str,
    config: Annotated[Path | None, typer.Option(help="JSON config file.")] = None,
    tenant: Annotated[str | None, typer.Option(
        help="Tenant the memory belongs to for good (default: 'default').")] = None,
) -> None:
    """Create a memory (config validated against the JSON Schema) in a tenant."""
    def body():
        cfg = read_json_file(config, "config") if config else None
        m = open_store().create_memory(memory_id, cfg, tenant_id=tenant)
        emit({"memory": memory_id, "created": True, "tenant": m.ctx.tenant_id},
             f"Created memory {memory_id} in tenant {m.ctx.tenant_id}.")
    run(body)


@memory_app.command("list")
def memory_list() -> None:
    """List memories in the database."""
    def body():
        rows = open_store().list_memories()
        emit(rows, "\n".join(r["memory_id"] for r in rows) or "(no memories)")
    run(body)


@memory_app.command("show")
def memory_show(memory_id: str) -> None:
    """Show a memory's config and status."""
    def body():
        store = open_store()
        m = store.memory(memory_id)
        data = {"config": m.config, **m.status()}
        emit(data, f"{memory_id}\n{json_text(data)}")
    run(body)


@memory_app.command("delete")
def memory_delete(memory_id: str,
                  yes: Annotated[bool, typer.Option("--yes", help="Do not ask.")] = False) -> None:
    """Delete a memory: purge its ledger and every row. Refused (legal_hold_active, exit 1)
    while any item is under legal hold: release the holds first (`remem hold ID --release`)."""
    def body():
        if not yes and not STATE.json:
            typer.confirm(f"Delete memory '{escape_controls(memory_id)}' and all its data?",
                          abort=True)
        counts = open_store().delete_memory(memory_id)  # refuses held items
        emit({"memory": memory_id, "deleted": True, "rows": counts},
             f"Deleted memory {memory_id} ({sum(counts.values())} rows).")
    run(body)


# --- writes --------------------------------------------------------------------------------
def _write_human(r: remem.WriteResult) -> str:
    extra = " (replayed)" if r.replayed else ""
    return (f"{r.outcome}{extra}: {r.scope} {r.key} -> item {r.item_id} "
            f"(revision {r.revision}, status {r.status})")


@app.command()
def remember(
    scope: str, key: str, value: str,
    kind: Annotated[str | None, typer.Option(help="identity|rule|profile_slot|fact|preference|"
                                                  "skill|lesson")] = None,
    json_value: Annotated[bool, typer.Option("--json-value", help="Parse VALUE as JSON.")] = False,
    valid_at: Annotated[str | None, typer.Option(help="ISO time the value holds from.")] = None,
    source_id: Annotated[str | None, typer.Option()] = None,
    quote: Annotated[str | None, typer.Option(help="Source quote.")] = None,
    idempotency_key: Annotated[str | None, typer.Option()] = None,
    metadata: recall_cmds.MetadataOpt = None,
    cached_source_json: Annotated[str | None, typer.Option(
        "--cached-source-json", help="Make it a Kind-B cached fact: the Log+Facts Source "
        "block as JSON, e.g. '{\"kind\":\"http-api\",\"uri\":\"https://...\","
        "\"freshness\":{\"ttlSeconds\":300},\"refresh\":{\"strategy\":\"on-read\"}}'.")
    ] = None,
    priority: Annotated[int | None, typer.Option(
        help="0-100, higher is more important; a new priority of the same value revises "
             "the item.")] = None,
) -> None:
    """Remember a value of KEY in SCOPE (e.g. remember user:alice home_city Paris)."""
    def body():
        from remem.domain.timefmt import from_iso
        m = current_memory()
        src = {"id": source_id, "text": quote} if (source_id or quote) else None
        at = from_iso(valid_at, field="valid_at") if valid_at else None
        r = m.remember(scope, key, parse_json_value(value, json_value), kind=kind,
                       valid_at=at, source=src, idempotency_key=idempotency_key,
                       metadata=recall_cmds.parse_json_option(metadata, "--metadata"),
                       cached_source=recall_cmds.parse_json_option(cached_source_json,
                                                                   "--cached-source-json"),
                       priority=priority)
        emit(r, _write_human(r))
        if r.outcome in ("conflict", "forgotten"):
            raise typer.Exit(3)
    run(body)


@app.command()
def correct(
    scope: str, key: str, value: str,
    expected_revision: Annotated[int, typer.Option(help="Revision shown by inspect.")],
    json_value: Annotated[bool, typer.Option("--json-value")] = False,
    replaces: Annotated[str | None, typer.Option(help="Item to correct (multi keys).")] = None,
    source_id: Annotated[str | None, typer.Option()] = None,
    quote: Annotated[str | None, typer.Option()] = None,
) -> None:
    """Correct KEY: the old value was never true. Needs --expected-revision."""
    def body():
        m = current_memory()
        src = {"id": source_id, "text": quote} if (source_id or quote) else None
        r = m.correct(scope, key, parse_json_value(value, json_value),
                      expected_revision=expected_revision, replaces=replaces, source=src)
        emit(r, _write_human(r))
    run(body)


@app.command()
def apply(
    file: Annotated[str, typer.Option("--file", "-f", help="Proposal JSON file, or - for stdin.")],
    scope: Annotated[str | None, typer.Option(help="Scope for entity 'user'.")] = None,
) -> None:
    """Apply instantKV proposals (one object or {"proposals": [...], "applied": false})."""
    def body():
        from remem.domain.limits import MAX_APPLY_BYTES
        from remem.service.apply import apply_document
        data = read_input(file, "file", MAX_APPLY_BYTES)
        out = apply_document(current_memory(), data, default_scope=scope)
        lines = []
        for r in out["results"]:
            if "receipt" in r:
                rc = r["receipt"]
                lines.append(f"[{r['index']}] {rc['status']}{' (replayed)' if rc['replayed'] else ''}"
                             f": {rc['scope']} {rc['key']} revision {rc['revision']}")
            else:
                lines.append(f"[{r['index']}] error {r['error']['code']}: "
                             f"{escape_controls(r['error']['message'])}")
        emit(out, "\n".join(lines))
        if not out["ok"]:
            raise typer.Exit(3)
    run(body)


@app.command()
def resolve(group_id: str, keep: Annotated[str, typer.Option(help="Item id to keep.")]) -> None:
    """Resolve a conflict group by keeping one item."""
    def body():
        out = current_memory().resolve_conflict(group_id, keep)
        emit(out, f"Resolved {group_id}: kept {keep} (revision {out['revision']}).")
    run(body)


@app.command()
def archive(item_id: str) -> None:
    """Archive an item (reversible)."""
    run(lambda: emit(current_memory().archive(item_id), f"Archived {item_id}."))


@app.command()
def restore(item_id: str) -> None:
    """Restore an archived item."""
    def body():
        out = current_memory().restore(item_id)
        emit(out, f"Restored {item_id} as {out['status']}.")
    run(body)


# --- reads ---------------------------------------------------------------------------------
@app.command()
def inspect(scope: str, key: str) -> None:
    """Show a key's current value, revision, state, history and conflicts."""
    def body():
        i = current_memory().inspect(scope, key)
        lines = [f"{escape_controls(scope)} {key}  state={i.state}  revision={i.revision}  "
                 f"cardinality={i.cardinality}",
                 f"value: {value_text(i.value) if i.value is not None else '-'}"]
        for label, rows in (("conflicts", i.conflicts), ("history", i.history)):
            for v in rows:
                lines.append(f"  {label}: {value_text(v.value)} ({v.status}, rev {v.revision}, "
                             f"valid_at {v.valid_at[:19]}, item {v.item_id})")
        emit(i, "\n".join(lines))
        if i.state == "empty":
            raise typer.Exit(4)
    run(body)


@app.command("items")
def items_cmd(
    scope: Annotated[str | None, typer.Option()] = None,
    key: Annotated[str | None, typer.Option()] = None,
    kind: Annotated[str | None, typer.Option()] = None,
    status: Annotated[str | None, typer.Option(help="current|superseded|conflict|archived|all")] = None,
    cursor: Annotated[str | None, typer.Option()] = None,
    limit: Annotated[int, typer.Option()] = 50,
    filter_kv: recall_cmds.FilterOpt = None, filter_json: recall_cmds.FilterJsonOpt = None,
    since: recall_cmds.SinceOpt = None, until: recall_cmds.UntilOpt = None,
    recorded_since: recall_cmds.RecSinceOpt = None,
    recorded_until: recall_cmds.RecUntilOpt = None, now: recall_cmds.NowOpt = None,
) -> None:
    """List items (default: current and conflict) with cursor pagination; prints the total."""
    def body():
        from remem.domain.timefmt import from_iso

        f = recall_cmds.build_filters(filter_kv, filter_json, since, until, recorded_since,
                                      recorded_until)
        page = current_memory().items(scope=scope, key=key, kind=kind, status=status,
                                      cursor=cursor, limit=limit, filters=f,
                                      now=from_iso(now, field="now") if now else None)
        human = items_table(page.items)
        emit(page, human)
        if not STATE.json:
            say(f"{len(page.items)} of {page.total} matching items")
        if page.next_cursor and not STATE.json:
            say(f"more: --cursor {page.next_cursor}")
    run(body)


@app.command()
def history(item_id: str) -> None:
    """Show an item's versions, provenance and ledger events."""
    def body():
        h = current_memory().history(item_id)
        emit(h, items_table(h["versions"], title=f"versions of {h['item']['key']}"))
    run(body)


@app.command()
def conflicts(scope: Annotated[str | None, typer.Option()] = None) -> None:
    """List open conflict groups."""
    def body():
        groups = current_memory().conflicts(scope)
        lines = [f"{g['group_id']}  {escape_controls(g['scope'])} {g['key']}: " +
                 ", ".join(f"{value_text(i['value'])} ({i['item_id']})" for i in g["items"])
                 for g in groups]
        emit(groups, "\n".join(lines) or "(no open conflicts)")
    run(body)


@app.command()
def verify() -> None:
    """Walk every hash chain; report each broken link with its position (exit 2 if any)."""
    def body():
        rep = open_store().verify()
        lines = [_verify_lines(mid, r) for mid, r in rep["memories"].items()]
        if rep.get("pending_erasures"):
            lines.append(f"pending erasures: {rep['pending_erasures']} (erased text may still "
                         "be in the files; `remem worker` or the next open finishes them)")
        emit(rep, "\n".join(lines) or "(no memories)")
        if not rep["ok"]:
            raise typer.Exit(2)
    run(body)


def _verify_lines(memory_id: str, r: dict[str, Any]) -> str:
    """One memory's verify result as text: a status line, then one line per broken link."""
    lines = [f"{memory_id}: {'ok' if r['ok'] else 'BROKEN'} ({r['events']} events)"
             + (f" first break at seq {r['broken']['seq']}: {r['broken']['reason']}"
                if r["broken"] else "")]
    for b in r.get("breaks") or []:
        lines.append(f"  ledger position {b['position']} (seq {b['seq']}): {b['reason']}")
    for sb in r.get("sources_breaks") or []:
        lines.append(f"  source chain {sb['run_id']} sequence {sb['sequence']} "
                     f"({sb['source_id']}): {sb['reason']}")
    return "\n".join(lines)


@app.command()
def rebuild() -> None:
    """Drop and refold the read model from the ledger and payloads."""
    def body():
        out = open_store().rebuild(STATE.memory)
        emit(out, "\n".join(f"{k}: refolded {v} events" for k, v in out.items()))
    run(body)


def _register_commands() -> None:
    from remem.cli import forget_cmds

    forget_cmds.register(app)
    from remem.cli import intake_cmds

    intake_cmds.register(app)
    from remem.cli import serve_cmds

    serve_cmds.register(app)
    from remem.cli import recall_cmds

    recall_cmds.register(app)
    from remem.cli import bench_cmds

    bench_cmds.register(app)
    from remem.cli import agent_cmds

    agent_cmds.register(app)
    from remem.cli import status_cmds

    status_cmds.register(app)
    from remem.cli import kip_cmds

    kip_cmds.register(app)
    from remem.cli import cached_cmds

    cached_cmds.register(app)
    from remem.cli import export_cmds

    export_cmds.register(app)
    from remem.cli import session_cmds

    session_cmds.register(app)
    from remem.cli import fact_cmds

    fact_cmds.register(app)


_register_commands()


_SURROGATE = re.compile("[\ud800-\udfff]")


def _json_usage_error(exc: Any, ctx: Any) -> int:
    """A usage error under ``--json``: the one error object on stdout (``invalid_input``
    naming the parameter; ``argv`` when none), click's exit code (2)."""
    param = getattr(exc, "param", None)
    field = getattr(param, "name", None) or "argv"
    hint = f" Try '{ctx.command_path} --help'." if ctx else " Try 'remem --help'."
    message = exc.format_message().rstrip()
    message += "" if message.endswith((".", "!", "?")) else "."
    STATE.json = True
    try:
        fail(InvalidInput(message + hint, field=field), exit_code=exc.exit_code)
    except typer.Exit as ended:
        return ended.exit_code
    return exc.exit_code


def main() -> None:
    """The console script: runs the app; usage errors (which quote the command line) are
    printed escaped, like every other output."""
    from typer._click.exceptions import ClickException, NoArgsIsHelpError  # Typer's click

    bad = next((a for a in sys.argv[1:] if _SURROGATE.search(a)), None)
    if bad is not None:  # bytes that are not UTF-8 reach Python as lone surrogates
        STATE.json = "--json" in sys.argv[1:]
        try:
            fail(InvalidInput(f"The argument {bad!r} is not valid UTF-8; pass text in UTF-8.",
                              field="argv"))
        except typer.Exit as exc:
            sys.exit(exc.exit_code)
    try:
        code = app(standalone_mode=False)
    except NoArgsIsHelpError as exc:  # the help text: ours, not input
        from typer import rich_utils

        rich_utils.rich_format_error(exc)
        sys.exit(exc.exit_code)
    except ClickException as exc:
        ctx = getattr(exc, "ctx", None)
        if STATE.json or "--json" in sys.argv[1:]:
            sys.exit(_json_usage_error(exc, ctx))
        lines = [ctx.get_usage(), f"Try '{ctx.command_path} --help' for help.", ""] if ctx \
            else []
        say("\n".join([*lines, f"Error: {exc.format_message()}"]), err=True)
        sys.exit(exc.exit_code)
    except typer.Abort:
        say("Aborted.", err=True)
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
