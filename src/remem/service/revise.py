"""KIP revise and feedback, and forget by reference (the KIP forget target).

- revise ``correction``: the old value was never true; it is superseded and the new value takes
  over its world interval (as-of any earlier time answers the corrected value).
- revise ``world_change``: a new value from the change time; the old value stays true for its
  interval (as-of before the change answers it); it is not marked as a mistake.
- feedback: stored with its real origin — ``agent_statement`` (the agent's self-report) or
  ``user_statement`` (a person's words) — never a grade, never promoting anything.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from remem.domain.limits import MAX_OBSERVE_BYTES, check_text
from remem.domain.model import Scope
from remem.domain.timefmt import to_iso
from remem.errors import IdempotencyConflict, InvalidInput
from remem.service.guard import hidden
from remem.service.intake import scoped_key


def revise(memory: Any, scope: str, key: str, value: Any, *, change_kind: str,
           kind: str | None = None, source_ref: str | None = None, text: str | None = None,
           changed_at: datetime | None = None, expected_revision: int | None = None,
           idempotency_key: str | None = None) -> dict[str, Any]:
    """Records a correction or a world change; returns the write result and what ended."""
    source = {"id": source_ref, "text": text, "role": "user"} if (source_ref or text) else None
    if change_kind == "correction":
        rev = expected_revision if expected_revision is not None else \
            memory.inspect(scope, key).revision
        r = memory.correct(scope, key, value, expected_revision=rev, kind=kind, source=source,
                           idempotency_key=idempotency_key)
        return {"change_kind": change_kind, **r.to_dict(), "never_true": True}
    if change_kind == "world_change" and changed_at is None:
        raise InvalidInput("a world_change needs input.changed_at (when the world changed); "
                           "remem never invents the instant.", field="input.changed_at")
    before = {v.item_id for v in memory.inspect(scope, key).current}
    r = memory.remember(scope, key, value, kind=kind, valid_at=changed_at, source=source,
                        idempotency_key=idempotency_key)
    ended = sorted(before - {v.item_id for v in memory.inspect(scope, key).current})
    return {"change_kind": change_kind, **r.to_dict(), "ended": ended,
            "changed_at": to_iso(changed_at) if changed_at else None}


def feedback(memory: Any, scope: str, text: str | None, *, role: str = "agent",
             actor: str | None = None, source_ref: str | None = None,
             target: str | None = None, idempotency_key: str | None = None) -> dict[str, Any]:
    """Stores feedback with its origin; returns {feedback_id, origin, graded: False}.

    Feedback that cites a source (``source_ref``: KIP's staged source) keeps no copy of its
    text but the source's id (``source_ref``, beside a ``target`` decision or attempt ref):
    the text lives once, in the source, so forgetting the source erases it.

    Raises:
        InvalidInput: a bad field. IdempotencyConflict: ``idempotency_key`` was used for
            feedback with another source, target, text, role or actor (nothing stored)."""
    Scope.parse(scope)
    for name, v in (("text", text), ("actor", actor), ("source_ref", source_ref),
                    ("target", target)):
        # a target is a KIP Ref (decision_ref / attempt_ref): the schema allows 1,024
        limit = {"text": MAX_OBSERVE_BYTES, "target": 1024}.get(name, 512)
        check_text(v, f"input.{name}", limit)
    if role not in ("agent", "assistant", "user"):
        raise InvalidInput("feedback role must be agent (self-report) or user (a person).",
                           field="input.role")
    origin = "user_statement" if role == "user" else "agent_statement"
    fid = "fb_" + (uuid.uuid5(uuid.NAMESPACE_URL,
                                   f"{memory.id}/{scoped_key(scope, idempotency_key)}").hex[:20]
                   if idempotency_key else uuid.uuid4().hex[:20])
    rec = {"feedback_id": fid, "origin": origin, "actor": actor, "scope": scope,
           "target": target or source_ref, "text": None if source_ref else text,
           "source_ref": source_ref}
    existing = memory.store.feedback_row(memory.id, fid)
    if existing is None:
        memory.store.insert_feedback(memory.id, {**rec, "created_at": to_iso(memory.clock.now())})
    elif any(existing[k] != v for k, v in rec.items()
             if k != "source_ref" or existing[k] is not None):  # rows before migration 018
        raise IdempotencyConflict(f"Idempotency key {idempotency_key!r} was already used for "
                                  "different feedback (another source, target, text, role or "
                                  "actor). Retry the original unchanged, or use a new key.",
                                  idempotency_key=idempotency_key)
    return {"feedback_id": fid, "origin": origin, "graded": False,
            "replayed": existing is not None}


def forget_ref(memory: Any, target_ref: Any, *, mode: str,
               caller_scope: str | None = None) -> dict[str, Any]:
    """KIP forget: ``semantic`` forgets an item (or every item formed from a source) with the
    full cascade and tombstones; ``payload_only`` erases a source's text (or an item's source
    texts) and keeps derived claims.

    The reference resolves to an item or a source the caller can read (else the one
    existence-neutral answer), which the caller must be allowed to write.
    """
    guard = memory.guard
    rec = memory.store.item(memory.id, target_ref) if isinstance(target_ref, str) else None
    if rec is not None and not guard.readable(rec.scope):
        rec = None
    src = guard.find_source(target_ref) if rec is None else None
    if rec is None and src is None:
        raise hidden("Item or source", target_ref, "target_ref")
    guard.write(rec.scope if rec is not None else src["scope"])
    if mode == "semantic":
        if rec is not None:
            return {"mode": mode, **memory.forget(target_ref, caller_scope=caller_scope).to_dict()}
        items = [i for i in memory.store.items_from_source(memory.id, src["source_id"])
                 if (r := memory.store.item(memory.id, i)) is not None and guard.writable(r.scope)]
        reports = [memory.forget(i, caller_scope=caller_scope).to_dict() for i in items
                   if memory.store.item(memory.id, i) is not None]
        erased = memory.forget_source(src["source_id"])
        states = {r["state"] for r in reports} | {erased["state"]}
        return {"mode": mode, "state": "completed" if states == {"completed"} else "partial",
                "items": [i for r in reports for i in r["items"]], "reports": reports,
                "source": erased}
    if rec is not None:
        cited = guard.find_source(rec.source_id) if rec.source_id else None
        source_ids = [cited["source_id"]] if cited is not None else []
    else:
        source_ids = [src["source_id"]]
    out = [memory.forget_source(s) for s in source_ids]
    return {"mode": mode, "state": "completed" if all(o["state"] == "completed" for o in out)
            else "partial", "sources": out}
