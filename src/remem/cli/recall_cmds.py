"""CLI: observe, recall, context, profile, reembed and ``bench recall`` (thin commands)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from remem.cli.output import STATE, SafeTable, emit, table, value_text

ScopeOpt = Annotated[list[str], typer.Option("--scope", "-s", help="Scope to read (repeatable), "
                                             "e.g. --scope user:alice --scope agent:bot.")]
KindOpt = Annotated[list[str] | None, typer.Option("--kind", help="Only these kinds "
                                                   "(repeatable).")]
ModeOpt = Annotated[str, typer.Option(help="hybrid (full text + vectors + key) | lexical "
                                      "(full text + key) | vector.")]
FilterOpt = Annotated[list[str] | None, typer.Option(
    "--filter", help="Metadata condition FIELD=VALUE (repeatable; all must hold). VALUE is "
    "JSON when it parses (2, true, \"2\"), else text.")]
FilterJsonOpt = Annotated[str | None, typer.Option(
    "--filter-json", help='A whole filter object, e.g. \'{"kind": "fact", "metadata": '
    '{"n": {"gte": 2}}}\' (operators eq ne in nin gt gte lt lte exists).')]
SinceOpt = Annotated[str | None, typer.Option(
    help="valid_at from: ISO time, 'N days ago' or 'last N days'.")]
UntilOpt = Annotated[str | None, typer.Option(help="valid_at before (ISO or 'N days ago').")]
RecSinceOpt = Annotated[str | None, typer.Option(help="Recorded from (as --since).")]
RecUntilOpt = Annotated[str | None, typer.Option(help="Recorded before (as --until).")]
NowOpt = Annotated[str | None, typer.Option(help="ISO time relative times resolve "
                                            "against (default: now).")]
MetadataOpt = Annotated[str | None, typer.Option(
    "--metadata", help='JSON object kept with the item, e.g. \'{"app": "crm"}\'.')]


def parse_json_option(text: str | None, name: str):
    """A JSON option's value (None when not given).

    Raises:
        InvalidInput: not JSON.
    """
    import json

    from remem.errors import InvalidInput

    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise InvalidInput(f"{name} is not JSON: {exc.msg}.", field=name) from exc


def build_filters(pairs: list[str] | None, filter_json: str | None, since: str | None = None,
                  until: str | None = None, recorded_since: str | None = None,
                  recorded_until: str | None = None):
    """The filter object of ``--filter``, ``--filter-json`` and the window options (None when
    none was given); the service validates it.

    Raises:
        InvalidInput: bad JSON, a FIELD=VALUE without '=', or a condition given twice.
    """
    import json

    from remem.errors import InvalidInput

    f = parse_json_option(filter_json, "--filter-json")
    if f is not None and not isinstance(f, dict):
        raise InvalidInput("--filter-json must be a JSON object.", field="--filter-json")
    f = dict(f or {})
    if pairs:
        meta = f.get("metadata")
        meta = dict(meta) if isinstance(meta, dict) else {} if meta is None else meta
        for pair in pairs:
            name, eq, raw = pair.partition("=")
            if not eq or not name:
                raise InvalidInput(f"--filter {pair!r} must read FIELD=VALUE.", field="--filter")
            if not isinstance(meta, dict) or name in meta:
                raise InvalidInput(f"metadata field {name!r} is given twice.",
                                   field="--filter")
            try:
                meta[name] = json.loads(raw)
            except ValueError:
                meta[name] = raw
        f["metadata"] = meta
    for field, lo, hi in (("valid_at", since, until),
                          ("recorded_at", recorded_since, recorded_until)):
        window = {op: t for op, t in (("gte", lo), ("lt", hi)) if t is not None}
        if window:
            if field in f:
                raise InvalidInput(f"{field} is given twice (an option and --filter-json).",
                                   field=field)
            f[field] = window
    return f or None


def _time(text: str | None):
    from remem.domain.timefmt import from_iso

    return from_iso(text) if text else None


def _items_table(items: list[dict], title: str) -> SafeTable:
    return table(title, ("item", "scope", "key", "value", "kind", "status"),
                 ((d["id"], d["scope"], d["key"], value_text(d["value"]), d["kind"],
                   d.get("status", "current")) for d in items))


def register(app: typer.Typer) -> None:
    from remem.cli.main import current_memory, run

    @app.command()
    def observe(
        scope: str,
        text: Annotated[str | None, typer.Argument(
            help="The captured input, or - to read stdin (optional with --payload).")] = None,
        role: Annotated[str | None, typer.Option(
            help="user|assistant|tool|system|owner|agent (default: from --kind, else user)"
        )] = None,
        actor: Annotated[str | None, typer.Option(help="Who said it (free text id).")] = None,
        source_id: Annotated[str | None, typer.Option(help="Stable id of this input.")] = None,
        run_id: Annotated[str | None, typer.Option(help="Conversation/run id (chain).")] = None,
        occurred_at: Annotated[str | None, typer.Option(help="ISO time it was said.")] = None,
        kind: Annotated[str | None, typer.Option(
            help="Log entry kind: user-message, agent-message, system-message, tool-call, "
                 "tool-result, internal-thought, retrieval, artifact-produced, event-emitted, "
                 "event-received, guardrail-triggered, wait-suspended, wait-resumed "
                 "(default: from --role)")] = None,
        idempotency_key: Annotated[str | None, typer.Option()] = None,
        metadata: MetadataOpt = None,
        payload: Annotated[str | None, typer.Option(
            help="Kind-specific payload, a JSON object (unknown fields kept).")] = None,
        caused_by: Annotated[str | None, typer.Option(
            help="Source id of the log entry that caused this one.")] = None,
    ) -> None:
        """Record a source (a turn, tool result or document chunk) as searchable evidence."""
        def body():
            data = sys.stdin.read() if text == "-" else text
            r = current_memory().observe(scope, data, role=role, actor=actor,
                                         source_id=source_id, run_id=run_id,
                                         occurred_at=_time(occurred_at), kind=kind,
                                         idempotency_key=idempotency_key,
                                         metadata=parse_json_option(metadata, "--metadata"),
                                         payload=parse_json_option(payload, "--payload"),
                                         caused_by_log_id=caused_by)
            emit(r, f"{r.phase}{' (replayed)' if r.replayed else ''}: source {r.source_id} "
                    f"run {r.run_id} #{r.sequence} (ledger seq {r.accepted_seq})")
        run(body)

    @app.command()
    def recall(
        query: str, scope: ScopeOpt,
        budget_tokens: Annotated[int, typer.Option(
            help="Token budget of the whole result.")] = 1000,
        tokenizer: Annotated[str, typer.Option(help="o200k_base | cl100k_base")] = "o200k_base",
        valid_at: Annotated[str | None, typer.Option(help="As-of world time (ISO).")] = None,
        kind: KindOpt = None,
        include_history: Annotated[bool, typer.Option(help="Also superseded values.")] = False,
        limit: Annotated[int, typer.Option(help="Eligible items + sources.")] = 30,
        mode: ModeOpt = "hybrid", filter_kv: FilterOpt = None,
        filter_json: FilterJsonOpt = None, since: SinceOpt = None, until: UntilOpt = None,
        recorded_since: RecSinceOpt = None, recorded_until: RecUntilOpt = None,
        now: NowOpt = None,
    ) -> None:
        """Recall items and sources relevant to QUERY within --budget-tokens."""
        def body():
            f = build_filters(filter_kv, filter_json, since, until, recorded_since,
                              recorded_until)
            r = current_memory().recall(scope, query, budget_tokens=budget_tokens,
                                        tokenizer=tokenizer, valid_at=_time(valid_at),
                                        kinds=kind, include_history=include_history,
                                        limit=limit, mode=mode, filters=f, now=_time(now))
            emit(r, r.text)
        run(body)

    @app.command()
    def context(
        query: str, scope: ScopeOpt,
        max_bytes: Annotated[int, typer.Option(help="UTF-8 byte budget (128-65536).")] = 8192,
        kind: KindOpt = None,
        valid_at: Annotated[str | None, typer.Option(help="As-of world time (ISO).")] = None,
        mode: ModeOpt = "hybrid", filter_kv: FilterOpt = None,
        filter_json: FilterJsonOpt = None, since: SinceOpt = None, until: UntilOpt = None,
        now: NowOpt = None,
    ) -> None:
        """Items relevant to QUERY within --max-bytes (instantKV shape: items + truncated)."""
        def body():
            f = build_filters(filter_kv, filter_json, since, until)
            r = current_memory().context(scope, query, max_bytes=max_bytes, kinds=kind,
                                         valid_at=_time(valid_at), mode=mode, filters=f,
                                         now=_time(now))
            emit(r, _items_table(r.items, f"context ({r.size_bytes} bytes, "
                                          f"truncated={str(r.truncated).lower()})"))
        run(body)

    @app.command()
    def profile(
        scope: ScopeOpt,
        max_bytes: Annotated[int | None, typer.Option(
            help="UTF-8 byte budget (default 8192).")] = None,
        budget_tokens: Annotated[int | None, typer.Option(
            help="Token budget instead of bytes.")] = None,
        tokenizer: Annotated[str, typer.Option()] = "o200k_base",
        activation_id: Annotated[str | None, typer.Option(
            help="Same id -> byte-identical output; a new id re-renders.")] = None,
    ) -> None:
        """The pinned profile: identity, rules, profile slots, preferences."""
        def body():
            r = current_memory().profile(scope, max_bytes=max_bytes, budget_tokens=budget_tokens,
                                         tokenizer=tokenizer, activation_id=activation_id)
            emit(r, r.text + ("\n(truncated)" if r.truncated else ""))
        run(body)

    @app.command()
    def reembed(
        batch_size: Annotated[int, typer.Option(help="Texts per embedding call.")] = 64,
        force: Annotated[bool, typer.Option(
            "--force", help="Recompute every vector, also those already current.")] = False,
    ) -> None:
        """Recompute every vector with the configured embedder; switch atomically."""
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

        def body():
            m = current_memory()
            with Progress("[progress.description]{task.description}", BarColumn(),
                          MofNCompleteColumn(), TimeRemainingColumn(), transient=True,
                          disable=STATE.json) as bar:
                task = bar.add_task("embedding", total=None)
                out = m.reembed(batch_size=batch_size, force=force,
                                progress=lambda done, total: bar.update(task, completed=done,
                                                                        total=total))
            emit(out, f"{out['model']} ({out['dimensions']} dims): embedded {out['embedded']}, "
                      f"skipped {out['skipped']} unchanged"
                      + (f"; switched from {out['previous_model']}" if out["switched"] else ""))
        run(body)

    bench = _bench_app(app)

    @bench.command("recall")
    def bench_recall(
        items: Annotated[str, typer.Option(help="Comma-separated sizes.")] = "10000,100000",
        queries: Annotated[int, typer.Option(help="Timed queries per size.")] = 200,
        budget_tokens: Annotated[int, typer.Option()] = 1000,
        out: Annotated[Path, typer.Option(help="Directory for databases and results.")] = Path(
            "bench-out/recall"),
        scopes: Annotated[int, typer.Option(help="User scopes the items spread over.")] = 100,
    ) -> None:
        """Recall latency (p50/p95, query embedding included), index load time and RSS."""
        from remem.bench.recall_bench import format_table, run_bench

        def body():
            sizes = [int(s) for s in items.split(",") if s.strip()]
            rows = run_bench(sizes, out_dir=out, queries=queries, budget_tokens=budget_tokens,
                             scopes=scopes, log=None if STATE.json else typer.echo)
            emit(rows, format_table(rows))
        run(body)


def _bench_app(app: typer.Typer) -> typer.Typer:
    """The ``bench`` command group, shared with other benchmark commands."""
    for group in app.registered_groups:
        if group.name == "bench" and group.typer_instance is not None:
            return group.typer_instance
    bench = typer.Typer(help="Benchmarks.", no_args_is_help=True)
    app.add_typer(bench, name="bench")
    return bench
