"""The four KIP mutations over staged sources: observe, revise, feedback, forget.

Each resolves its references through the memory's guard (write access to the task scope, a
staged source visible in that scope), calls one ``Memory`` method and answers the schema's
envelope with ``receipt``, ``progress`` and ``result`` (``kip_responses``).

- observe: the staged source goes through intake (receipt, derive job, phases); replays of the
  same key return the original acknowledgement.
- revise: the staged source is the evidence of the change; its extracted claims (only of the
  target's key when ``target_ref`` names an item) are written as a correction (the old value
  was never true: ``Memory.correct`` at the current revision) or a world change (valid from
  the source's observed time). No extractable value keeps the source as evidence and says so
  (disposition ``evidence_only``); remem never manufactures a precise revision.
- feedback: stored with the staged source's real role (``user_statement`` for a user's words,
  ``agent_statement`` for an agent's or assistant's; any other role is refused) and attributed
  to the real caller (a token as itself, whatever actor name the source carries); never a
  grade, never promoting anything, even with a decision_ref or attempt_ref.
- forget: ``semantic`` or ``payload_only`` of an item or source reference; ``succeeded`` only
  for completed erasure (disposition ``erased``), else ``partial``; a hold gives ``failed``.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from remem.domain.logentry import legacy_kind
from remem.domain.timefmt import from_iso, to_iso
from remem.errors import IdempotencyConflict, InvalidInput, UnsupportedCapability
from remem.service import kip_responses as R
from remem.service.guard import hidden
from remem.service.ids import new_id
from remem.service.intake import scoped_key

PROCEDURAL = ("skill", "lesson")
FEEDBACK_ORIGIN = {"user": "user_statement", "agent": "agent_statement",
                   "assistant": "agent_statement"}


def _refs(memory: Any, source_id: str) -> list[str]:
    """Items formed from a source that the caller can read."""
    out = []
    for item_id in memory.store.items_from_source(memory.id, source_id):
        rec = memory.store.item(memory.id, item_id)
        if rec is not None and memory.guard.readable(rec.scope):
            out.append(item_id)
    return out


def observe(b: Any, req: Any, d: Any) -> dict[str, Any]:
    mem = b.memory
    task = mem.guard.write(b.task(req))
    replay = _observed(mem, task, d.source_ref, req.idempotency_key)
    if replay is not None:  # a replay needs no live staging handle (its text may be erased)
        return _answer(req, "observe", replay, "replayed: the original acknowledgement",
                       _refs(mem, replay.source_id) if replay.source_id else [])
    row = b.staged(d.source_ref, task)
    payload = json.loads(row["payload"]) if row.get("payload") else None  # schema entry
    rc = mem.observe(task, None if payload else row["text"], role=row["role"],
                     actor=row["actor"], source_id=row["source_id"], run_id=row["run_id"],
                     occurred_at=from_iso(row["occurred_at"]),
                     kind=legacy_kind(row["kind"], row["role"]).value,
                     idempotency_key=req.idempotency_key, procedural=False, payload=payload,
                     caused_by_log_id=row.get("caused_by"))
    refs = _refs(mem, row["source_id"]) if rc.phase == "available" else []
    summary = {"formed": f"formed {len(refs)} memory item(s) from the source",
               "evidence_only": "kept as evidence only: nothing to learn was stated",
               "skipped": "skipped: nothing was learned (the source restates forgotten or "
                          "erased content, or proposes procedural memory, which memory_basic "
                          "does not form)"}.get(
        rc.disposition or "", f"recorded; formation is {rc.phase}")
    return _answer(req, "observe", rc, summary, refs)


def _observed(mem: Any, task: str, source_ref: str, key: str) -> Any:
    """The original receipt when ``key`` already acknowledged this source in this scope."""
    found = mem.store.receipt_by_key(mem.id, scoped_key(task, mem.guard.scoped_name(task, key)))
    row = mem.guard.find_source(source_ref) if found is not None else None
    if row is None or found["source_id"] != row["source_id"] or found["scope"] != task:
        return None
    return mem.intake.get(found["receipt_id"])


def _answer(req: Any, op: str, rc: Any, summary: str, refs: list[str]) -> dict[str, Any]:
    prog = R.receipt_progress(rc)
    status = R.mutation_status(rc.phase)
    return R.envelope(op, status, req.request_id,
                      receipt=R.receipt(rc.receipt_id, op, rc.memory, rc.accepted_seq),
                      progress=prog, result=R.formation(summary, refs),
                      error=prog.get("error") if status == "failed" else None)


def _replayed(mem: Any, intent: str, task: str, key: str, meaning: str) -> Any:
    """The original receipt of ``key`` for this intent (None when new).

    Raises:
        IdempotencyConflict: the key was used for a different request.
    """
    found = mem.store.receipt_by_key(mem.id, _idem(mem, intent, task, key))
    if found is None:
        return None
    if found["digest"] != meaning:
        raise IdempotencyConflict(f"Idempotency key {key!r} was already used for a different "
                                  f"{intent}. Retry the original unchanged, or use a new key.",
                                  idempotency_key=key)
    return mem.intake.get(found["receipt_id"])


def _idem(mem: Any, intent: str, task: str, key: str) -> str:
    return mem.guard.scoped_name(task, f"kip-{intent}:{key}")


def _meaning(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def _record(mem: Any, intent: str, task: str, key: str, meaning: str, source_id: str | None,
            accepted_seq: int, disposition: str) -> Any:
    """A durable receipt of a synchronous mutation: recorded, then processed and available
    at the current head (so ``recall after`` and replays work as for observe)."""
    now = to_iso(mem.clock.now())
    row = {"memory_id": mem.id, "receipt_id": new_id("rcpt"), "intent": intent,
           "idem_key": _idem(mem, intent, task, key), "digest": meaning, "scope": task,
           "source_id": source_id, "phase": "recorded", "accepted_seq": accepted_seq,
           "created_at": now, "updated_at": now}
    with mem.store.unit_of_work(mem.id) as uow:
        mem.store.insert_receipt(uow.conn, row)
    mem.intake.complete(row["receipt_id"], None, disposition)
    return mem.intake.get(row["receipt_id"])


def revise(b: Any, req: Any, d: Any) -> dict[str, Any]:
    mem = b.memory
    if d.change_kind == "misrecorded":
        raise UnsupportedCapability("change_kind 'misrecorded' is not served by this "
                                    "binding; use correction or world_change.",
                                    field="input.change_kind")
    task = mem.guard.write(b.task(req))
    row = b.staged(d.source_ref, task)
    target = mem.guard.writable_item(d.target_ref) if d.target_ref else None
    if target is not None and target.scope != task:
        raise hidden("Item", d.target_ref, "input.target_ref")
    meaning = _meaning("revise", task, row["source_id"], row["digest"], d.target_ref,
                       d.change_kind)
    key = req.idempotency_key
    rc = _replayed(mem, "revise", task, key, meaning)
    if rc is not None:
        return _answer(req, "revise", rc, "replayed: the original revision", _revised(mem, rc))
    at = from_iso(row["occurred_at"])
    claims = [c for c in mem.extractor.extract(row["text"], role=row["role"], occurred_at=at)
              if getattr(c, "operation", "assert") == "assert"
              and (target is None or c.key == target.key)]
    if any(c.kind in PROCEDURAL for c in claims):
        raise UnsupportedCapability("This revision would write procedural memory (skill or "
                                    "lesson); memory_basic does not accept procedural "
                                    "mutations.", field="input.source_ref")
    accepted = mem.store.head_seq(mem.id) + 1
    refs = _write_revision(mem, task, row, at, claims, target, d.change_kind, key)
    rc = _record(mem, "revise", task, key, meaning, None, accepted,
                 "formed" if refs else "evidence_only")
    summary = (f"{d.change_kind}: {len(refs)} item(s) written" if refs else
               "no value for the target could be read from the source; it stays evidence "
               "and nothing was revised")
    return _answer(req, "revise", rc, summary, refs)


def _revised(mem: Any, rc: Any) -> list[str]:
    """Items a replayed revision added: the ``item.added`` events of its ledger range that
    the caller can still read."""
    out = []
    for ev in mem.store.events(mem.id, after_seq=rc.accepted_seq - 1):
        if ev["seq"] > (rc.resolved_seq or 0):
            break
        item_id = ev["data"].get("item_id") if ev["type"] == "item.added" else None
        rec = mem.store.item(mem.id, item_id) if item_id else None
        if rec is not None and mem.guard.readable(rec.scope):
            out.append(item_id)
    return out


def _write_revision(mem: Any, task: str, row: dict[str, Any], at: Any, claims: list[Any],
                    target: Any, change_kind: str, key: str) -> list[str]:
    source = {"id": row["source_id"], "text": row["text"][:512], "role": row["role"],
              "occurred_at": at}
    refs = []
    for i, c in enumerate(claims):
        ikey = f"{key}#{i}"
        if change_kind == "correction":
            rev = target.revision if target else mem.inspect(task, c.key).revision
            r = mem.correct(task, c.key, c.value, expected_revision=rev, kind=c.kind,
                            source=source, idempotency_key=ikey,
                            replaces=target.item_id if target else None)
        else:
            r = mem.remember(task, c.key, c.value, kind=c.kind, source=source,
                             valid_at=c.valid_at, idempotency_key=ikey)
        if r.item_id:
            refs.append(r.item_id)
    return refs


def feedback(b: Any, req: Any, d: Any) -> dict[str, Any]:
    mem = b.memory
    task = mem.guard.write(b.task(req))
    row = b.staged(d.source_ref, task)
    origin = FEEDBACK_ORIGIN.get(row["role"])
    if origin is None:
        raise InvalidInput(f"Feedback comes from a user or an agent; the staged source's role "
                           f"is {row['role']!r}. Stage the feedback as the speaker said it.",
                           field="input.source_ref")
    actor = mem._actor(row["actor"])  # a token is always attributed as itself
    out = mem.feedback(task, row["text"], role=row["role"], actor=actor,
                       source_ref=row["source_id"],
                       target=d.decision_ref or d.attempt_ref,
                       idempotency_key=req.idempotency_key)
    seq = mem.store.head_seq(mem.id)
    ref = out["feedback_id"]
    return R.envelope("feedback", "succeeded", req.request_id,
                      receipt=R.receipt(ref, "feedback", mem.id, seq),
                      progress=R.progress(ref, "available", disposition="evidence_only",
                                          resolved_seq=seq, available_seq=seq),
                      result=R.formation(f"kept as {origin} attributed to {actor}; "
                                         "not a grade", []))


def forget(b: Any, req: Any, d: Any) -> dict[str, Any]:
    mem = b.memory
    task = mem.guard.write(b.task(req))
    key = req.idempotency_key
    meaning = _meaning("forget", task, d.target_ref, d.mode)
    rc = _replayed(mem, "forget", task, key, meaning)
    if rc is None:
        accepted = mem.store.head_seq(mem.id) + 1
        report = mem.forget_ref(d.target_ref, mode=d.mode, caller_scope=task)
        state = report.get("state", "partial")
        if state == "blocked":
            from remem.errors import LegalHoldActive

            raise LegalHoldActive("A legal hold blocks this erasure; release the hold first.",
                                  target_ref=d.target_ref)
        if state == "completed":
            rc = _record(mem, "forget", task, key, meaning, None, accepted, "erased")
        else:
            return _forget_answer(req, mem, key, state, d.mode, None)
    return _forget_answer(req, mem, key, "completed", d.mode, rc)


def _forget_answer(req: Any, mem: Any, key: str, state: str, mode: str,
                   rc: Any) -> dict[str, Any]:
    """succeeded only for completed erasure (disposition erased); pending/partial stay
    visible as ``partial`` with recorded progress."""
    if rc is not None:
        ref, prog, seq = rc.receipt_id, R.receipt_progress(rc), rc.accepted_seq
    else:
        ref = "fgt_" + hashlib.sha256(f"{mem.id}\x00{key}".encode()).hexdigest()[:24]
        prog, seq = R.progress(ref, "recorded"), mem.store.head_seq(mem.id)
    kip_state = state if state in ("pending", "partial", "blocked", "completed") else "partial"
    result = {"status": kip_state, "plan_ref": ref, "summary": f"{mode} erasure {state}",
              "coverage_ref": f"{ref}:coverage"}
    return R.envelope("forget", "succeeded" if rc is not None else "partial",
                      req.request_id, receipt=R.receipt(ref, "forget", mem.id, seq),
                      progress=prog, result=result)


__all__ = ["feedback", "forget", "observe", "revise"]
