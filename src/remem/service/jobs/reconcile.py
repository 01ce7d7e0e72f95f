"""Reconcile one derived claim: the judge is asked at the ledger head, inside the decision.

KickSide write path, step 2: a claim already current is seen again (the rules decide, no
judge); a single key holding another value relates to that value only; otherwise the same-key
live items **and the nearest live items of the scope** (vector neighbours of the candidate's
text) reach the judge, which answers ADD | SUPERSEDE | MERGE | NOOP | CONFLICT over their ids.

The judgement is formed at one ledger head and committed only at that head
(``Writer.write_judged``): when another writer moved the head while the judge was thinking, the
verdict is refused and the claim is decided again on the newer state.

A verdict whose target is a neighbour under another key relates the candidate to that item:
the candidate is reconciled under the target's key (the judge said both name one topic).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from remem.domain.keys import default_cardinality
from remem.domain.model import Authority, Candidate, Cardinality
from remem.domain.sourcelog import is_item_doc
from remem.domain.textindex import item_text
from remem.domain.timefmt import from_iso
from remem.errors import RememError
from remem.service.writer import WriteRequest

#: How many nearest live items of the scope (other keys) reach the judge.
NEIGHBOURS = 5
#: Cosine below which a vector neighbour is not offered to the judge.
MIN_NEIGHBOUR_SIMILARITY = 0.3
LIVE = ("current", "conflict")


def _offered(view: Any) -> dict[str, Any]:
    return {"item_id": view.item_id, "key": view.key, "value": view.value, "kind": view.kind,
            "valid_at": from_iso(view.valid_at)}


def same_key_live(memory: Any, scope: str, key: str) -> list[Any]:
    """Live items (current, conflict) of the key, with their values."""
    return list(memory.items(scope=scope, key=key, limit=1000).items)


def neighbours(memory: Any, cand: Candidate, exclude_key: str,
               limit: int = NEIGHBOURS) -> list[Any]:
    """The nearest live items of the candidate's scope under other keys (by vector)."""
    scope = str(cand.scope)
    emb = memory.ctx.embedding
    try:
        qvec = emb.query_vector(item_text(cand.key, cand.value, cand.source.text),
                                emb.recorded())
        if qvec is None:
            return []
        with emb.index.read(memory.id) as snap:
            hits = snap.vectors(qvec, [scope], limit * 4, MIN_NEIGHBOUR_SIMILARITY)
    except RememError:  # no vector index or another embedder: same-key items only
        return []
    ids = [d for d, _, _ in hits if is_item_doc(d)]
    out = []
    for item_id in ids:
        rec = memory.store.item(memory.id, item_id)
        if rec is None or rec.status not in LIVE or rec.key == exclude_key:
            continue
        out.append(memory.get(item_id))
        if len(out) == limit:
            break
    return out


def _cardinality(memory: Any, scope: str, key: str) -> Cardinality:
    recs = memory.store.key_items(memory.id, scope, key)
    if recs:
        return Cardinality(recs[0].cardinality)
    configured, _ = memory.ctx.policy(key)
    return configured or default_cardinality(key)


def offered_items(memory: Any, cand: Candidate) -> tuple[list[Any], list[Any]]:
    """(same-key live items, neighbours) the judge sees for ``cand`` (see the module doc)."""
    scope, key = str(cand.scope), cand.key
    same = same_key_live(memory, scope, key)
    cid = memory.writer.claim_id(scope, key, cand.value)
    if any(v.claim_id == cid for v in same):
        return [], []  # seen again: the rules decide
    if same and _cardinality(memory, scope, key) is Cardinality.SINGLE:
        return same, []  # a single key holding another value relates to that value only
    return same, neighbours(memory, cand, key)


def judged_request(memory: Any, cand: Candidate, idempotency_key: str,
                   run_id: str | None = None, provenance: tuple = (),
                   metadata: dict[str, Any] | None = None,
                   priority: int | None = None) -> WriteRequest:
    """The derive write for ``cand`` with the judge's verdict formed on the current state."""
    judge = getattr(memory, "judge", None)
    judgement = None
    if judge is not None and getattr(judge, "wants_items", True):
        same, near = offered_items(memory, cand)
        existing = same + near
        if existing:
            judgement = judge.judge([_offered(v) for v in existing], {
                "key": cand.key, "value": cand.value, "kind": cand.kind.value,
                "valid_at": cand.valid_at})
        target = next((v for v in near if judgement and v.item_id == judgement.target), None)
        if target is not None:
            cand = replace(cand, key=target.key)
    return WriteRequest(cand, Authority.AUTOMATIC, "system:derive", judgement=judgement,
                        idempotency_key=idempotency_key, intent="derive", run_id=run_id,
                        provenance=provenance, metadata=metadata, priority=priority)


def reconcile(memory: Any, cand: Candidate, idempotency_key: str, *, run_id: str | None = None,
              provenance: tuple = (), metadata: dict[str, Any] | None = None,
              priority: int | None = None) -> str:
    """Judges and writes ``cand`` at one head (re-judged when the head moved); the outcome."""
    result = memory.writer.write_judged(
        lambda head: judged_request(memory, cand, idempotency_key, run_id, provenance,
                                    metadata, priority))
    return result.outcome if result is not None else "noop"
