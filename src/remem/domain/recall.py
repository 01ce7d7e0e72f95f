"""Recall ranking: reciprocal rank fusion, then scope, status, kind and as-of filtering.

Ids and scores only; no text, no I/O. The service fetches candidates per channel (full text,
vectors, exact key), fuses them here, loads the item rows and asks :func:`eligible_items`
which of them may be shown.

Fusion (Cormack, Clarke and Buettcher, SIGIR 2009): a document at 1-based rank ``r`` in a
channel earns ``1 / (RRF_K + r)``; its fused score is the sum over channels. The paper uses 60;
remem uses ``RRF_K = 20``: recall returns tens of results, not a TREC run of a thousand, and
with 60 the top of each channel was barely above its 50th candidate (1/61 vs 1/110). Measured
on the LoCoMo dev split (``remem bench locomo``): evidence R@10 "all" 0.675 -> 0.692, R@5
0.568 -> 0.591. Agreement between channels still wins: rank 1 in one channel (1/21) is
below rank 10 in two (2/30).

Status and time (DESIGN.md "Recall"; KIP "Time"):

- default: live statuses only: ``current`` and ``conflict`` (the latter flagged as contested);
  an item past its ``valid_until`` is expired and left out; ``superseded``, ``archived`` and
  forgotten items never appear as current.
- ``include_history``: superseded items are added (labelled ``superseded``). Archived items stay
  hidden (archive is the owner's reversible "hide").
- ``valid_at`` (as-of world time T): an item is returned when it held at T:
  ``valid_at <= T < invalid_at`` (open end when ``invalid_at`` is unset) and ``T < valid_until``.
  A KIP correction makes the old value never true (``invalid_at <= valid_at``): such items hold
  at no time. For a single-cardinality key only the item(s) with the latest ``valid_at`` among
  those holding at T are kept (an older observation stored as history may overlap).

Conversation awareness (sources only; :func:`named_actors`, :func:`strip_actors`,
:func:`rescore_sources`):

- a query that names a speaker of the candidate sources (their ``actor``, as whole words) is
  about that person: it is searched again without the name, so the name stops matching the
  turns that merely address them, and other speakers' sources keep
  :data:`OTHER_ACTOR_WEIGHT` of their score;
- a candidate source that directly follows another candidate in the same run (its sequence
  + 1) gains :data:`NEXT_TURN_SHARE` of that one's score: the answer to a relevant question
  is relevant too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from remem.domain.filters import ItemFilter
from remem.domain.model import ItemStatus
from remem.errors import InvalidInput
from remem.domain.textindex import STOPWORDS, query_words

RRF_K = 20

CHANNELS = ("fts", "vector", "key")

MODES = {"hybrid": CHANNELS, "lexical": ("fts", "key"), "vector": ("vector",)}
"""Recall modes and the channels each searches: ``hybrid`` (default) all three, ``lexical``
full text and exact key, ``vector`` embeddings only."""


def parse_mode(mode: object) -> str:
    """A recall mode name (see :data:`MODES`).

    Raises:
        InvalidInput: any other value.
    """
    if not isinstance(mode, str) or mode not in MODES:
        raise InvalidInput(f"mode {mode!r} is not one of {', '.join(MODES)}.", field="mode")
    return mode

OTHER_ACTOR_WEIGHT = 0.5
"""Share of its fused score a source keeps when the query names another speaker."""
NEXT_TURN_SHARE = 0.3
"""Share of a candidate source's score added to the candidate that directly follows it."""


@dataclass(frozen=True)
class Fused:
    """One fused candidate: document id, fused score and its 1-based rank per channel."""

    doc_id: str
    score: float
    ranks: Mapping[str, int]


def fuse(channels: Mapping[str, Sequence[str]], *, k: int = RRF_K) -> list[Fused]:
    """Reciprocal rank fusion of ranked id lists.

    Args:
        channels: channel name -> document ids, best first (duplicates after the first ignored).
        k: the RRF constant (default :data:`RRF_K` = 20).

    Returns:
        Candidates by descending fused score; ties broken by best single rank, then id, so the
        order is deterministic.
    """
    scores: dict[str, float] = {}
    ranks: dict[str, dict[str, int]] = {}
    for name, ids in channels.items():
        seen: set[str] = set()
        for rank, doc_id in enumerate(ids, start=1):
            if doc_id in seen:
                continue
            seen.add(doc_id)
            scores[doc_id] = scores.get(doc_id, 0.0) + 1.0 / (k + rank)
            ranks.setdefault(doc_id, {})[name] = rank
    out = [Fused(d, s, ranks[d]) for d, s in scores.items()]
    out.sort(key=lambda f: (-f.score, min(f.ranks.values()), f.doc_id))
    return out


@dataclass(frozen=True)
class RecallFilter:
    """What a caller may see.

    Attributes:
        scopes: the caller's exact scopes (never widened).
        kinds: allowed kinds, or None for all.
        include_history: also return superseded items.
        as_of: ISO UTC time for as-of recall, or None for "now".
        now: ISO UTC time of the read (for ``valid_until`` expiry when ``as_of`` is None).
        where: the caller's filter (``domain.filters``): kind, key, status (the status
            shown), time windows; its metadata tests are applied by the service, which
            holds the payloads. None: no filter.
    """

    scopes: frozenset[str]
    kinds: frozenset[str] | None = None
    include_history: bool = False
    as_of: str | None = None
    now: str | None = None
    where: ItemFilter | None = None


def held_at(rec, t: str) -> bool:
    """Whether an item's value held in the world at ISO time ``t`` (see module docstring)."""
    if rec.invalid_at is not None and rec.invalid_at <= rec.valid_at:
        return False  # corrected: never true
    if rec.valid_at > t:
        return False
    if rec.invalid_at is not None and t >= rec.invalid_at:
        return False
    return not (rec.valid_until is not None and t >= rec.valid_until)


def _visible(rec, f: RecallFilter) -> bool:
    if rec.scope not in f.scopes:
        return False
    if f.kinds is not None and rec.kind not in f.kinds:
        return False
    if rec.status == ItemStatus.ARCHIVED or rec.status == ItemStatus.FORGOTTEN:
        return False
    if f.as_of is not None:
        if rec.status == ItemStatus.SUPERSEDED and f.include_history:
            return rec.valid_at <= f.as_of
        return held_at(rec, f.as_of)
    if rec.status == ItemStatus.SUPERSEDED:
        return f.include_history
    return not (rec.valid_until is not None and f.now is not None and f.now >= rec.valid_until)


def eligible_items(records: Iterable, f: RecallFilter) -> list[tuple[object, str]]:
    """The records a caller may see, in input order, each with the status to show.

    Records are ``ItemRecord``-like. Without ``as_of`` the shown status is the stored one. With
    ``as_of``, an item that held at that time shows ``current``; for a single-cardinality key
    only the latest ``valid_at`` among the items holding then counts as holding, and history
    (``include_history``) shows ``superseded``. Conflict items always show ``conflict``.
    """
    recs = [r for r in records if _visible(r, f)]
    if f.as_of is None:
        out = [(r, r.status) for r in recs]
    else:
        out = _as_of(recs, f)
    if f.where is None:
        return out
    return [(r, shown) for r, shown in out if f.where.holds(r, shown)]


def _as_of(recs: list, f: RecallFilter) -> list[tuple[object, str]]:
    """The records holding at ``f.as_of`` (and history) with the status to show."""
    assert f.as_of is not None
    latest: dict[tuple[str, str], str] = {}
    for r in recs:
        if r.cardinality == "single" and held_at(r, f.as_of):
            k = (r.scope, r.key)
            latest[k] = max(latest.get(k, r.valid_at), r.valid_at)
    out: list[tuple[object, str]] = []
    for r in recs:
        holds = held_at(r, f.as_of) and not (
            r.cardinality == "single" and r.valid_at < latest[(r.scope, r.key)])
        if holds:
            out.append((r, r.status if r.status == ItemStatus.CONFLICT else "current"))
        elif f.include_history:
            out.append((r, ItemStatus.SUPERSEDED.value))
    return out


def is_constraint(rec) -> bool:
    """Rules of an agent scope: required output that outranks ordinary similarity."""
    return rec.kind == "rule" and rec.scope.startswith("agent:")


def named_actors(query: str, actors: Iterable[str]) -> frozenset[str]:
    """The actors whose name occurs in the query as whole words, case-insensitively.

    ``named_actors("What did Alice research?", {"Alice", "Bob"})`` ->
    ``{"Alice"}``. A name made only of stop words ("me") never matches.
    """
    hay = f" {' '.join(query_words(query))} "
    out = set()
    for actor in actors:
        words = query_words(actor)
        if words and not all(w in STOPWORDS for w in words) and f" {' '.join(words)} " in hay:
            out.add(actor)
    return frozenset(out)


def strip_actors(query: str, actors: Iterable[str]) -> str:
    """The query without the actors' names (and a possessive ``'s``); the query itself when
    nothing but stop words would be left."""
    out = query
    for actor in sorted(actors, key=len, reverse=True):
        name = r"\W+".join(re.escape(w) for w in actor.split())
        out = re.sub(rf"(?<!\w){name}(?:['\u2019]s)?(?!\w)", " ", out, flags=re.IGNORECASE)
    out = " ".join(out.split())
    return out if any(w not in STOPWORDS for w in query_words(out)) else query


def rescore_sources(scores: Mapping[str, float], sources: Sequence[Mapping[str, Any]],
                    named: frozenset[str] = frozenset()) -> dict[str, float]:
    """New scores of candidate sources (see the module docstring).

    Args:
        scores: fused score by document id (a source's document id is its source id).
        sources: the candidate source rows (``source_id``, ``run_id``, ``sequence``,
            ``actor``); every one must have a score.
        named: actors the query names (:func:`named_actors`); empty for none.

    Returns:
        source id -> score, for every row in ``sources``.
    """
    base = {}
    for s in sources:
        other = bool(named) and s["actor"] is not None and s["actor"] not in named
        base[s["source_id"]] = scores[s["source_id"]] * (OTHER_ACTOR_WEIGHT if other else 1.0)
    at = {(s["run_id"], s["sequence"]): s["source_id"] for s in sources}
    out = dict(base)
    for s in sources:
        prev = at.get((s["run_id"], s["sequence"] - 1))
        if prev is not None:
            out[s["source_id"]] += NEXT_TURN_SHARE * base[prev]
    return out
