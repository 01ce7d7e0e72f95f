"""CLI: ``remem fact put`` and ``remem fact show`` — schema Facts (thin: parse, call, render)."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from remem.cli.output import emit
from remem.errors import InvalidInput

fact_app = typer.Typer(help="Schema Facts: remember one (inline up to 64 KB, in the blob "
                       "store up to 64 MiB), show its record or its full content.",
                       no_args_is_help=True)


def read_content(content: str | None, content_file: str | None, text: bool) -> Any:
    """The content a ``fact put`` names: ``--content`` or ``--content-file`` (``-`` is stdin),
    parsed as JSON unless ``--text`` takes it as a string.

    Raises:
        InvalidInput: neither or both given, an unreadable file, a file over 64 MiB (the most
            a fact holds; only that much and one byte more is read), or text that is not JSON.
    """
    if (content is None) == (content_file is None):
        raise InvalidInput("Give the content with --content JSON or --content-file FILE "
                           "(one of them).", field="content")
    if content_file is not None:
        from remem.cli.main import read_input
        from remem.domain.limits import MAX_BLOB_BYTES

        data = read_input(content_file, "content_file", MAX_BLOB_BYTES)  # the most a fact holds
        try:
            raw = data.decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidInput("The content file is not UTF-8; give a readable UTF-8 file.",
                               field="content_file") from None
    else:
        raw = content
    if text:
        return raw
    from remem.domain.jsondoc import UnrepresentableNumber, parse_float

    try:
        return json.loads(raw, parse_float=parse_float)
    except UnrepresentableNumber as exc:  # 1e-400 would be stored as 0
        raise exc.refusal("content") from None
    except ValueError:
        raise InvalidInput("The content is not JSON; quote a string as JSON, or pass --text "
                           "to store the text as it is.", field="content") from None


def _retention(keep_until: str | None, keep_days: int | None, legal_hold: bool
               ) -> dict[str, Any] | None:
    if keep_until is None and keep_days is None and not legal_hold:
        return None
    return {"keep_until": keep_until, "keep_days": keep_days, "legal_hold": legal_hold}


def _record_human(rec: dict[str, Any]) -> str:
    lines = [f"fact {rec['id']} ({rec['type']}, version {rec['version']})",
             f"  key: {rec.get('content', {}).get('key')}",
             f"  created {rec['createdAt']}, updated {rec['updatedAt']}"]
    if rec.get("contentRef"):
        lines.append(f"  content in blob {rec['contentRef']} ({rec.get('size')} bytes)")
    elif "content" in rec:
        lines.append("  content: " + json.dumps(rec["content"].get("value"),
                                                 ensure_ascii=False)[:400])
    ret = rec.get("retention") or {}
    if ret:
        lines.append("  retention: " + ", ".join(f"{k} {v}" for k, v in ret.items()))
    return "\n".join(lines)


def register(app: typer.Typer) -> None:
    from remem.cli.main import _write_human, current_memory, run
    from remem.cli.recall_cmds import parse_json_option

    app.add_typer(fact_app, name="fact")

    @fact_app.command("put")
    def put(
        scope: str, key: str,
        content: Annotated[str | None, typer.Option(help="The content as JSON.")] = None,
        content_file: Annotated[str | None, typer.Option(
            help="A file holding the content as JSON (- for stdin).")] = None,
        text: Annotated[bool, typer.Option("--text", help="Take the content as plain text "
                                           "(a JSON string), not JSON.")] = False,
        fact_type: Annotated[str | None, typer.Option(
            "--type", help="Pack-defined fact type, e.g. user-profile.")] = None,
        kind: Annotated[str | None, typer.Option(help="remem kind (default from --type).")
                        ] = None,
        keep_until: Annotated[str | None, typer.Option(help="ISO time with a zone: erase "
                                                       "after it.")] = None,
        keep_days: Annotated[int | None, typer.Option(help="Erase this many days after it "
                                                      "was remembered.")] = None,
        legal_hold: Annotated[bool, typer.Option("--legal-hold", help="Hold it until an "
                                                 "admin releases it (admin only).")] = False,
        cached_source_json: Annotated[str | None, typer.Option(
            "--cached-source-json", help="Make it a Kind-B cached fact: the Log+Facts Source "
            "block as JSON.")] = None,
        idempotency_key: Annotated[str | None, typer.Option()] = None,
    ) -> None:
        """Remember a schema Fact of KEY in SCOPE: content up to 64 KB inline, up to 64 MiB in
        the blob store (e.g. fact put user:alice trip_report --content-file r.txt --text
        --type summary). Bad input exits 1 and writes nothing."""
        def body():
            value = read_content(content, content_file, text)
            r = current_memory().remember_fact(
                scope, key, value, type=fact_type, kind=kind,
                retention=_retention(keep_until, keep_days, legal_hold),
                cached_source=parse_json_option(cached_source_json, "--cached-source-json"),
                idempotency_key=idempotency_key)
            emit(r, _write_human(r))
            if r.outcome in ("conflict", "forgotten"):
                raise typer.Exit(3)
        run(body)

    @fact_app.command("show")
    def show(
        item_id: Annotated[str, typer.Argument(metavar="ITEM_ID")],
        full: Annotated[bool, typer.Option("--content", help="Print the full content value "
                                           "(read from the blob when it has one).")] = False,
    ) -> None:
        """Show a fact as its schema Fact record (valid against the shared memory.schema.json
        $defs/Fact), or with --content its whole content."""
        def body():
            m = current_memory()
            if full:
                value = m.fact_content(item_id)
                emit({"item_id": item_id, "content": value},
                     value if isinstance(value, str) else json.dumps(value, ensure_ascii=False,
                                                                      indent=2))
                return
            rec = m.fact(item_id)
            emit(rec, _record_human(rec))
        run(body)
