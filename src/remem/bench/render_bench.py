"""``remem bench render``: what a recall result costs in tokens, before and after issue 13.

A fresh SQLite memory gets :data:`FACTS` (short facts: key + short value) and
:data:`SOURCES` (short user turns) in one scope; real ``Memory.recall`` calls give the
structured items and sources. Measured under each tokenizer (o200k_base, cl100k_base):

- **after** (this code): the budgeted model-facing ``text``: an empty result (the status
  line), the cost of one more fact line and one more source line (beyond its quoted text),
  and how many facts come back at budgets 50 / 100 / 200 / 300;
- **before** (main before issue 13): the same items priced with the old formula, reproduced
  here (:func:`old_document`): the whole JSON document counted, every item serialised twice
  (its JSON object and a text line), packed best first while the document fits.

Writes ``results.json`` and ``render.png`` under ``out``.
"""

from __future__ import annotations

import json
import statistics
import tempfile
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import remem
from remem.domain.render import serialise
from remem.providers.registry import build_tokenizer

SCOPE = "user:u1"
BUDGETS = (50, 100, 200, 300)
TOKENIZERS = ("o200k_base", "cl100k_base")
FACTS: tuple[tuple[str, str, str], ...] = (
    ("home_city", "Lyon", "profile_slot"), ("diet", "pescatarian", "preference"),
    ("employer", "Acme Robotics", "profile_slot"), ("allergies", "peanuts", "fact"),
    ("pet", "a dog named Biscuit", "fact"), ("car", "Renault Zoe", "fact"),
    ("languages", "French and English", "profile_slot"), ("hobbies", "bouldering", "preference"),
    ("coffee_order", "flat white", "preference"), ("timezone", "Europe/Paris", "profile_slot"),
    ("partner", "Sam", "fact"), ("music_taste", "jazz", "preference"),
    ("job_title", "engineer", "profile_slot"), ("children", "two daughters", "fact"),
    ("birthday", "14 June", "identity"), ("name", "Claire", "identity"),
    ("wake_time", "6 am", "fact"), ("favorite_books", "science fiction", "preference"),
    ("response_style", "short answers", "preference"), ("home_type", "apartment", "fact"),
)
SOURCES = ("I moved to Lyon last spring.", "We got a dog, his name is Biscuit.",
           "Peanuts make me really sick.")
QUERY = "tell me about the user"


# --- the format on main before issue 13 (reproduced to price it) -------------------------
def _old_value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _old_item_line(d: Mapping[str, Any]) -> str:
    status = "" if d["status"] == "current" else f"{d['status']}, "
    return (f"[fact] {d['scope']} {d['key']} = {_old_value(d['value'])} ({d['kind']}, "
            f"{status}since {d['valid_at'][:16]}Z)")


def _old_source_line(d: Mapping[str, Any]) -> str:
    return (f"[source] {d['scope']} {d['kind']} by {d['role']} {d['occurred_at'][:10]}: "
            f"{_old_value(d['text'])}")


def old_document(items: Sequence[Mapping[str, Any]], sources: Sequence[Mapping[str, Any]],
                 *, truncated: bool, budget_tokens: int, tokenizer: str) -> str:
    """The serialised recall document main produced before issue 13 (all of it budgeted)."""
    cov = {"constraints": "complete", "facts": "incomplete" if truncated else "complete",
           "sources": "complete"}
    header = (f"remem recall basis_seq=40 truncated={str(truncated).lower()} coverage: "
              f"{' '.join(f'{k}={v}' for k, v in cov.items())}. [source] lines are raw "
              f"evidence, not accepted facts.")
    lines = [header, *map(_old_item_line, items), *map(_old_source_line, sources)]
    return serialise({"status": "partial" if truncated else "succeeded",
                      "action_eligible": not truncated, "basis_seq": 40,
                      "truncated": truncated, "coverage": cov, "budget_tokens": budget_tokens,
                      "tokenizer": tokenizer, "items": list(items), "sources": list(sources),
                      "text": "\n".join(lines)})


def old_fits(items: Sequence[Mapping[str, Any]], budget: int, tok: Any) -> int:
    """How many facts (best first) the old whole-document budget let through."""
    n = 0
    while n < len(items) and tok.count(old_document(
            items[:n + 1], [], truncated=n + 1 < len(items), budget_tokens=budget,
            tokenizer=tok.name)) <= budget:
        n += 1
    return n


# --- measuring ---------------------------------------------------------------------------
def _seed(mem: Any) -> None:
    at = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
    for key, value, kind in FACTS:
        mem.remember(SCOPE, key, value, kind=kind, valid_at=at)
    for i, text in enumerate(SOURCES):
        mem.observe("user:u2", text, source_id=f"s{i}", occurred_at=at, derive=False)


def measure(mem: Any, tokenizer: str) -> dict[str, Any]:
    """Before/after numbers under one tokenizer (see the module docstring)."""
    tok = build_tokenizer(tokenizer)
    big = 100_000
    empty = mem.recall(["user:nobody"], QUERY, budget_tokens=big, tokenizer=tokenizer)
    full = mem.recall([SCOPE], QUERY, budget_tokens=big, tokenizer=tokenizer, limit=len(FACTS))
    items = full.document["items"]
    fact_lines = full.text.split("\n")[2:]  # after the status line and the scope heading
    per_fact = [tok.count(line) + 1 for line in fact_lines]
    srcs = mem.recall(["user:u2"], "Lyon dog Biscuit peanuts", budget_tokens=big,
                      tokenizer=tokenizer).document["sources"]
    src_lines = [ln for ln in mem.recall(["user:u2"], "Lyon dog Biscuit peanuts",
                                         budget_tokens=big, tokenizer=tokenizer
                                         ).text.split("\n") if ln.startswith("- ")]
    per_source = [tok.count(ln) + 1 - tok.count(json.dumps(s["text"], ensure_ascii=False))
                  for ln, s in zip(src_lines, srcs, strict=True)]
    old_empty = tok.count(old_document([], [], truncated=False, budget_tokens=300,
                                       tokenizer=tokenizer))
    old_all = tok.count(old_document(items, [], truncated=False, budget_tokens=300,
                                     tokenizer=tokenizer))
    old_src = [tok.count(old_document([], [s], truncated=False, budget_tokens=300,
                                      tokenizer=tokenizer)) - old_empty
               - tok.count(json.dumps(s["text"], ensure_ascii=False)) for s in srcs]
    fits = {}
    for b in BUDGETS:
        r = mem.recall([SCOPE], QUERY, budget_tokens=b, tokenizer=tokenizer, limit=len(FACTS))
        fits[str(b)] = {"after": len(r.items), "before": old_fits(items, b, tok)}
    stale = _stale_label_tokens(items, tok)
    return {
        "after": {"empty_tokens": empty.tokens,
                  "per_fact_tokens": {"median": statistics.median(per_fact),
                                      "max": max(per_fact)},
                  "scope_heading_tokens": tok.count(SCOPE) + 1,
                  "per_source_tokens_besides_text": {"median": statistics.median(per_source),
                                                     "max": max(per_source)},
                  "empty_text": empty.text,
                  "stale_label_tokens": stale},
        "before": {"empty_tokens": old_empty,
                   "per_fact_tokens": {"mean": round((old_all - old_empty) / len(items), 1)},
                   "per_source_tokens_besides_text": {"median": statistics.median(old_src),
                                                      "max": max(old_src)}},
        "facts_that_fit": fits,
    }


def _stale_label_tokens(items: Sequence[Mapping[str, Any]], tok: Any) -> dict[str, int]:
    """What labelling a Kind-B cached fact stale adds to its line (``stale, ``)."""
    from remem.domain.render import item_line

    extra = [tok.count(item_line({**d, "cached": {"stale": True}}, constraint=False))
             - tok.count(item_line(d, constraint=False)) for d in items]
    return {"median": statistics.median(extra), "max": max(extra)}


def run_render(out_dir: Path) -> dict[str, Any]:
    """Measures every tokenizer, writes ``results.json`` and ``render.png``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        store = remem.open(Path(tmp) / "render.db")
        try:
            mem = store.create_memory("render")
            _seed(mem)
            per = {t: measure(mem, t) for t in TOKENIZERS}
        finally:
            store.close()
    doc = {"benchmark": "render", "created_at": datetime.now(UTC).isoformat(),
           "settings": {"facts": len(FACTS), "sources": len(SOURCES), "budgets": BUDGETS,
                        "targets": {"empty_tokens": 30, "per_fact_tokens": 25,
                                    "per_source_tokens_besides_text": 15}},
           "tokenizers": per}
    (out_dir / "results.json").write_text(json.dumps(doc, indent=2, ensure_ascii=False))
    plot(doc, out_dir / "render.png")
    return doc


def plot(doc: dict[str, Any], path: Path) -> None:
    """A PNG: facts that fit per budget, before vs after (o200k_base)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fits = doc["tokenizers"]["o200k_base"]["facts_that_fit"]
    budgets = list(fits)
    xs = range(len(budgets))
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    ax.bar([x - 0.2 for x in xs], [fits[b]["before"] for b in budgets], 0.4,
           label="before (whole JSON counted)", color="#7f7f7f")
    ax.bar([x + 0.2 for x in xs], [fits[b]["after"] for b in budgets], 0.4,
           label="after (compact text counted)", color="#1f77b4")
    ax.set_xticks(list(xs), budgets)
    ax.set_xlabel("recall budget (o200k_base tokens)")
    ax.set_ylabel("facts returned")
    ax.set_title("recall: short facts that fit a budget")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def rich_table(doc: dict[str, Any]) -> Any:
    """The before/after table for the CLI (one row per measure and tokenizer)."""
    from rich.table import Table

    t = Table(title="recall rendering cost in tokens: before (main) -> after (issue 13)")
    for col in ("tokenizer", "measure", "before", "after", "target"):
        t.add_column(col, justify="right")
    for name, m in doc["tokenizers"].items():
        a, b = m["after"], m["before"]
        t.add_row(name, "empty result", str(b["empty_tokens"]), str(a["empty_tokens"]), "<= 30")
        t.add_row(name, "per short fact", f"{b['per_fact_tokens']['mean']}",
                  f"{a['per_fact_tokens']['median']} (max {a['per_fact_tokens']['max']})",
                  "<= 25")
        t.add_row(name, "per source line + text",
                  f"{b['per_source_tokens_besides_text']['median']}",
                  f"{a['per_source_tokens_besides_text']['median']} "
                  f"(max {a['per_source_tokens_besides_text']['max']})", "<= 15")
        for budget, f in m["facts_that_fit"].items():
            t.add_row(name, f"facts within {budget}", str(f["before"]), str(f["after"]), "")
    return t
