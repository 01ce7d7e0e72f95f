"""Reads of one memory: items with their text, inspect, listings, history, conflicts.

Functions take the memory's context and the scopes the guard already allowed; they never
decide access themselves.
"""

from __future__ import annotations

import base64
import json
from datetime import datetime
from typing import Any

from remem.domain.filters import parse_filter
from remem.domain.model import ItemStatus
from remem.domain.timefmt import to_iso
from remem.errors import InvalidInput
from remem.service.results import Inspection, ItemView, Page


def views(ctx: Any, recs: list) -> list[ItemView]:
    """Read-model rows joined with their payloads."""
    payloads = ctx.store.payloads(ctx.id, [r.payload_id for r in recs])
    return [ItemView.build(r, payloads.get(r.payload_id)) for r in recs]


def inspect(ctx: Any, scope: str, key: str) -> Inspection:
    """Current value, revision, state, history and open conflicts of one key."""
    meta = ctx.store.key_meta(ctx.id, scope, key)
    vs = views(ctx, ctx.store.key_items(ctx.id, scope, key))
    current = one_per_claim([v for v in vs if v.status == ItemStatus.CURRENT])
    conflicts = one_per_claim([v for v in vs if v.status == ItemStatus.CONFLICT])
    history = sorted(one_per_claim([v for v in vs if v.status in (ItemStatus.SUPERSEDED,
                                                                  ItemStatus.ARCHIVED)]),
                     key=lambda v: (v.revision, v.valid_at), reverse=True)
    state = _state(vs, current, conflicts, meta)
    single = meta["cardinality"] != "multi"
    top = current[0] if current else None
    if state == "forgotten":
        history, conflicts = [], []
    return Inspection(
        scope=scope, key=key, state=state, revision=meta["revision"],
        cardinality=meta["cardinality"],
        value=(top.value if single else [v.value for v in current]) if top else None,
        current=current, history=history, conflicts=conflicts,
        kind=top.kind if top else None,
        source={"id": top.source_id, "text": top.quote, "role": top.source_role}
        if top else None, valid_until=top.valid_until if top else None)


def one_per_claim(vs: list[ItemView]) -> list[ItemView]:
    """Occurrences of one claim (the same value stated again later: KickSide occurrences)
    shown once, as the claim's first item (``vs`` in revision order). History keeps one entry
    per claim *and* what ended it, so a value held twice with another in between (Lyon,
    Paris, Lyon) stays two entries, while Lyon restated three times and then replaced is
    one."""
    seen: set[tuple[str, str | None, str]] = set()
    out = []
    for v in vs:
        mark = (v.claim_id, v.superseded_by, v.status)
        if mark not in seen:
            seen.add(mark)
            out.append(v)
    return out


def _state(vs: list[ItemView], current: list, conflicts: list, meta: dict[str, Any]) -> str:
    if conflicts:
        return "conflict"
    if current:
        return "current"
    if meta["tombstones"] and not vs:
        return "forgotten"
    if any(v.status == ItemStatus.ARCHIVED for v in vs):
        return "archived"
    return "superseded" if vs else "empty"


def items(ctx: Any, *, scope: str | None, key: str | None, kind: str | None,
          status: str | list[str] | None, cursor: str | None, limit: int,
          filters: Any = None, now: datetime | None = None) -> Page:
    """A page of items with the exact ``total`` over every page (see ``Memory.items``).

    ``filters`` (``domain.filters``) adds to ``key``, ``kind`` and ``status``; a ``status``
    condition in it lists from every status (not only the default live ones). Column
    conditions run in SQL; metadata tests read every matching item's metadata (one scan).
    """
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= 1000:
        raise InvalidInput("limit must be between 1 and 1000.", field="limit")
    if now is not None:
        to_iso(now, field="now")
    where = parse_filter(filters, now or ctx.clock.now()) if filters is not None else None
    statuses = _statuses("all" if status is None and where is not None
                         and where.status is not None else status)
    after = _decode_cursor(cursor)
    kw = {"scope": scope, "key": key, "kind": kind, "statuses": statuses, "where": where}
    if where is not None and where.metadata:
        ids = [i for i, md in ctx.store.item_metadata(ctx.id, **kw) if where.holds_metadata(md)]
        total = len(ids)
        ids = [i for i in ids if after is None or i > after][:limit + 1]
        recs = ctx.store.items_by_id(ctx.id, ids)
    else:
        total = ctx.store.count_items(ctx.id, **kw)
        recs = ctx.store.items(ctx.id, after=after, limit=limit + 1, **kw)
    more = len(recs) > limit
    recs = recs[:limit]
    nxt = _encode_cursor(recs[-1].item_id) if more and recs else None
    return Page(views(ctx, recs), nxt, total)


def history(ctx: Any, rec: Any) -> dict[str, Any]:
    """An item, its key's other versions, its provenance and the ledger events naming it."""
    item_id = rec.item_id
    versions = views(ctx, ctx.store.key_items(ctx.id, rec.scope, rec.key))
    events = [e for e in ctx.store.events(ctx.id)
              if e["data"].get("item_id") == item_id
              or item_id in e["data"].get("item_ids", [])
              or item_id in (e["data"].get("by"), e["data"].get("keep"),
                             e["data"].get("into"))]
    return {"item": views(ctx, [rec])[0].to_dict(),
            "versions": [v.to_dict() for v in versions],
            "provenance": ctx.store.provenance(ctx.id, item_id),
            "events": [{k: e[k] for k in ("seq", "type", "data", "actor", "at")}
                       for e in events]}


def conflicts(ctx: Any, scope: str | None) -> list[dict[str, Any]]:
    """Open conflict groups: [{group_id, scope, key, items: [ItemView dicts]}]."""
    groups: dict[str, dict[str, Any]] = {}
    cursor = None
    while True:
        page = items(ctx, scope=scope, key=None, kind=None, status="conflict", cursor=cursor,
                     limit=1000)
        for v in page.items:
            g = groups.setdefault(v.conflict_group, {"group_id": v.conflict_group,
                                                     "scope": v.scope, "key": v.key,
                                                     "items": []})
            g["items"].append(v.to_dict())
        if page.next_cursor is None:
            return list(groups.values())
        cursor = page.next_cursor


def tz_offsets(ctx: Any, recs: list[Any]) -> dict[str, int]:
    """``{item_id: tz_offset_min}`` of the records whose payload keeps a non-zero offset."""
    payloads = ctx.store.payloads(ctx.id, [r.payload_id for r in recs])
    out = {}
    for r in recs:
        offset = (payloads.get(r.payload_id) or {}).get("tz_offset_min")
        if offset:
            out[r.item_id] = offset
    return out


def conflict_group(ctx: Any, group_id: str, readable: Any) -> dict[str, Any] | None:
    """The open conflict group ``group_id`` when its scope is ``readable`` (a predicate on a
    scope), else None: one answer for missing and not visible. Walks the open groups (the
    error path of a resolve only)."""
    return next((g for g in conflicts(ctx, None)
                 if g["group_id"] == group_id and readable(g["scope"])), None)


def _statuses(status: str | list[str] | None) -> list[str] | None:
    if status is None:
        return [ItemStatus.CURRENT.value, ItemStatus.CONFLICT.value]
    if status == "all":
        return None
    wanted = [status] if isinstance(status, str) else list(status)
    for s in wanted:
        if s not in {x.value for x in ItemStatus}:
            raise InvalidInput(f"status {s!r} is not one of "
                               + ", ".join(x.value for x in ItemStatus) + " or 'all'.",
                               field="status")
    return wanted


def _encode_cursor(item_id: str) -> str:
    return base64.urlsafe_b64encode(json.dumps({"after": item_id}).encode()).decode()


def _decode_cursor(cursor: str | None) -> str | None:
    if cursor is None:
        return None
    try:
        after = json.loads(base64.urlsafe_b64decode(cursor.encode()))["after"]
        if not isinstance(after, str):
            raise TypeError("after must be an item id")
        return after
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InvalidInput("cursor is not one this API returned; start again without it.",
                           field="cursor") from exc
