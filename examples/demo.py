"""remem demo: a real conversation in, memory out.

Captures examples/conversation.json (six dated sessions between Maya and her assistant),
lets the offline rule extractor turn Maya's own statements into claims, then shows what an
agent would see: the pinned profile, recalls under a small token budget, the history of a
corrected fact, an as-of question, and what forgetting really erases. Ends with the same
engine driven by instantKV proposals. Run with `make demo`; it writes bench-out/demo/.
"""

from __future__ import annotations

import json
import shutil
import sys
from datetime import datetime
from pathlib import Path

from rich.console import Console
from rich.panel import Panel
from rich.table import Table

import remem

HERE = Path(__file__).parent
OUT = HERE.parent / "bench-out" / "demo"
BUDGET = 300
console = Console()


def show(value) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def capture_conversation(mem: remem.Memory, convo: dict, scope: str) -> None:
    t = Table(title="1. Capture: six sessions, turn by turn", title_justify="left")
    for col in ("session", "date", "turns", "facts formed", "evidence only"):
        t.add_column(col)
    for session in convo["sessions"]:
        out = mem.capture(scope, "chat", "maya-main", session["turns"])
        dispositions = [r["disposition"] for r in out["captured"]]
        t.add_row(session["id"], session["occurred_at"][:10], str(len(out["captured"])),
                  str(dispositions.count("formed")), str(dispositions.count("evidence_only")))
    again = mem.capture(scope, "chat", "maya-main", convo["sessions"][0]["turns"])
    console.print(t)
    console.print(f"   Re-sending session 1: {again['skipped']} turns skipped, "
                  f"{len(again['captured'])} captured (the capture cursor moved by "
                  "compare-and-set).\n")


def show_profile(mem: remem.Memory, scopes: list[str]) -> None:
    p = mem.profile(scopes, max_bytes=2048, activation_id="demo-activation-1")
    console.print(Panel(p.text, title="2. Pinned profile (byte-identical per activation)",
                        title_align="left"))


def show_recalls(mem: remem.Memory, scopes: list[str], queries: list[str]) -> None:
    console.print(f"[bold]3. Recall under a {BUDGET}-token budget[/bold] (its model-facing "
                  "text is counted with o200k_base; the structured result beside it is not)")
    for q in queries:
        r = mem.recall(scopes, q, budget_tokens=BUDGET)
        facts = "; ".join(f"{i.key}={show(i.value)}" for i in r.items) or "-"
        srcs = len(r.sources)
        console.print(f"   [cyan]{q}[/cyan]\n     facts: {facts}\n     sources: {srcs} raw "
                      f"turns (labelled source), tokens {r.tokens}/{BUDGET}, truncated="
                      f"{str(r.truncated).lower()}, status={r.status}")
    console.print()


def show_history(mem: remem.Memory, scope: str, key: str) -> None:
    i = mem.inspect(scope, key)
    t = Table(title=f"4. inspect {scope} {key}: {show(i.value)} (revision {i.revision})",
              title_justify="left")
    for col in ("value", "status", "valid from", "until", "said"):
        t.add_column(col)
    for v in [*i.current, *i.history]:
        t.add_row(show(v.value), v.status, v.valid_at[:10], (v.invalid_at or "")[:10],
                  v.quote or "")
    console.print(t)
    march = mem.recall([scope], "where does Maya live", budget_tokens=2000,
                       valid_at=datetime.fromisoformat("2024-03-15T12:00:00+01:00"))
    then = [show(x.value) for x in march.items if x.key == key]
    console.print(f"   As of 15 March 2024 she lived in: [bold]{', '.join(then) or '?'}[/bold]\n")


def forget_phone(mem: remem.Memory, scope: str, db: Path) -> None:
    i = mem.inspect(scope, "phone_number")
    number = show(i.value)
    console.print(f"[bold]5. \"Please forget my old phone number.\"[/bold]  (stored: {number})")
    report = mem.forget(scope=scope, key="phone_number", expected_revision=i.revision,
                        caller_scope=scope).to_dict()
    t = Table(title=f"erasure report: {report['state']}", title_justify="left")
    for col in ("surface", "erased", "state"):
        t.add_column(col)
    for name, s in report["surfaces"].items():
        t.add_row(name, str(s["erased"]), s["state"])
    console.print(t)
    digits = number.replace(" ", "")[-8:]
    raw = b"".join(p.read_bytes() for p in db.parent.glob(db.name + "*"))
    found = number.encode() in raw or digits.encode() in raw.replace(b" ", b"")
    console.print(f"   The number's bytes in the database file and WAL: "
                  f"{'STILL PRESENT' if found else 'gone'}")
    head = mem.status()["head_seq"]
    again = mem.remember(scope, "phone_number", number, kind="profile_slot",
                         authority=remem.Authority.AUTOMATIC)
    console.print(f"   Extraction proposes the number again: outcome [bold]{again.outcome}"
                  f"[/bold], {mem.status()['head_seq'] - head} events written (a text-free "
                  "tombstone blocks re-learning)\n")


def proposals_part(store: remem.RememStore) -> None:
    from remem.service.apply import apply_document

    mem = store.create_memory("proposals")
    console.print("[bold]6. The same engine through instantKV proposals[/bold]")
    for step in json.loads((HERE / "proposals.json").read_text())["steps"]:
        doc = step.get("proposal") or dict(step["correct"])
        if "correct" in step:
            doc["expected_revision"] = mem.inspect(doc["entity"], doc["attribute"]).revision
        for r in apply_document(mem, json.dumps(doc))["results"]:
            rc = r["receipt"]
            console.print(f"   {rc['status']:<10}{' (replayed)' if rc['replayed'] else '':<11}"
                          f" {rc['key']:<10} revision {rc['revision']}   [dim]{step['say']}[/dim]")
    i = mem.inspect("user:maya", "home_city")
    console.print(f"   home_city: {show(i.value)}, state {i.state}, history "
                  f"{[show(h.value) for h in i.history]}\n")


def main() -> int:
    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir(parents=True)
    db = OUT / "demo.db"
    convo = json.loads((HERE / "conversation.json").read_text())
    scope = f"user:{convo['user']['id']}"
    store = remem.open(db)
    mem = store.create_memory("assistant")
    console.print(Panel("remem: long-term memory that never silently loses, duplicates or "
                        "resurrects a fact", style="bold"))
    capture_conversation(mem, convo, scope)
    show_profile(mem, [scope])
    show_recalls(mem, [scope], convo["demo"]["recall_queries"])
    show_history(mem, scope, convo["demo"]["corrected_key"])
    forget_phone(mem, scope, db)
    proposals_part(store)
    report = store.verify()
    events = sum(m["events"] for m in report["memories"].values())
    console.print(f"7. Ledger verified: [bold]{report['ok']}[/bold] ({events} hash-chained, "
                  "text-free events). Database: " + str(db))
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
