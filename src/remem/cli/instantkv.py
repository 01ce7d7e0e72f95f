"""The instantKV drop-in commands: ``remem [--url U --secrets-file F] --namespace N
--scope S COMMAND``.

With ``--namespace`` (the memory id) the verbs ``apply``, ``profile``, ``context``,
``inspect``, ``forget`` and ``capture`` take the instantKV controller's arguments and print its
JSON shapes (see ``remem.service.slots``); every other command is remem's own. ``--scope NAME``
is the scope the entity ``user`` names: a bare name maps to ``user:NAME`` (``personal`` ->
``user:personal``), a handle (``user:alice``) is used as is. Without ``--url`` the commands
work on the embedded database (``--db``) as the owner; with it they call a running
``remem serve`` (``remem.cli.remote``) with the token of ``--secrets-file``.

Output is JSON on stdout; failures print ``{"error": {...}, "next_action": ...}`` on stderr
and exit nonzero (1 for an error, 3 for a conflict, a forgotten slot or a failed proposal).
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from remem.errors import InvalidInput, RememError

IKV_COMMANDS = ("apply", "profile", "context", "inspect", "forget", "capture")

#: The fixed next action for each failure code (the seed's "Limits and recovery" table).
NEXT_ACTIONS = {
    "store_unavailable": "Start the server; inspect or retry the identical JSON. A submitted "
                         "write may have committed.",
    "permission_denied": "Check the credential file and the token's grants; writes need a "
                         "writer token, reads a reader.",
    "unauthenticated": "Check the credential file; the token was refused.",
    "revision_mismatch": "Inspect, review and use the new revision for an intentional "
                         "correction or forget.",
    "idempotency_conflict": "Retry the original JSON; use a new source id only for a new "
                            "observation.",
    "slot_full": "Inspect provenance and bounds; do not erase retry protection to force a "
                 "write.",
    "claim_forgotten": "None: the slot was forgotten and default ingestion cannot restore it.",
    "artifact_unavailable": "Start your installed local model, or apply reviewed JSON with "
                            "`apply --file`.",
    "extraction_failed": "Start your installed local model, or apply reviewed JSON with "
                         "`apply --file`.",
    "not_found_or_not_visible": "Check the namespace, scope, entity and attribute.",
}


@dataclass
class Options:
    """The global options of the drop-in (set by the main callback)."""

    url: str | None = None
    secrets_file: str | None = None
    namespace: str | None = None
    scope: str | None = None


OPTIONS = Options()


class InstantKVGroup(TyperGroup):
    """remem's command group: with ``--namespace`` the instantKV verbs resolve to this
    module's commands."""

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if ctx is not None and ctx.params.get("namespace") and cmd_name in IKV_COMMANDS:
            return _commands()[cmd_name]
        return super().get_command(ctx, cmd_name)


_BUILT: dict[str, Any] = {}


def _commands() -> dict[str, Any]:
    if not _BUILT:
        _BUILT.update(typer.main.get_command(ikv_app).commands)  # type: ignore[attr-defined]
    return _BUILT


def set_options(url: str | None, secrets_file: str | None, namespace: str | None,
                scope: str | None) -> None:
    """Called by the main callback; ``--url``/``--secrets-file`` need ``--namespace``."""
    if (url is not None or secrets_file is not None) and not namespace:
        fail(InvalidInput("--url and --secrets-file are for the instantKV verbs; pass "
                          "--namespace ID too.", field="namespace"))
    OPTIONS.url, OPTIONS.secrets_file = url, secrets_file
    OPTIONS.namespace, OPTIONS.scope = namespace, scope


# --- output -----------------------------------------------------------------------------
def out(obj: Any) -> None:
    from remem.cli.output import json_text

    sys.stdout.write(json_text(obj) + "\n")


OPTION_ACTIONS = {
    "url": "Pass a loopback origin with --url, e.g. http://127.0.0.1:8080.",
    "secrets_file": "Make the credential file private (chmod 600) and owned by you, or pass "
                    "another with --secrets-file.",
    "namespace": "Pass --namespace with the memory id.",
    "scope": "Pass --scope with an entity handle.",
}
"""The fixed next action for an invalid command-line option (by the error's ``field``)."""


def _next_action(exc: RememError) -> str:
    """The fixed next action: by the option at fault, else by the error code."""
    field = (exc.to_dict().get("details") or {}).get("field")
    if exc.code == "invalid_input" and field in OPTION_ACTIONS:
        return OPTION_ACTIONS[field]
    return NEXT_ACTIONS.get(exc.code, "Inspect the slot, review, then retry.")


def fail(exc: RememError, code: int = 1) -> None:
    """A typed failure on stderr: code, message, field/index details, the fixed next action.
    No credentials or input text: the messages are remem's, and no value is echoed."""
    from remem.cli.output import json_text

    body = {"error": exc.to_dict(), "next_action": _next_action(exc)}
    sys.stderr.write(json_text(body, indent=None) + "\n")
    raise typer.Exit(code)


def run(fn: Any) -> None:
    try:
        fn()
    except RememError as exc:
        fail(exc)


# --- backends ---------------------------------------------------------------------------
class LocalSlots:
    """The slot commands on the embedded database, as the owner."""

    def __init__(self, memory: Any, scope: str | None) -> None:
        self.memory, self.scope = memory, scope

    def apply(self, data: bytes) -> dict[str, Any]:
        from remem.service.apply import apply_document

        return apply_document(self.memory, data, default_scope=self.scope)

    def profile(self, max_bytes: int) -> dict[str, Any]:
        return self.memory.slot_profile(default_scope=self.scope, max_bytes=max_bytes)

    def context(self, query: str, max_bytes: int) -> dict[str, Any]:
        return self.memory.slot_context(query, default_scope=self.scope, max_bytes=max_bytes)

    def inspect(self, entity: str, attribute: str) -> dict[str, Any]:
        return self.memory.slot_inspect(entity, attribute, default_scope=self.scope)

    def forget(self, entity: str, attribute: str, expected_revision: int) -> dict[str, Any]:
        return self.memory.slot_forget(entity, attribute, expected_revision=expected_revision,
                                       default_scope=self.scope)


def backend() -> Any:
    """The remote client (``--url``) or the embedded memory of ``--namespace``."""
    from remem.service.slots import default_scope

    scope = default_scope(OPTIONS.scope) if OPTIONS.scope else None
    if OPTIONS.url is None:
        if OPTIONS.secrets_file is not None:
            raise InvalidInput("--secrets-file is for --url (a running remem serve); the "
                               "embedded database needs no token.", field="secrets_file")
        from remem.cli.main import open_store

        return LocalSlots(open_store().memory(OPTIONS.namespace), scope)
    from remem.cli.remote import RemoteSlots, check_url, read_token

    check_url(OPTIONS.url)
    if OPTIONS.secrets_file is None:
        raise InvalidInput("--url needs --secrets-file with INSTANTKV_APP_TOKEN= or "
                           "REMEM_TOKEN=; there is no token argument.", field="secrets_file")
    return RemoteSlots(OPTIONS.url, read_token(OPTIONS.secrets_file), OPTIONS.namespace,
                       scope)


# --- apply ------------------------------------------------------------------------------
def read_limited(path: str | None, limit: int, what: str) -> bytes:
    """The bytes of ``path`` (``-`` or None: stdin), at most ``limit``."""
    if path is None or path == "-":
        data = sys.stdin.buffer.read(limit + 1)
    else:
        try:
            with open(path, "rb") as stream:
                data = stream.read(limit + 1)
        except OSError as exc:
            raise InvalidInput(f"--file cannot be read ({exc.strerror}); give an existing "
                               "file, or - for stdin.", field="file") from None
    if len(data) > limit:
        raise InvalidInput(f"{what} input is over {limit:,} bytes; shorten it.", field="file",
                           limit=limit)
    return data


def receipt(r: dict[str, Any]) -> dict[str, Any]:
    """An apply receipt in the seed's shape (key, revision, status, replayed first)."""
    from remem.service.slots import slot_key

    return {"key": slot_key(r["scope"], r["key"]), "revision": r["revision"],
            "status": r["status"], "replayed": r["replayed"], "scope": r["scope"],
            "attribute": r["key"], "conflict_group": r.get("conflict_group")}


def shape_results(result: dict[str, Any]) -> tuple[list[dict[str, Any]], bool]:
    """Per-proposal results with seed receipts; a write refused by a tombstone is an error."""
    from remem.errors import ClaimForgotten

    shaped, ok = [], True
    for r in result["results"]:
        row: dict[str, Any] = {"index": r["index"]}
        if "receipt" in r and r["receipt"]["status"] == "forgotten":
            err = ClaimForgotten("This slot was forgotten; default ingestion cannot restore "
                                 "it.", index=r["index"])
            row.update(error=err.to_dict(), next_action=NEXT_ACTIONS[err.code])
        elif "receipt" in r:
            row.update(receipt=receipt(r["receipt"]), next_action=r["next_action"])
        else:
            row.update(error=r["error"], next_action=NEXT_ACTIONS.get(
                r["error"]["code"], r["next_action"]))
        ok = ok and "error" not in row and row["receipt"]["status"] != "conflict"
        shaped.append(row)
    return shaped, ok


def apply_and_print(data: bytes) -> None:
    """Applies a document; prints a receipt (one proposal) or ``{applied, results}``."""
    from remem.service.apply import parse_document

    parse_document(data)  # every check the server does first, before contacting it
    single = "proposals" not in json.loads(data)
    result = backend().apply(data)
    shaped, ok = shape_results(result)
    if single and "receipt" in shaped[0]:
        out({**shaped[0]["receipt"], "next_action": shaped[0]["next_action"]})
    elif single:
        fail(_error_of(shaped[0]), 3)
    else:
        out({"applied": True, "results": shaped})
    if not ok:
        raise typer.Exit(3)


def _error_of(row: dict[str, Any]) -> RememError:
    from remem.cli.remote import _error_classes

    e = row["error"]
    exc = _error_classes().get(e["code"], RememError)(e["message"], **e.get("details", {}))
    exc.code = e["code"]
    return exc


# --- commands ---------------------------------------------------------------------------
ikv_app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
MaxBytes = Annotated[int, typer.Option("--max-bytes", min=128, max=65_536,
                                       help="Output budget in UTF-8 bytes (128-65,536).")]


@ikv_app.command("apply")
def apply_cmd(file: Annotated[str | None, typer.Option(
        "--file", "-f", help="Proposal JSON (one object or the preview envelope); - or "
                             "omitted: stdin.")] = None) -> None:
    """Apply a reviewed proposal or a saved capture preview (at most 65,536 bytes)."""
    from remem.domain.limits import MAX_APPLY_BYTES

    run(lambda: apply_and_print(read_limited(file, MAX_APPLY_BYTES, "apply")))


@ikv_app.command("profile")
def profile_cmd(max_bytes: MaxBytes = 8192) -> None:
    """Every live slot of the scope: {items, truncated}."""
    run(lambda: out(backend().profile(max_bytes)))


@ikv_app.command("context")
def context_cmd(query: str, max_bytes: MaxBytes = 8192) -> None:
    """Live slots relevant to QUERY: {items, truncated}."""
    def body():
        if len(query.encode("utf-8", "surrogatepass")) > 16_384:
            raise InvalidInput("the context query is over 16,384 bytes.", field="query")
        out(backend().context(query, max_bytes))
    run(body)


@ikv_app.command("inspect")
def inspect_cmd(entity: str, attribute: str) -> None:
    """One slot: key, revision, scope, entity, attribute, state, value, kind, source,
    valid_until_ms, history, conflicts, expired."""
    run(lambda: out(backend().inspect(entity, attribute)))


@ikv_app.command("forget")
def forget_cmd(entity: str, attribute: str, expected_revision: Annotated[int, typer.Option(
        "--expected-revision", help="The revision inspect showed.")]) -> None:
    """Forget one slot for real; a content-free tombstone keeps it from returning."""
    def body():
        rep = backend().forget(entity, attribute, expected_revision)
        out(rep)
        if rep["status"] != "forgotten":
            raise typer.Exit(3)
    run(body)


@ikv_app.command("capture")
def capture_cmd(
    file: Annotated[str, typer.Option("--file", "-f", help="One user turn (UTF-8 text), or "
                                                           "- for stdin.")],
    source_id: Annotated[str, typer.Option("--source-id", help="Stable id of the turn.")],
    model: Annotated[str, typer.Option("--model", help="A registered local extraction "
                                                       "provider (--providers-file).")],
    occurred_at_ms: Annotated[int | None, typer.Option(
        "--occurred-at-ms", help="When the turn was said (default: now, fixed once).")] = None,
    apply: Annotated[bool, typer.Option("--apply", help="Extract again and apply.")] = False,
) -> None:
    """Extract proposals from one user turn with a local model: a preview (no write), or
    --apply."""
    from remem.cli.instantkv_capture import MAX_CAPTURE_BYTES, preview

    def body():
        now_ms = occurred_at_ms if occurred_at_ms is not None else int(time.time() * 1000)
        text = read_limited(file, MAX_CAPTURE_BYTES, "capture")
        doc = preview(text, source_id=source_id, model=model, occurred_at_ms=now_ms)
        if not apply:
            out(doc)
        elif not doc["proposals"]:
            out({"applied": True, "results": []})
        else:
            apply_and_print(json.dumps(doc).encode())
    run(body)
