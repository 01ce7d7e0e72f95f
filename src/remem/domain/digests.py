"""Digests: engine-made documents over windows of consecutive sources of a run.

An answer spread over a few turns is often worded unlike the question in every single turn,
while the turns together share its words and meaning ("we went last weekend" after "any
camping plans?"). So the engine indexes, beside each source, one *digest* per window of
:data:`WINDOW_SOURCES` consecutive sources of a run (stride :data:`WINDOW_STRIDE`: each source
is in two windows), in full text and as one vector. No model: the digest's text is the
window's source texts joined in sequence order. A digest is never shown; a digest that
matches a query promotes its sources into the candidate set (recall's ``digest_fts`` and
``digest_vector`` channels rank the sources of the best digests, each digest's sources by
their own similarity to the query), so a result still counts as the turns it shows.

Windows are numbered per run: window ``k`` covers sequences ``k * STRIDE`` to
``k * STRIDE + WINDOW_SOURCES - 1``, and is indexed when the source that completes it (its
last sequence) is recorded, from the sources of that range in the completing source's scope
(a digest never mixes scopes). The digest's document id names the window
(:func:`digest_doc_id`), so erasing a source erases every digest that contained it
(:func:`windows_containing`) without a lookup table.

Measured on the LoCoMo dev split (``remem bench locomo``); see ``bench/locomo_bench.py``.

Pure functions, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from remem.domain import sourcelog

WINDOW_SOURCES = 6
"""Sources per digest window."""
WINDOW_STRIDE = 3
"""Sequences between the starts of consecutive windows."""
MIN_MEMBERS = 2
"""A window with fewer live sources of one scope gets no digest."""
DIGEST_PREFIX = sourcelog.DIGEST_PREFIX
"""Digest document ids start with this (``itm_dg:``): caller-chosen source ids can never
start with the reserved item prefix ``itm_`` and minted item ids never contain ``:``."""
DOC_DIGEST = "digest"
"""The search document type of a digest."""
TOP_DIGESTS = 10
"""Digests per channel whose sources are promoted."""


def is_digest_doc(doc_id: str) -> bool:
    """Whether a search document is a digest."""
    return doc_id.startswith(DIGEST_PREFIX)


def digest_doc_id(run_id: str, window: int) -> str:
    """The document id of window ``window`` of run ``run_id``: ``itm_dg:<window>:<run id>``."""
    return f"{DIGEST_PREFIX}{window}:{run_id}"


def parse_digest_doc(doc_id: str) -> tuple[str, int]:
    """(run id, window) of a digest document id (see :func:`digest_doc_id`)."""
    window, _, run_id = doc_id[len(DIGEST_PREFIX):].partition(":")
    return run_id, int(window)


def window_range(window: int) -> tuple[int, int]:
    """(first, last) sequence of a window, inclusive."""
    first = window * WINDOW_STRIDE
    return first, first + WINDOW_SOURCES - 1


def window_completed_by(sequence: int) -> int | None:
    """The window whose last sequence is ``sequence``, or None."""
    start = sequence - WINDOW_SOURCES + 1
    if start < 0 or start % WINDOW_STRIDE:
        return None
    return start // WINDOW_STRIDE


def windows_containing(sequence: int) -> list[int]:
    """Every window that covers ``sequence``."""
    low = max(0, -(-(sequence - WINDOW_SOURCES + 1) // WINDOW_STRIDE))
    return list(range(low, sequence // WINDOW_STRIDE + 1))


def digest_ids_of(sources: Iterable[Mapping[str, Any]]) -> list[str]:
    """Document ids of every digest that may contain any of the sources (rows with
    ``run_id`` and ``sequence``), sorted: what erasing those sources must erase."""
    return sorted({digest_doc_id(s["run_id"], w) for s in sources
                   for w in windows_containing(int(s["sequence"]))})


def digest_text(members: Sequence[Mapping[str, Any]]) -> str:
    """The indexed text of a digest: its members' texts in sequence order, one per line."""
    rows = sorted(members, key=lambda r: r["sequence"])
    return "\n".join(r["text"] for r in rows)


def window_members(rows: Iterable[Mapping[str, Any]], scope: str) -> list[Mapping[str, Any]]:
    """The sources of one scope among a window's rows (``scope``, ``sequence``, ``text``), in
    sequence order; empty when fewer than :data:`MIN_MEMBERS`, or when any row of the window
    was redacted (text None): a digest never outlives, nor is rebuilt without, an erased
    source, so intake, erasure and rebuild agree on which digests exist."""
    rows = list(rows)
    if any(not r.get("text") for r in rows):
        return []
    out = sorted((r for r in rows if r["scope"] == scope), key=lambda r: r["sequence"])
    return out if len(out) >= MIN_MEMBERS else []


def window_digests(rows: Iterable[Mapping[str, Any]],
                   windows: Iterable[tuple[str, int]] | None = None
                   ) -> list[tuple[str, str, str]]:
    """``(doc id, scope, text)`` of the digests of source rows (``run_id``, ``sequence``,
    ``scope``, ``text``; redacted rows included, text None).

    Args:
        rows: every row of the windows asked for (more is fine).
        windows: ``(run id, window)`` pairs; None: every window completed by one of the rows.
    """
    at: dict[tuple[str, int], Mapping[str, Any]] = {
        (r["run_id"], int(r["sequence"])): r for r in rows}
    if windows is None:
        windows = sorted({(run, k) for run, seq in at
                          if (k := window_completed_by(seq)) is not None})
    out = []
    for run, k in windows:
        first, last = window_range(k)
        done = at.get((run, last))
        if done is None:
            continue
        members = window_members([at[(run, s)] for s in range(first, last + 1)
                                  if (run, s) in at], done["scope"])
        if members:
            out.append((digest_doc_id(run, k), done["scope"], digest_text(members)))
    return out


def promoted(digests: Sequence[str], members: Mapping[str, Sequence[str]],
             similarity: Mapping[str, float]) -> list[str]:
    """A channel of source ids promoted by ranked digests: the sources of the best digest
    first (each digest's sources by descending ``similarity``, unknown last, then sequence
    order), then the next digest's sources not yet listed.

    Args:
        digests: digest document ids, best first (at most :data:`TOP_DIGESTS` are used).
        members: digest document id -> its visible source ids in sequence order.
        similarity: source id -> cosine similarity to the query (missing: unknown).
    """
    out: list[str] = []
    seen: set[str] = set()
    for doc in digests[:TOP_DIGESTS]:
        ids = list(members.get(doc, ()))
        order = {sid: i for i, sid in enumerate(ids)}
        ids.sort(key=lambda s: (-similarity.get(s, -2.0), order[s]))
        for sid in ids:
            if sid not in seen:
                seen.add(sid)
                out.append(sid)
    return out


#: Digests are opt-in per memory (``{"digests": true}``): they lift conversation recall (LoCoMo
#: R@10 "all" 0.696 -> 0.743) but embed one extra, six-turn text per three turns at intake
#: and add full-text and vector documents every recall searches.
DEFAULT_DIGESTS = False


def digests_enabled(config: Mapping[str, Any]) -> bool:
    """Whether a memory indexes digests of its conversation windows (its config's
    ``digests``)."""
    return bool(config.get("digests", DEFAULT_DIGESTS))
