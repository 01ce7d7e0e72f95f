"""remem demo: apply instantKV proposals, then inspect and show the profile.

Run with `make demo`. Uses a fresh SQLite file under bench-out/demo/.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from rich.console import Console
from rich.panel import Panel
from rich.table import Table

import remem
from remem.service.apply import apply_document

HERE = Path(__file__).parent
console = Console()


def receipt_line(r: dict) -> str:
    if "error" in r:
        return f"[red]error[/red] {r['error']['code']}: {r['error']['message']}"
    rc = r["receipt"]
    tag = {"created": "green", "duplicate": "cyan", "conflict": "yellow", "stale": "magenta",
           "corrected": "green", "superseded": "green"}.get(rc["status"], "white")
    replay = " [dim](replayed: nothing written)[/dim]" if rc["replayed"] else ""
    return (f"[{tag}]{rc['status']}[/{tag}]{replay}  {rc['scope']} {rc['key']}  "
            f"revision {rc['revision']}")


def show_inspect(mem: remem.Memory, scope: str, key: str) -> None:
    i = mem.inspect(scope, key)
    t = Table(title=f"inspect {scope} {key}: state={i.state}, revision={i.revision}",
              title_justify="left")
    for col in ("value", "status", "valid from", "source quote"):
        t.add_column(col)
    for v in [*i.current, *i.conflicts, *i.history]:
        t.add_row(json.dumps(v.value, ensure_ascii=False), v.status, v.valid_at[:10],
                  v.quote or "")
    console.print(t)


def show_profile(mem: remem.Memory, scope: str) -> None:
    page = mem.items(scope=scope)
    t = Table(title=f"profile of {scope} (current values)", title_justify="left")
    for col in ("key", "value", "kind", "status"):
        t.add_column(col)
    for v in sorted(page.items, key=lambda v: (v.key, str(v.value))):
        t.add_row(v.key, json.dumps(v.value, ensure_ascii=False), v.kind, v.status)
    console.print(t)


def main() -> int:
    out = HERE.parent / "bench-out" / "demo"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    store = remem.open(out / "demo.db")
    mem = store.create_memory("demo")
    console.print(Panel("remem demo: typed, versioned claims from instantKV proposals",
                        style="bold"))
    steps = json.loads((HERE / "proposals.json").read_text())["steps"]
    for step in steps:
        console.print(f"\n[bold]{step['say']}[/bold]")
        if "correct" in step:
            prop = dict(step["correct"])
            prop["expected_revision"] = mem.inspect(prop["entity"], prop["attribute"]).revision
            doc = prop
        else:
            doc = step["proposal"]
        result = apply_document(mem, json.dumps(doc))
        for r in result["results"]:
            console.print("  " + receipt_line(r))
        if any(r.get("receipt", {}).get("status") == "conflict" for r in result["results"]):
            show_inspect(mem, "user:maya", "home_city")
    console.print()
    show_inspect(mem, "user:maya", "home_city")
    show_inspect(mem, "user:maya", "diet")
    show_profile(mem, "user:maya")
    report = store.verify()
    console.print(f"\nledger verified: {report['ok']} "
                  f"({report['memories']['demo']['events']} events, hash-chained)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
