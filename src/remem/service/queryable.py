"""The KickSide ``queryable`` contract: current items of the caller's scopes nearest a query.

Unlike ``recall`` (a budgeted, model-facing document), ``query`` is for programs: each result
is an item with a ``meta`` block — ``node_type`` (the item's kind), ``similarity`` (cosine of
the query and the item's text, 0..1 rounded to 4 places) and ``created_at`` (when the item was
written). Only current items are returned, best first, and each claim once: occurrences of
a claim (the same value stated again later) are one result, its earliest item.
"""

from __future__ import annotations

from typing import Any

from remem.domain.limits import check_text
from remem.domain.sourcelog import is_item_doc
from remem.errors import InvalidInput

#: Cosine below which an item is not returned.
MIN_QUERY_SIMILARITY = 0.0
#: Most results one query returns.
MAX_QUERY_LIMIT = 100


def query(ctx: Any, scopes: list[str], text: str, *, limit: int = 10) -> list[dict[str, Any]]:
    """Current items of ``scopes`` nearest ``text`` by vector, with ``meta`` (see module doc).

    Returns an empty list when the memory has no vectors yet.

    Raises:
        InvalidInput: an empty or oversize text (16,384 UTF-8 bytes), or ``limit`` outside
            1..100.
    """
    check_text(text, "text", 16_384)
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput("text must be a non-empty string.", field="text")
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_QUERY_LIMIT:
        raise InvalidInput(f"limit must be between 1 and {MAX_QUERY_LIMIT}.", field="limit")
    emb = ctx.embedding
    qvec = emb.query_vector(text, emb.recorded())
    if qvec is None:
        return []
    with emb.index.read(ctx.id) as snap:
        hits = [(d, c) for d, c, _ in snap.vectors(qvec, scopes, limit * 4 + 10,
                                                   MIN_QUERY_SIMILARITY) if is_item_doc(d)]
    out: list[dict[str, Any]] = []
    claims: set[str] = set()
    for item_id, cosine in hits:
        rec = ctx.store.item(ctx.id, item_id)
        if rec is None or rec.status != "current" or rec.scope not in scopes \
                or rec.claim_id in claims:
            continue
        claims.add(rec.claim_id)
        payload = ctx.store.payloads(ctx.id, [rec.payload_id]).get(rec.payload_id) or {}
        out.append({"id": rec.item_id, "scope": rec.scope, "key": rec.key,
                    "value": payload.get("value"), "kind": rec.kind,
                    "valid_at": rec.valid_at,
                    "meta": {"node_type": rec.kind, "similarity": round(float(cosine), 4),
                             "created_at": rec.created_at}})
        if len(out) == limit:
            break
    return out

