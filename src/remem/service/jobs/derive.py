"""The derive job: extract candidate claims from one source and reconcile each.

Formation uses the source's observed time as ``valid_at`` (never when the job runs), so a
late-processed old message never overrides a newer fact: the decision keeps it as history.
Only the user's own statements become user facts (the extractor decides; assistant, tool and
system turns are evidence only). Dispositions: ``formed`` (at least one claim written or seen
again), ``evidence_only`` (nothing to extract; the source stays recallable as a source),
``skipped`` (erased text, or a claim that was forgotten).
"""

from __future__ import annotations

from typing import Any

from remem.domain import operations as ops
from remem.domain.filters import load_metadata
from remem.domain.limits import validate_candidate
from remem.domain.model import Candidate, Kind, Scope, Source
from remem.domain.timefmt import from_iso
from remem.errors import InvalidInput
from remem.service.jobs.reconcile import reconcile


def _occurred_at(row: dict[str, Any]):
    """The source's observed time in its own zone (tz offset kept at observe)."""
    at = from_iso(row["occurred_at"])
    offset = row.get("tz_offset_min")
    if offset is not None:
        from datetime import timedelta, timezone

        at = at.astimezone(timezone(timedelta(minutes=offset)))
    return at


#: Procedural kinds: a memory_basic binding (KIP) never forms them.
PROCEDURAL_KINDS = ("skill", "lesson")


def provenance_of(row: dict[str, Any], capture: dict[str, Any] | None) -> tuple[dict, ...]:
    """Where a source was said: the capturing host conversation, else its observe run."""
    span = (capture or {}).get("span") or {}
    if span.get("host_kind"):
        host = {"host_kind": span["host_kind"], "host_id": span["host_id"]}
    else:
        host = {"host_kind": "observe", "host_id": row.get("run_id") or "default"}
    return ({**host, "event_id": row["source_id"]},)


def derive_source(memory: Any, source_id: str, *, run_id: str | None = None,
                  capture: dict[str, Any] | None = None,
                  procedural: bool = True, priority: int | None = None) -> dict[str, Any]:
    """Extracts and reconciles the claims of one source; returns stats and the disposition.
    With ``procedural`` False (KIP memory_basic) skill/lesson claims are not written: they
    count as ``unsupported``.

    Raises:
        ExtractionFailed: the extractor's output did not parse or validate (the run fails).
    """
    row = memory.store.source(memory.id, source_id)
    if row is None or row.get("text") is None:
        if row is not None:  # erased meanwhile: drop claims extracted ahead (they quote it)
            memory.intake.extracted.pop((source_id, row.get("digest")), None)
        return {"disposition": "skipped", "claims": 0, "outcomes": {}}
    occurred = _occurred_at(row)
    claims = memory.intake.extracted.pop((source_id, row["digest"]), None)
    if claims is None:
        claims = memory.extractor.extract(row["text"], role=row["role"], occurred_at=occurred)
    outcomes: dict[str, int] = {}
    scope = Scope.parse(row["scope"])
    metadata = load_metadata(row.get("metadata"))
    for c in claims:
        if not procedural and str(getattr(c, "kind", "")) in PROCEDURAL_KINDS:
            outcomes["unsupported"] = outcomes.get("unsupported", 0) + 1
            continue
        outcome = _reconcile(memory, scope, c, source_id, row["role"], occurred, metadata,
                             run_id=run_id, provenance=provenance_of(row, capture),
                             priority=priority)
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    written = sum(n for o, n in outcomes.items()
                  if o not in ("forgotten", "invalid", "unsupported"))
    if written:
        disposition = "formed"
    elif claims:
        disposition = "skipped"
    else:
        disposition = "evidence_only"
    return {"disposition": disposition, "claims": len(claims), "outcomes": outcomes,
            "extractor": f"{getattr(memory.extractor, 'name', '?')}/"
                         f"{getattr(memory.extractor, 'version', '?')}"}


#: Most sources whose extraction waits for its derive job (``prime_derive``).
MAX_EXTRACTED = 4096


def prime_derive(memory: Any, source_ids: list[str]) -> None:
    """Batched intake (``observe_many`` with inline derive): extracts the claims of several
    sources ahead of their derive jobs and embeds every candidate's index text in ONE call,
    so the jobs' writes find their vectors ready. Each job takes its source's claims (by
    source id and text digest) instead of extracting again; an extraction that fails here is
    left to the job, which fails the run as usual."""
    from remem.domain.textindex import item_text
    from remem.errors import RememError

    extracted = memory.intake.extracted
    texts: list[str] = []
    for sid in source_ids:
        row = memory.store.source(memory.id, sid)
        if row is None or row.get("text") is None or len(extracted) >= MAX_EXTRACTED:
            continue
        try:
            claims = memory.extractor.extract(row["text"], role=row["role"],
                                              occurred_at=_occurred_at(row))
        except RememError:
            continue
        extracted[(sid, row["digest"])] = claims
        texts += [item_text(c.key, c.value, c.quote) for c in claims
                  if getattr(c, "operation", "assert") != "retract"]
    if texts:
        memory.ctx.embedding.prime(texts)


def _reconcile(memory: Any, scope: Scope, c: Any, source_id: str, role: str,
               occurred, metadata: dict[str, Any] | None = None, *,
               run_id: str | None = None, provenance: tuple = (),
               priority: int | None = None) -> str:
    if getattr(c, "operation", "assert") == "retract":
        cid = memory.writer.claim_id(str(scope), c.key, c.value)
        op = memory.writer.operate(str(scope), c.key, "system:derive",
                                   lambda st, p: ops.retract(st, cid, c.valid_at))
        return "retracted" if op.events else "noop"
    cand = Candidate(scope=scope, key=c.key, value=c.value, kind=Kind(c.kind),
                     valid_at=c.valid_at,
                     source=Source(id=source_id, text=c.quote, role=role, occurred_at=occurred))
    try:
        validate_candidate(cand)
    except InvalidInput:
        return "invalid"
    idem = "derive:" + source_id + ":" + c.key + ":" + str(hash_value(c.value))
    return reconcile(memory, cand, idem, run_id=run_id, provenance=provenance,
                     metadata=metadata, priority=priority)


def hash_value(value: Any) -> str:
    from remem.domain.canonical import digest, normalize_value

    return digest(normalize_value(value))[:16]


def run_derive(memory: Any, job: dict[str, Any], run_id: str) -> dict[str, Any]:
    """Job handler: derive one receipt's source, then advance the receipt."""
    payload = job["payload"]
    stats = derive_source(memory, payload["source_id"], run_id=run_id,
                          capture=payload.get("capture"),
                          procedural=payload.get("procedural", True),
                          priority=payload.get("priority"))
    if payload.get("capture"):  # the captured span and the user's frozen identity
        stats["capture"] = payload["capture"]
    memory.intake.complete(payload["receipt_id"], payload["source_id"], stats["disposition"])
    return stats


def _final_failure(memory: Any, job: dict[str, Any], reason: str) -> None:
    memory.intake.fail(job["payload"]["receipt_id"], reason)


run_derive.on_final_failure = _final_failure  # type: ignore[attr-defined]

__all__ = ["derive_source", "prime_derive", "run_derive"]
