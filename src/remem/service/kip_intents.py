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
- feedback: stored with the staged source's real role and actor (``user_statement`` for a
  user's words, ``agent_statement`` for an agent's or assistant's; any other role is refused);
  never a grade, never promoting anything.
- forget: ``semantic`` or ``payload_only`` of an item or source reference; ``succeeded`` only
  for completed erasure (disposition ``erased``), else ``partial``; a hold gives ``failed``.
"""

from __future__ import annotations

import hashlib
from typing import Any

from remem.domain.timefmt import from_iso
from remem.errors import InvalidInput, UnsupportedCapability
from remem.service import kip_responses as R
from remem.service.guard import hidden

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
    row = b._staged(d.source_ref, task)
    rc = mem.observe(task, row["text"], role=row["role"], actor=row["actor"],
                     source_id=row["source_id"], run_id=row["run_id"],
                     occurred_at=from_iso(row["occurred_at"]), kind=row["kind"],
                     idempotency_key=req.idempotency_key)
    refs = _refs(mem, row["source_id"]) if rc.phase == "available" else []
    summary = {"formed": f"formed {len(refs)} memory item(s) from the source",
               "evidence_only": "kept as evidence only: nothing to learn was stated",
               "skipped": "skipped: the source restates forgotten or erased content"}.get(
        rc.disposition or "", f"recorded; formation is {rc.phase}")
    return _answer(req, "observe", rc, summary, refs)


def _answer(req: Any, op: str, rc: Any, summary: str, refs: list[str]) -> dict[str, Any]:
    prog = R.receipt_progress(rc)
    status = R.mutation_status(rc.phase)
    return R.envelope(op, status, req.request_id,
                      receipt=R.receipt(rc.receipt_id, op, rc.memory, rc.accepted_seq),
                      progress=prog, result=R.formation(summary, refs),
                      error=prog.get("error") if status == "failed" else None)


def revise(b: Any, req: Any, d: Any) -> dict[str, Any]:
    mem = b.memory
    if d.change_kind == "misrecorded":
        raise UnsupportedCapability("change_kind 'misrecorded' is not served by this "
                                    "binding; use correction or world_change.",
                                    field="input.change_kind")
    task = mem.guard.write(b.task(req))
    row = b._staged(d.source_ref, task)
    target = mem.guard.writable_item(d.target_ref) if d.target_ref else None
    if target is not None and target.scope != task:
        raise hidden("Item", d.target_ref, "input.target_ref")
    at = from_iso(row["occurred_at"])
    claims = [c for c in mem.extractor.extract(row["text"], role=row["role"], occurred_at=at)
              if getattr(c, "operation", "assert") == "assert"
              and (target is None or c.key == target.key)]
    if any(c.kind in PROCEDURAL for c in claims):
        raise UnsupportedCapability("This revision would write procedural memory (skill or "
                                    "lesson); memory_basic does not accept procedural "
                                    "mutations.", field="input.source_ref")
    source = {"id": row["source_id"], "text": row["text"][:512], "role": row["role"],
              "occurred_at": at}
    key = req.idempotency_key
    results = []
    for i, c in enumerate(claims):
        ikey = f"{key}#{i}"
        if d.change_kind == "correction":
            cur = mem.inspect(task, c.key)
            results.append(mem.correct(task, c.key, c.value, expected_revision=cur.revision,
                                       kind=c.kind, source=source, idempotency_key=ikey,
                                       replaces=target.item_id if target else None))
        else:
            results.append(mem.remember(task, c.key, c.value, kind=c.kind, source=source,
                                        valid_at=c.valid_at, idempotency_key=ikey))
    refs = [r.item_id for r in results if r.item_id]
    seq = mem.store.head_seq(mem.id)
    disposition = "formed" if refs else "evidence_only"
    ref = "rev_" + hashlib.sha256(f"{mem.id}\x00{task}\x00{key}".encode()).hexdigest()[:24]
    summary = (f"{d.change_kind}: {len(refs)} item(s) written" if refs else
               "no value for the target could be read from the source; it stays evidence "
               "and nothing was revised")
    return R.envelope("revise", "succeeded", req.request_id,
                      receipt=R.receipt(ref, "revise", mem.id, seq),
                      progress=R.progress(ref, "available", disposition=disposition,
                                          resolved_seq=seq, available_seq=seq),
                      result=R.formation(summary, refs))


def feedback(b: Any, req: Any, d: Any) -> dict[str, Any]:
    mem = b.memory
    task = mem.guard.write(b.task(req))
    row = b._staged(d.source_ref, task)
    origin = FEEDBACK_ORIGIN.get(row["role"])
    if origin is None:
        raise InvalidInput(f"Feedback comes from a user or an agent; the staged source's role "
                           f"is {row['role']!r}. Stage the feedback as the speaker said it.",
                           field="input.source_ref")
    out = mem.feedback(task, row["text"], role=row["role"], actor=row["actor"],
                       source_ref=row["source_id"],
                       target=d.decision_ref or d.attempt_ref,
                       idempotency_key=req.idempotency_key)
    seq = mem.store.head_seq(mem.id)
    ref = out["feedback_id"]
    return R.envelope("feedback", "succeeded", req.request_id,
                      receipt=R.receipt(ref, "feedback", mem.id, seq),
                      progress=R.progress(ref, "available", disposition="evidence_only",
                                          resolved_seq=seq, available_seq=seq),
                      result=R.formation(f"kept as {origin} by "
                                         f"{row['actor'] or row['role']}; not a grade",
                                         []))


def forget(b: Any, req: Any, d: Any) -> dict[str, Any]:
    mem = b.memory
    task = mem.guard.write(b.task(req))
    report = mem.forget_ref(d.target_ref, mode=d.mode, caller_scope=task)
    state = report.get("state", "partial")
    status = {"completed": "succeeded", "blocked": "failed"}.get(state, "partial")
    kip_state = state if state in ("pending", "partial", "blocked", "completed") else "partial"
    seq = mem.store.head_seq(mem.id)
    ref = "fgt_" + hashlib.sha256(f"{mem.id}\x00{req.idempotency_key}".encode()).hexdigest()[:24]
    prog = (R.progress(ref, "available", disposition="erased", resolved_seq=seq,
                       available_seq=seq) if state == "completed" else R.progress(ref, "recorded"))
    result = {"status": kip_state, "plan_ref": ref,
              "summary": f"{d.mode} erasure {state}", "coverage_ref": f"{ref}:coverage"}
    error = None
    if status == "failed":
        error = {"code": "LegalHoldActive", "category": "governance",
                 "message": "A legal hold blocks this erasure; release the hold first."}
    return R.envelope("forget", status, req.request_id,
                      receipt=R.receipt(ref, "forget", mem.id, seq), progress=prog,
                      result=result, error=error)


__all__ = ["feedback", "forget", "observe", "revise"]
