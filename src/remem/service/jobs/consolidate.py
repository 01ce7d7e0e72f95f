"""Consolidation: a per-memory job that merges duplicate live occurrences of a claim.

Two live items of a key are duplicates when their values are equal after the claim
normalisation plus punctuation and leading articles ("Peanuts." and "peanuts"): different
claim ids, one fact. The later ones merge into the earliest (``item.merged``).

Re-arms itself every ``consolidation_interval_hours`` (memory config; default 24) and can be
brought forward (``Memory.consolidate_now``). Emits ``consolidation.completed`` with stats.
"""

from __future__ import annotations

from typing import Any

from remem.domain.events import Event, EventType
from remem.domain.operations import Operation

DEFAULT_INTERVAL_HOURS = 24.0


def loose_form(value: Any) -> str:
    """Value identity for consolidation: normalised text without punctuation or articles."""
    import re

    from remem.domain.canonical import canonical_json, normalize_value

    if not isinstance(value, str):
        return canonical_json(normalize_value(value)).decode()
    text = re.sub(r"[^\w\s]", " ", normalize_value(value))
    text = re.sub(r"^(the|a|an)\s+", "", " ".join(text.split()))
    return text


def _merge_duplicates(state, values: dict[str, Any]) -> Operation:
    by_claim: dict[str, list] = {}
    for i in state.live():
        by_claim.setdefault(loose_form(values.get(i.item_id)), []).append(i)
    # occurrences of one claim are not duplicates of each other: one per claim id merges
    by_claim = {k: list({i.claim_id: i for i in reversed(v)}.values())[::-1]
                for k, v in by_claim.items()}
    dups = [items for items in by_claim.values() if len(items) > 1]
    if not dups:
        return Operation((), state.revision)
    rev = state.revision + 1
    events = []
    for items in dups:
        items = sorted(items, key=lambda i: (i.valid_at, i.revision))
        events.append(Event(EventType.ITEM_MERGED, {
            "scope": str(state.scope), "key": state.key, "revision": rev,
            "item_ids": [i.item_id for i in items[1:]], "into": items[0].item_id}))
    return Operation(tuple(events), rev, tuple(i.item_id for g in dups for i in g[1:]))


def run_consolidation(memory: Any, job: dict[str, Any], run_id: str) -> dict[str, Any]:
    """Job handler: merge duplicates key by key, record stats, re-arm the next run."""
    keys = memory.store.live_keys(memory.id)
    merged = 0
    for scope, key in keys:
        views = memory.items(scope=scope, key=key, limit=1000).items
        values = {v.item_id: v.value for v in views}
        op = memory.writer.operate(scope, key, "system:consolidation",
                                   lambda st, p, values=values: _merge_duplicates(st, values))
        merged += len(op.item_ids)
    stats = {"keys_checked": len(keys), "merged": merged}
    memory.writer.append_raw([Event(EventType.CONSOLIDATION_COMPLETED,
                                    {"run_id": run_id, "stats": stats})],
                             "system:consolidation")
    schedule_consolidation(memory)
    return stats


def schedule_consolidation(memory: Any, *, now_: bool = False) -> str:
    """Arms the memory's next consolidation (or brings it forward with ``now_``)."""
    from remem.service.jobs.schedule import arm

    return arm(memory, "consolidate", now_=now_)["job_id"]
