"""Digests at intake and recall (:mod:`remem.domain.digests`).

Intake: :func:`index_digests` runs inside the transaction that records sources; for every
window a new source completes it reads the window's rows, joins the live texts of the
completing source's scope, embeds them (one batch) and indexes the digest in full text and
as a vector (document type ``digest``). Erasure of a source erases the digests that hold its
text (the stores' ``erase_digests``: the windows its own scope completed), so a digest never
outlives a turn's text; :func:`reindex_windows` then derives those windows again from their
remaining live turns, so a window that still has enough of them stays indexed (the same
digest rebuild derives).

Recall: :func:`digest_channels` turns the digests among a query's full-text and vector
candidates into two ranked lists of source ids (``digest_fts``, ``digest_vector``), fused
with the other channels; the digests themselves are dropped from the candidates.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from remem.domain.digests import (
    DOC_DIGEST,
    TOP_DIGESTS,
    is_digest_doc,
    parse_digest_doc,
    promoted,
    window_completed_by,
    window_digests,
    window_members,
    window_range,
)
from remem.domain.textindex import content_hash


def index_digests(embedding: Any, w: Any, rows: Sequence[Mapping[str, Any]]) -> int:
    """Indexes the digests of the windows that the just-inserted source ``rows`` complete;
    returns how many. Runs inside the caller's write transaction (``w``: its search
    writer, which reads the rows it inserted)."""
    wanted = sorted({(row["run_id"], k) for row in rows
                     if (k := window_completed_by(int(row["sequence"]))) is not None})
    return _index_windows(embedding, w, wanted)


def reindex_windows(embedding: Any, w: Any, doc_ids: Sequence[str]) -> int:
    """Derives the digests of the windows named by ``doc_ids`` again from their current
    rows (redacted turns left out) and indexes those that still have enough live turns;
    returns how many. Runs inside the caller's write transaction (``w``)."""
    return _index_windows(embedding, w, sorted({parse_digest_doc(d) for d in doc_ids}))


def _index_windows(embedding: Any, w: Any, wanted: list[tuple[str, int]]) -> int:
    """Indexes the digests of the ``(run id, window)`` pairs (full text and vector)."""
    if not wanted:
        return 0
    docs = window_digests(w.run_windows([(run, *window_range(k)) for run, k in wanted]),
                          wanted)
    if not docs:
        return 0
    vecs = embedding.embed([t for _, _, t in docs])
    for doc, scope, text in docs:
        w.index_text(doc, DOC_DIGEST, scope, text)
    embedding.store_vectors(w, [(doc, DOC_DIGEST, scope, content_hash(text), vec)
                                for (doc, scope, text), vec in zip(docs, vecs, strict=True)])
    return len(docs)


def digest_candidates(snap: Any, fts: list[tuple[str, str]],
                      hits: list[tuple[str, float, str]]
                      ) -> tuple[list[tuple[str, str]], list[tuple[str, float, str]],
                                 dict[str, list[str]]]:
    """(full-text hits, vector hits, promoted channels): the channels' hits without digests,
    and the source ids the digests among them promote (:func:`digest_channels`)."""
    fts_dg = [(d, sc) for d, sc in fts if is_digest_doc(d)]
    vec_dg = [(d, sc) for d, _, sc in hits if is_digest_doc(d)]
    if not fts_dg and not vec_dg:
        return fts, hits, {}
    fts = [h for h in fts if not is_digest_doc(h[0])]
    hits = [h for h in hits if not is_digest_doc(h[0])]
    return fts, hits, digest_channels(snap, [d for d, _ in fts_dg], [d for d, _ in vec_dg],
                                      dict(fts_dg + vec_dg), {d: c for d, c, _ in hits})


def digest_channels(snap: Any, fts_digests: Sequence[str], vector_digests: Sequence[str],
                    scope_of: Mapping[str, str], cosine: Mapping[str, float]
                    ) -> dict[str, list[str]]:
    """``{"digest_fts": [...], "digest_vector": [...]}``: source ids promoted by the
    digests each channel found (:func:`remem.domain.digests.promoted`).

    Args:
        snap: the recall snapshot (``run_windows``).
        fts_digests, vector_digests: digest ids, best first, as each channel ranked them.
        scope_of: digest id -> its scope (a member must share it).
        cosine: source id -> cosine with the query, where the vector channel knows it.
    """
    fts_digests, vector_digests = fts_digests[:TOP_DIGESTS], vector_digests[:TOP_DIGESTS]
    docs = list(dict.fromkeys([*fts_digests, *vector_digests]))
    if not docs:
        return {}
    where = {d: parse_digest_doc(d) for d in docs}
    ranges = [(run, *window_range(k)) for run, k in where.values()]
    rows = snap.run_windows(ranges)
    members: dict[str, list[str]] = {}
    for d, (run, k) in where.items():
        first, last = window_range(k)
        live = window_members([r for r in rows if r["run_id"] == run
                               and first <= r["sequence"] <= last], scope_of.get(d, ""))
        members[d] = [r["source_id"] for r in live]
    return {"digest_fts": promoted(fts_digests, members, cosine),
            "digest_vector": promoted(vector_digests, members, cosine)}
