"""instantKV slots: one (scope, key) seen the way the instantKV controller seed shows it.

A *slot* is one key of one scope. The seed's names map onto remem's: ``entity`` is the scope
(the bare words ``user``/``self`` mean the caller's default scope), ``attribute`` is the key,
and a slot's ``key`` is ``"<scope>/<attribute>"`` (``user:personal/response_style``).

Shapes (every ``*_ms`` is Unix milliseconds):

- inspection: ``{key, revision, scope, entity, attribute, state, value, kind, source,
  valid_until_ms, history, conflicts, expired}``; a source is ``{id, text, role}`` (remem
  keeps the time a value holds from, not the source's ``occurred_at_ms``: history and conflict
  entries show it as ``valid_at_ms``); ``state`` is current | conflict | expired |
  superseded | archived | forgotten. After forget: state forgotten, value/kind/source/
  valid_until_ms null, history and conflicts empty (the tombstone holds no text).
- profile/context item: ``{key, revision, entity, attribute, value, kind, source,
  valid_until_ms}``; both answers are ``{"items": [...], "truncated": bool}`` whose compact
  UTF-8 JSON is at most ``max_bytes`` (128-65,536). Forgotten, expired and unresolved
  conflicted slots are left out.

Per-slot bounds (the seed's "Limits and recovery" table) are checked inside the apply's
write transaction, at the ledger head the decision commits against (``Writer`` calls
:func:`check_room` there; a moved head re-checks), so two racing writers cannot both take the
last place: a full slot fails with :class:`~remem.errors.SlotFull` instead of dropping
provenance or retry protection. Functions take the memory's context and scopes the guard
already allowed.

Occurrences (on by default: a conversation restating a current value later is a new item of
the same claim) are one slot value: profile, context and inspect show the claim once, and the
history and conflicts bounds count claims, not items — restating "Lyon" ten times and then
moving to Paris is one history entry, as an instantKV user expects. Each statement is still a
receipt (its provenance), so the receipts bound counts every one, as it did when a restatement
was provenance only.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from remem.domain.canonical import normalize_value
from remem.domain.limits import MAX_MAX_BYTES, MIN_MAX_BYTES
from remem.domain.model import ItemStatus
from remem.domain.timefmt import from_iso, to_iso, to_ms
from remem.errors import InvalidInput, NotFoundOrNotVisible, SlotFull
from remem.service import reads
from remem.service.results import ItemView

#: History / conflicts / replay receipts per slot (instantKV limits table).
MAX_SLOT_HISTORY = 8
MAX_SLOT_CONFLICTS = 8
MAX_SLOT_RECEIPTS = 24
#: Managed metadata / content bytes per slot.
MAX_SLOT_METADATA_BYTES = 8_192
MAX_SLOT_CONTENT_BYTES = 16_384
#: The scope kind a bare ``--scope NAME`` maps to (``personal`` -> ``user:personal``).
DEFAULT_SCOPE_KIND = "user"
SLOT_FULL_ACTION = ("Inspect the slot's provenance and bounds; there is no automatic "
                    "compaction, and retry protection must not be erased to force a write.")


def default_scope(name: str) -> str:
    """``--scope NAME``: a scope handle as is, a bare name under :data:`DEFAULT_SCOPE_KIND`."""
    return name if ":" in name else f"{DEFAULT_SCOPE_KIND}:{name}"


def slot_key(scope: str, key: str) -> str:
    return f"{scope}/{key}"


def _ms(iso: str | None) -> int | None:
    return None if iso is None else to_ms(from_iso(iso))


def _expired(v: ItemView, now_iso: str) -> bool:
    return v.valid_until is not None and v.valid_until <= now_iso


def _source(v: ItemView, scope: str) -> dict[str, Any]:
    """The item's source as the seed shows it; a scoped caller's id without its prefix."""
    sid = v.source_id
    if sid is not None and sid.startswith(f"{scope}/"):
        sid = sid[len(scope) + 1:]
    return {"id": sid, "text": v.quote, "role": v.source_role}


def _entry(v: ItemView) -> dict[str, Any]:
    return {"revision": v.revision, "value": v.value, "kind": v.kind, "status": v.status,
            "source": _source(v, v.scope), "valid_at_ms": _ms(v.valid_at),
            "valid_until_ms": _ms(v.valid_until)}


def inspect_slot(ctx: Any, scope: str, key: str, entity: str, now: datetime) -> dict[str, Any]:
    """The seed's inspection of one slot.

    Raises:
        NotFoundOrNotVisible: the slot never held a value (missing inspection exits nonzero).
    """
    i = reads.inspect(ctx, scope, key)
    if i.state == "empty":
        raise NotFoundOrNotVisible(f"No slot {entity} {key} in this namespace; apply a "
                                   "proposal first.", field="attribute")
    top = i.current[0] if i.current else None
    expired = top is not None and _expired(top, to_iso(now))
    state = "expired" if expired else i.state
    forgotten = i.state == "forgotten"
    return {"key": slot_key(scope, key), "revision": i.revision, "scope": scope,
            "entity": entity, "attribute": key, "state": state,
            "value": None if (forgotten or expired or top is None) else i.value,
            "kind": top.kind if top else (i.conflicts[0].kind if i.conflicts else None),
            "source": _source(top, scope) if top else None,
            "valid_until_ms": _ms(top.valid_until) if top else None,
            "history": [] if forgotten else [_entry(v) for v in i.history],
            "conflicts": [] if forgotten else [_entry(v) for v in i.conflicts],
            "expired": expired}


def _item(v: ItemView, entity: str) -> dict[str, Any]:
    return {"key": slot_key(v.scope, v.key), "revision": v.revision, "entity": entity,
            "attribute": v.key, "value": v.value, "kind": v.kind,
            "source": _source(v, v.scope), "valid_until_ms": _ms(v.valid_until)}


def live_views(ctx: Any, views: list[ItemView], now: datetime) -> list[ItemView]:
    """Current, unexpired items of slots without an open conflict."""
    now_iso = to_iso(now)
    return [v for v in views if v.status == ItemStatus.CURRENT and not _expired(v, now_iso)]


def pack(views: list[ItemView], entity_of: dict[str, str], max_bytes: int) -> dict[str, Any]:
    """``{"items", "truncated"}`` holding items in order while the compact JSON fits."""
    check_max_bytes(max_bytes)
    doc: dict[str, Any] = {"items": [], "truncated": False}
    for v in views:
        doc["items"].append(_item(v, entity_of.get(v.scope, v.scope)))
        if len(compact(doc).encode("utf-8")) > max_bytes:
            doc["items"].pop()
            doc["truncated"] = True
    return doc


def compact(doc: Any) -> str:
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":"))


def check_max_bytes(max_bytes: Any) -> None:
    if (not isinstance(max_bytes, int) or isinstance(max_bytes, bool)
            or not MIN_MAX_BYTES <= max_bytes <= MAX_MAX_BYTES):
        raise InvalidInput(f"max_bytes must be an integer between {MIN_MAX_BYTES} and "
                           f"{MAX_MAX_BYTES}.", field="max_bytes")


def profile_views(ctx: Any, scope: str, now: datetime) -> list[ItemView]:
    """Every live slot of a scope, by key (deterministic)."""
    out: list[ItemView] = []
    cursor = None
    while True:
        page = reads.items(ctx, scope=scope, key=None, kind=None, status="current",
                           cursor=cursor, limit=1000)
        out.extend(page.items)
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    shown = sorted(live_views(ctx, out, now), key=lambda v: (v.key, v.valid_at, v.item_id))
    return reads.one_per_claim(shown)  # occurrences of a claim are one slot value


# --- per-slot bounds ------------------------------------------------------------------------
def _usage(uow: Any, scope: str, key: str) -> dict[str, Any]:
    recs = sorted(uow.projection_for(scope, key).items.values(),
                  key=lambda r: (r.revision, r.created_seq))
    payloads = uow.key_payloads(scope, key)
    views = [ItemView.build(r, payloads.get(r.payload_id)) for r in recs]
    found = uow.key_provenance(scope, key)
    prov = {r.item_id: found.get(r.item_id, []) for r in recs}
    content = sum(len(compact(v.value).encode()) + len((v.quote or "").encode())
                  for v in views)
    metadata = sum(len(compact(rows).encode()) for rows in prov.values())
    # Occurrences of one claim (a value restated later) count once: a re-stated identical
    # value never fills the slot's history or conflicts (reads.one_per_claim).
    return {"views": views, "sources": {p["source_id"] for rows in prov.values() for p in rows},
            "history": len(reads.one_per_claim([v for v in views if v.status in (
                ItemStatus.SUPERSEDED, ItemStatus.ARCHIVED)])),
            "conflicts": len(reads.one_per_claim([v for v in views
                                                  if v.status == ItemStatus.CONFLICT])),
            "receipts": sum(len(rows) for rows in prov.values()),
            "content": content, "metadata": metadata}


def attach(ctx: Any) -> None:
    """Has the memory's writer check per-slot bounds at the head of every write whose request
    asks for them (``WriteRequest.slot_bounds``: instantKV apply). The check reads through
    the write's own transaction, which holds the memory's write lock (SQLite ``BEGIN
    IMMEDIATE``; PostgreSQL the memory row ``FOR UPDATE``), so the count checked is the count
    committed against and no second connection is needed."""
    def at_head(uow: Any, req: Any) -> None:
        if req.slot_bounds:
            c = req.candidate
            check_room(uow, str(c.scope), c.key, c.value, c.source.text, c.source.id,
                       "correct" if req.intent == "correct" else "assert")

    ctx.writer.at_head.append(at_head)


def check_room(uow: Any, scope: str, key: str, value: Any, quote: str | None,
               source_id: str | None, operation: str) -> None:
    """Refuses a write a full slot cannot take (a retry of a source it already holds passes:
    retry protection is never the thing that fails). ``uow``: the write's unit of work
    (reads at its head).

    Raises:
        SlotFull: history, conflicts, receipts, metadata or content would pass its bound.
    """
    u = _usage(uow, scope, key)
    if source_id is not None and source_id in u["sources"]:
        return  # an identical retry replays; another payload is an IdempotencyConflict
    live = reads.one_per_claim([v for v in u["views"]
                                if v.status in (ItemStatus.CURRENT, ItemStatus.CONFLICT)])
    same = any(normalize_value(v.value) == normalize_value(value) for v in live)
    added = len(compact(value).encode()) + len((quote or "").encode())
    grows = {"receipts": (u["receipts"] + 1, MAX_SLOT_RECEIPTS),
             "metadata_bytes": (u["metadata"] + 96 + len((source_id or "").encode()),
                                MAX_SLOT_METADATA_BYTES),
             "content_bytes": (u["content"] + (0 if same else added), MAX_SLOT_CONTENT_BYTES)}
    if not same and operation == "correct":
        grows["history"] = (u["history"] + len(live), MAX_SLOT_HISTORY)
    elif not same and live:
        grows["conflicts"] = (u["conflicts"] + (1 if u["conflicts"] else len(live) + 1),
                              MAX_SLOT_CONFLICTS)
    for bound, (count, limit) in grows.items():
        if count > limit:
            raise SlotFull(f"The slot {scope} {key} is full: {bound} would be {count}, over "
                           f"the bound of {limit}. {SLOT_FULL_ACTION}", bound=bound,
                           limit=limit, scope=scope, attribute=key)
