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
(:func:`digest_doc_id`), so erasing a source finds every digest that held its text without a
lookup table: the windows containing it (:func:`windows_containing`) that its own scope
completed (:func:`holding_windows`); another scope's digest of the same window never held it
and stays. A digest that held it is derived again from the window's remaining live sources
(redacted ones are left out, :func:`window_members`), the same text intake and rebuild derive.

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


def digest_text(members: Sequence[Mapping[str, Any]]) -> str:
    """The indexed text of a digest: its members' texts in sequence order, one per line."""
    rows = sorted(members, key=lambda r: r["sequence"])
    return "\n".join(r["text"] for r in rows)


def window_members(rows: Iterable[Mapping[str, Any]], scope: str) -> list[Mapping[str, Any]]:
    """The live sources of one scope among a window's rows (``scope``, ``sequence``,
    ``text``), in sequence order; redacted rows (text None) are left out, and the result is
    empty when fewer than :data:`MIN_MEMBERS` remain. Intake, erasure (which derives a digest
    that held an erased turn again) and rebuild all derive a window's digest from this, so
    they agree on which digests exist and on their texts."""
    out = sorted((r for r in rows if r["scope"] == scope and r.get("text")),
                 key=lambda r: r["sequence"])
    return out if len(out) >= MIN_MEMBERS else []


def completing_positions(erased: Iterable[Mapping[str, Any]]) -> list[tuple[str, int]]:
    """``(run id, sequence)`` of the source that completes each window containing one of
    the ``erased`` source rows (``run_id``, ``sequence``): what :func:`holding_windows`
    needs to know the scope of."""
    return sorted({(s["run_id"], window_range(w)[1]) for s in erased
                   for w in windows_containing(int(s["sequence"]))})


def holding_windows(erased: Iterable[Mapping[str, Any]],
                    scope_at: Mapping[tuple[str, int], str]) -> list[tuple[str, int]]:
    """``(run id, window)`` of every digest that holds the text of one of the ``erased``
    source rows (``run_id``, ``sequence``, ``scope``), sorted: a window containing it that
    a source of its own scope completed. A digest joins only its completing source's scope,
    so another scope's digest of the same window never held the text.

    Args:
        erased: the source rows being erased.
        scope_at: ``(run id, sequence)`` -> scope of the completing sources recorded so far
            (:func:`completing_positions`); a window not yet completed has no digest.
    """
    out = set()
    for s in erased:
        for w in windows_containing(int(s["sequence"])):
            if scope_at.get((s["run_id"], window_range(w)[1])) == s["scope"]:
                out.add((s["run_id"], w))
    return sorted(out)


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
