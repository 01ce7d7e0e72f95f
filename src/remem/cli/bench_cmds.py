"""CLI: ``remem bench locomo``, ``scale``, ``intake``, ``render``, ``vecindex`` and ``everyday``
(thin: parse, run, render)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from remem.cli.output import STATE, console, emit
from remem.errors import InvalidInput


def _ints(text: str, option: str) -> list[int]:
    try:
        values = [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        values = []
    if not values or any(v < 1 for v in values):
        raise InvalidInput(f"--{option} takes positive integers separated by commas, e.g. "
                           f"5,10; got {text!r}.", field=option)
    return values


def register(app: typer.Typer) -> None:
    from remem.cli.main import run
    from remem.cli.recall_cmds import _bench_app

    bench = _bench_app(app)

    @bench.command("locomo")
    def bench_locomo(
        data: Annotated[Path | None, typer.Option(
            help="LoCoMo JSON file (default: the shared dev split, or $REMEM_LOCOMO_PATH).")
        ] = None,
        k: Annotated[str, typer.Option(help="Comma-separated k of recall@k.")] = "5,10",
        out: Annotated[Path, typer.Option(help="Directory for results.json, "
                                               "per_question.jsonl and recall.png.")] = Path(
            "bench-out/locomo"),
        limit_conversations: Annotated[int | None, typer.Option(
            help="Only the first N conversations.")] = None,
        keep_db: Annotated[bool, typer.Option(help="Keep the per-conversation SQLite files "
                                                   "(OUT/db).")] = False,
        digests: Annotated[bool, typer.Option(
            help="Memories with conversation-window digests ({\"digests\": true}).")] = True,
        reuse_db: Annotated[bool, typer.Option(
            help="Recall over the memories a --keep-db run left in OUT/db (same digests "
                 "setting) instead of ingesting again; keeps them.")] = False,
        extraction_url: Annotated[str | None, typer.Option(
            help="Derive with this OpenAI-compatible chat model endpoint as the Extractor "
                 "(e.g. http://127.0.0.1:8080/v1); needs --extraction-model.")] = None,
        extraction_model: Annotated[str | None, typer.Option(
            help="The model name sent to --extraction-url.")] = None,
    ) -> None:
        """Evidence recall@k on LoCoMo: remem vs BM25 vs dense-only, with cost."""
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

        from remem.bench.locomo_bench import (
            recall_tables,
            run_locomo,
            summary_line,
        )
        from remem.bench.locomo_data import locate_dev_split
        from remem.bench.locomo_extraction import ModelExtraction

        def body():
            ks = _ints(k, "k")
            if (extraction_url is None) != (extraction_model is None):
                raise InvalidInput("--extraction-url and --extraction-model go together.",
                                   field="extraction_url")
            extraction = ModelExtraction(extraction_url, extraction_model) \
                if extraction_url and extraction_model else None
            path = data or locate_dev_split()
            if path is None or not Path(path).is_file():
                raise InvalidInput("No LoCoMo file: pass --data PATH (the LoCoMo JSON layout, "
                                   "e.g. ../shared/data/locomo-dev.json).", field="data")
            with Progress("[progress.description]{task.description}", BarColumn(),
                          MofNCompleteColumn(), TimeRemainingColumn(), console=console,
                          disable=STATE.json) as bar:
                tasks: dict[str, int] = {}

                def progress(label: str, done: int, total: int) -> None:
                    if label not in tasks:
                        tasks[label] = bar.add_task(f"observing {label}", total=total)
                    bar.update(tasks[label], completed=done)

                doc = run_locomo(path, ks=ks, out_dir=out,
                                 limit_conversations=limit_conversations, progress=progress,
                                 keep_db=keep_db, digests=digests, reuse_db=reuse_db,
                                 extraction=extraction)
            if STATE.json:
                emit(doc)
                return
            for table in recall_tables(doc):
                console.print(table)
            console.print(summary_line(doc))
            console.print(f"wrote {out / 'results.json'}, {out / 'per_question.jsonl'} and "
                          f"{out / 'recall.png'}")
        run(body)

    @bench.command("export")
    def bench_export(
        items: Annotated[int, typer.Option(help="Items in the exported memory.")] = 100_000,
        sources: Annotated[int, typer.Option(help="Observed log entries besides.")] = 1000,
        backends: Annotated[str, typer.Option(
            help="Comma-separated: sqlite,postgres (postgres: the global --db "
                 "postgresql://..., else a throw-away embedded server).")] = "sqlite,postgres",
        out: Annotated[Path, typer.Option(help="Directory for the files, results.json and "
                                               "export.png.")] = Path("bench-out/export"),
    ) -> None:
        """Log+Facts export and import throughput (records/s) on SQLite and PostgreSQL."""
        from remem.bench.export_bench import rich_table, run_export_bench

        def body():
            chosen = tuple(b.strip() for b in backends.split(",") if b.strip())
            if items < 1 or sources < 0 or not chosen or set(chosen) - {"sqlite", "postgres"}:
                raise InvalidInput("--items must be >= 1, --sources >= 0 and --backends "
                                   "sqlite and/or postgres.", field="backends")
            db = STATE.db if STATE.db and STATE.db.startswith(("postgresql://",
                                                                "postgres://")) else None
            doc = run_export_bench(items=items, sources=sources, backends=chosen, db=db,
                                   out_dir=out, log=(lambda m: None) if STATE.json
                                   else console.print)
            if STATE.json:
                emit(doc)
                return
            console.print(rich_table(doc))
            console.print(f"results: {out / 'results.json'}, plot: {out / 'export.png'}")
        run(body)

    @bench.command("scale")
    def bench_scale(
        items: Annotated[str, typer.Option(help="Comma-separated sizes, e.g. "
                                                "10000,100000,1000000.")] = "10000,100000",
        out: Annotated[Path, typer.Option(help="Directory for SQLite files, results.json and "
                                               "scale.png.")] = Path("bench-out/scale"),
        scopes: Annotated[int, typer.Option(help="User scopes the items spread over.")] = 100,
        queries: Annotated[int, typer.Option(help="Timed recalls per size.")] = 200,
        budget_tokens: Annotated[int, typer.Option(help="Recall budget.")] = 1000,
        single_sample: Annotated[int, typer.Option(
            help="The last items, written one remember at a time after the batches.")] = 1000,
        batch_size: Annotated[int, typer.Option(help="Items per batch.")] = 512,
        text_pool: Annotated[int, typer.Option(
            help="Distinct topic phrases the items draw from (each embedded once); 0: every "
                 "phrase distinct, one embedding per item.")] = 20_000,
        serve: Annotated[bool, typer.Option(
            help="Also measure the peak RSS of a real `remem serve` on each size.")] = False,
    ) -> None:
        """Write throughput, recall p50/p95, size on disk and RSS per size; a PNG of growth.

        Uses SQLite files in OUT, or the PostgreSQL database given with the global --db
        postgresql://... (a memory 'scale-N' per size is replaced there)."""
        from remem.bench.scale_bench import rich_table, run_scale

        def body():
            sizes = _ints(items, "items")
            db = STATE.db if STATE.db and STATE.db.startswith(("postgresql://",
                                                                "postgres://")) else None
            doc = run_scale(sizes, db=db, out_dir=out, scopes=scopes, queries=queries,
                            budget_tokens=budget_tokens, single_sample=single_sample,
                            batch_size=batch_size, verbose=not STATE.json,
                            pool=text_pool or None, serve=serve)
            if STATE.json:
                emit(doc)
                return
            console.print(rich_table(doc))
            for g in doc["growth"]:
                console.print(f"recall p95 {g['from']} -> {g['to']} items: x{g['ratio']} "
                              f"(x{g['per_10x']} per 10x; goal <= x{g['goal_per_10x']}: "
                              f"{'met' if g['ok'] else 'NOT met'})")
            console.print(f"wrote {out / 'results.json'} and {out / 'scale.png'}")
        run(body)

    @bench.command("intake")
    def bench_intake(
        out: Annotated[Path, typer.Option(help="Directory for SQLite files, results.json and "
                                               "intake.png.")] = Path("bench-out/intake"),
        turns: Annotated[int, typer.Option(help="Turns every path takes in.")] = 300,
        batch_size: Annotated[int, typer.Option(
            help="Turns per embedder / observe_many / capture call.")] = 64,
        repeats: Annotated[int, typer.Option(
            help="Interleaved passes; each path's best is reported.")] = 3,
        data: Annotated[Path | None, typer.Option(
            help="LoCoMo JSON for the turns (default: the dev split if present, else "
                 "synthetic turns).")] = None,
    ) -> None:
        """Intake turns/s (observe, observe_many, capture with inline and worker derive) vs
        the embedder's own rate, measured in one run; SQLite in OUT, or the global --db
        postgresql://... ."""
        from remem.bench.intake_bench import rich_table, run_intake

        def body():
            if turns < 1 or batch_size < 1 or repeats < 1:
                raise InvalidInput("--turns, --batch-size and --repeats must be at least 1.",
                                   field="turns")
            db = STATE.db if STATE.db and STATE.db.startswith(("postgresql://",
                                                                "postgres://")) else None
            doc = run_intake(out, turns=turns, batch_size=batch_size, repeats=repeats,
                             data=data, db=db, verbose=not STATE.json)
            if STATE.json:
                emit(doc)
                return
            console.print(rich_table(doc))
            console.print(f"wrote {out / 'results.json'} and {out / 'intake.png'}")
        run(body)

    @bench.command("render")
    def bench_render(
        out: Annotated[Path, typer.Option(help="Directory for results.json and render.png.")
                       ] = Path("bench-out/render"),
    ) -> None:
        """Tokens of a recall result before/after the compact rendering: empty result, per
        fact, per source line, and how many facts fit at budgets 50/100/200/300."""
        from remem.bench.render_bench import rich_table, run_render

        def body():
            doc = run_render(out)
            if STATE.json:
                emit(doc)
                return
            console.print(rich_table(doc))
            console.print(f"wrote {out / 'results.json'} and {out / 'render.png'}")
        run(body)

    @bench.command("vecindex")
    def bench_vecindex(
        items: Annotated[str, typer.Option(help="Comma-separated sizes, e.g. "
                                                "100000,1000000.")] = "100000",
        out: Annotated[Path, typer.Option(help="Directory for SQLite files and results.json.")
                       ] = Path("bench-out/vecindex"),
        scopes: Annotated[int, typer.Option(help="User scopes the rows spread over.")] = 100,
        queries: Annotated[int, typer.Option(help="Timed searches per path.")] = 50,
        codecs: Annotated[str, typer.Option(help="RAM codecs to measure: int8,float16.")
                          ] = "int8,float16",
    ) -> None:
        """The SQLite vector index alone on clustered 384-d vectors: load time, RSS, search
        p50/p95 for one scope and for every scope (ANN), recall@10 against exact float32."""
        from remem.bench.vecindex_bench import rich_table, run_vecindex

        def body():
            chosen = [c.strip() for c in codecs.split(",") if c.strip()]
            if not chosen or any(c not in ("int8", "float16") for c in chosen):
                raise InvalidInput(f"--codecs takes int8 and/or float16; got {codecs!r}.",
                                   field="codecs")
            doc = run_vecindex(_ints(items, "items"), out_dir=out, scopes=scopes,
                               queries=queries, codecs=chosen,
                               log=(lambda _m: None) if STATE.json else console.print)
            if STATE.json:
                emit(doc)
                return
            console.print(rich_table(doc))
            console.print(f"wrote {out / 'results.json'}")
        run(body)

    @bench.command("everyday")
    def bench_everyday(
        out: Annotated[Path, typer.Option(help="Directory for the SQLite file, results.json "
                                               "and everyday.png.")] = Path(
            "bench-out/everyday"),
        limit_queries: Annotated[int | None, typer.Option(
            help="Only the first N queries (and no held-out set).")] = None,
        budget_tokens: Annotated[int, typer.Option(help="Recall budget per query.")] = 300,
    ) -> None:
        """Top-3 hit rate of the expected fact for everyday requests over a small profile;
        prints the misses."""
        from remem.bench.everyday_bench import miss_lines, rich_table, run_everyday

        def body():
            if limit_queries is not None and limit_queries < 1:
                raise InvalidInput("--limit-queries must be at least 1.", field="limit_queries")
            doc = run_everyday(out, limit_queries=limit_queries, budget_tokens=budget_tokens)
            if STATE.json:
                emit(doc)
                return
            console.print(rich_table(doc))
            for line in miss_lines(doc):
                console.print(line, markup=False)
            console.print(f"wrote {out / 'results.json'} and {out / 'everyday.png'}")
        run(body)
