"""Evidence recall@k and latency percentiles for the LoCoMo bench.

Recall@k for one question: the retrieved dia_ids are de-duplicated keeping each id's first
occurrence (several memory items may cite the same turn), the first k *distinct* ids are kept,
and

* ``all`` is true when every evidence id is among them,
* ``any`` is true when at least one is.

Aggregation (``aggregate_recall``): a question counts only when it is scorable, i.e. its category
is not 5 (adversarial) and it has at least one evidence id; the others are counted as skipped.
Scores are plain means over questions (micro averages), per category and overall, for each k.

Latency percentiles (``percentile``): ``"nearest_rank"`` (default) returns an observed value, the
one at 1-based rank ceil(q/100 * n) of the sorted values (q=0 gives the minimum); ``"linear"``
interpolates between the two closest ranks at position (n-1)*q/100 (0-based), the same as
numpy's default ``percentile`` method.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "recall_at_k",
    "RecallRecord",
    "RecallScore",
    "RecallSummary",
    "aggregate_recall",
    "percentile",
    "LatencySummary",
    "latency_summary",
]

ADVERSARIAL_CATEGORY = 5


def _distinct_top_k(retrieved: Iterable[str], k: int) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for r in retrieved:
        if r in seen:
            continue
        seen.add(r)
        out.append(r)
        if len(out) == k:
            break
    return out


def recall_at_k(
    retrieved_dia_ids: Sequence[str], evidence: set[str] | frozenset[str], k: int
) -> tuple[bool, bool]:
    """``(all, any)``: whether every / some evidence id is among the top-k distinct retrieved ids.

    Raises ``ValueError`` for k < 1 or empty evidence (recall is undefined there).
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    ev = set(evidence)
    if not ev:
        raise ValueError("evidence is empty: recall is undefined")
    top = set(_distinct_top_k(retrieved_dia_ids, k))
    hit = ev & top
    return hit == ev, bool(hit)


@dataclass(frozen=True, slots=True)
class RecallRecord:
    """One question's outcome: its category, what was retrieved (best first), its evidence."""

    category: int
    retrieved: tuple[str, ...]
    evidence: frozenset[str]
    qid: str = ""

    @property
    def scorable(self) -> bool:
        return self.category != ADVERSARIAL_CATEGORY and bool(self.evidence)


@dataclass(frozen=True, slots=True)
class RecallScore:
    """Mean of ``all`` and ``any`` over ``n`` questions at one k (0.0 when n == 0)."""

    n: int
    all: float
    any: float


@dataclass(frozen=True, slots=True)
class RecallSummary:
    ks: tuple[int, ...]
    overall: dict[int, RecallScore]
    by_category: dict[int, dict[int, RecallScore]]
    skipped: int = 0
    skipped_by_category: dict[int, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, object]:
        def block(d: dict[int, RecallScore]) -> dict[str, dict[str, float | int]]:
            return {f"R@{k}": {"n": s.n, "all": s.all, "any": s.any} for k, s in d.items()}

        return {
            "overall": block(self.overall),
            "by_category": {str(c): block(d) for c, d in sorted(self.by_category.items())},
            "skipped": self.skipped,
            "skipped_by_category": {str(c): n for c, n in sorted(self.skipped_by_category.items())},
        }


def aggregate_recall(records: Iterable[RecallRecord], ks: Sequence[int] = (5, 10)) -> RecallSummary:
    """Mean recall@k (all/any) per category and overall over the scorable records."""
    ks_t = tuple(ks)
    if not ks_t or any(k < 1 for k in ks_t):
        raise ValueError(f"ks must be non-empty positive integers, got {ks!r}")
    # sums[cat][k] = [n, all_hits, any_hits]
    sums: dict[int, dict[int, list[int]]] = {}
    total: dict[int, list[int]] = {k: [0, 0, 0] for k in ks_t}
    skipped = 0
    skipped_by_cat: dict[int, int] = {}
    for rec in records:
        if not rec.scorable:
            skipped += 1
            skipped_by_cat[rec.category] = skipped_by_cat.get(rec.category, 0) + 1
            continue
        cat = sums.setdefault(rec.category, {k: [0, 0, 0] for k in ks_t})
        for k in ks_t:
            a, y = recall_at_k(rec.retrieved, rec.evidence, k)
            for acc in (cat[k], total[k]):
                acc[0] += 1
                acc[1] += a
                acc[2] += y

    def score(acc: list[int]) -> RecallScore:
        n, a, y = acc
        return RecallScore(n=n, all=a / n if n else 0.0, any=y / n if n else 0.0)

    return RecallSummary(
        ks=ks_t,
        overall={k: score(total[k]) for k in ks_t},
        by_category={c: {k: score(d[k]) for k in ks_t} for c, d in sorted(sums.items())},
        skipped=skipped,
        skipped_by_category=skipped_by_cat,
    )


# --------------------------------------------------------------------------- latency


def percentile(
    values: Iterable[float],
    q: float,
    method: Literal["nearest_rank", "linear"] = "nearest_rank",
) -> float:
    """The q-th percentile (0 <= q <= 100) of ``values``; see the module docs for the methods."""
    xs = sorted(float(v) for v in values)
    if not xs:
        raise ValueError("percentile of no values")
    if not 0 <= q <= 100:
        raise ValueError(f"q must be in [0, 100], got {q}")
    n = len(xs)
    if method == "nearest_rank":
        rank = max(1, math.ceil(q / 100 * n))
        return xs[rank - 1]
    if method == "linear":
        pos = (n - 1) * q / 100
        lo = math.floor(pos)
        hi = min(lo + 1, n - 1)
        return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)
    raise ValueError(f"unknown percentile method {method!r}")


@dataclass(frozen=True, slots=True)
class LatencySummary:
    n: int
    p50: float
    p95: float
    mean: float
    max: float
    method: str


def latency_summary(
    values: Iterable[float], method: Literal["nearest_rank", "linear"] = "nearest_rank"
) -> LatencySummary:
    """n, p50, p95, mean and max of latencies (in whatever unit they were given)."""
    xs = [float(v) for v in values]
    if not xs:
        raise ValueError("latency summary of no values")
    return LatencySummary(
        n=len(xs),
        p50=percentile(xs, 50, method),
        p95=percentile(xs, 95, method),
        mean=sum(xs) / len(xs),
        max=max(xs),
        method=method,
    )


def rows_table(title: str, columns: Sequence[tuple[str, str]], rows: Iterable[dict[str, Any]],
               left: frozenset[str] = frozenset()) -> Any:
    """A rich table of result rows: one column per ``(field, header)``, right-aligned unless
    the header is in ``left``; a missing field prints ``-``."""
    from rich.table import Table

    t = Table(title=title)
    for _, h in columns:
        t.add_column(h, justify="left" if h in left else "right")
    for r in rows:
        t.add_row(*(str(r.get(c, "-")) for c, _ in columns))
    return t
