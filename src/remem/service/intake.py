"""Intake: receipts, idempotency, phases and ``after`` read barriers (KIP Memory Interface).

``observe`` records the source (service.sources), then a durable receipt
``{receipt_id, intent, memory, accepted_seq, phase}`` and a derive job. Phases move forward
only: recorded -> processed -> available, or recorded/processed -> failed (with the reason);
``accepted_seq <= resolved_seq <= available_seq`` (ledger sequence numbers).

Idempotency (DESIGN.md "KIP binding rules"): the key is the caller's, or derived from the
source identity. Its digest covers the intent, the resolved scope and the input including the
source's id and text digest — not transport request ids or budgets. Same key + same digest ->
the original receipt, nothing extracted again; same key + different digest ->
IdempotencyConflict.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from remem.domain.canonical import REDACTED_DIGEST, digest, sha256_hex
from remem.domain.limits import check_text
from remem.domain.timefmt import to_iso
from remem.errors import IdempotencyConflict, InvalidInput
from remem.service.ids import new_id

PHASE_ORDER = {"recorded": 0, "processed": 1, "available": 2, "failed": 3}
#: Longest stored idempotency key (UTF-8 bytes): a caller's key (<= 256) plus its scope.
MAX_IDEMPOTENCY_KEY_BYTES = 1024


def scoped_key(scope: str, key: str | None) -> str | None:
    """The stored form of an idempotency key: bound to its scope (``user:a/k1``).

    Raises:
        InvalidInput: the key is not a string, holds a lone surrogate or NUL, or is too long.

    The same key in two scopes is two requests, never a replay or conflict across scopes. A
    key already in the scope's namespace (a scoped token's keys, see ``Guard.scoped_name``)
    and a key derived from a source identity (``src:[...]``, which names its scope) are kept
    as they are, so existing rows keep replaying.
    """
    if key is None:
        return None
    check_text(key, "idempotency_key", MAX_IDEMPOTENCY_KEY_BYTES)
    if key.startswith(f"{scope}/") or key.startswith("src:["):
        return key
    return f"{scope}/{key}"


@dataclass(frozen=True)
class Receipt:
    """The durable acknowledgement of an intake (KIP receipt)."""

    receipt_id: str
    intent: str
    memory: str
    scope: str
    source_id: str | None
    phase: str
    accepted_seq: int
    resolved_seq: int | None = None
    available_seq: int | None = None
    disposition: str | None = None
    reason: str | None = None
    replayed: bool = False
    run_id: str | None = None
    sequence: int | None = None
    entry_hash: str | None = None
    redacted: bool = False

    @classmethod
    def from_row(cls, row: dict[str, Any], replayed: bool = False,
                 source: dict[str, Any] | None = None) -> Receipt:
        """A receipt row plus its source's chain position (``source``: the source row)."""
        src = source or {}
        return cls(receipt_id=row["receipt_id"], intent=row["intent"], memory=row["memory_id"],
                   scope=row["scope"], source_id=row["source_id"], phase=row["phase"],
                   accepted_seq=row["accepted_seq"], resolved_seq=row["resolved_seq"],
                   available_seq=row["available_seq"], disposition=row["disposition"],
                   reason=row["reason"], replayed=replayed, run_id=src.get("run_id"),
                   sequence=src.get("sequence"), entry_hash=src.get("entry_hash"),
                   redacted=bool(source) and src.get("text") is None)

    def to_dict(self) -> dict[str, Any]:
        import dataclasses

        return dataclasses.asdict(self)


#: Most turns one ``observe_many`` call (one transaction) takes.
MAX_OBSERVE_MANY = 1000
_TURN_FIELDS = frozenset({"id", "source_id", "role", "text", "actor", "occurred_at", "kind",
                          "idempotency_key", "metadata", "payload", "caused_by_log_id"})


def parse_turns(scope: str, turns: Any, *, run_id: str | None, recorded_by: str | None,
                name: Any = lambda scope, n: n) -> list[Any]:
    """``observe_many``'s turns (``[{text, id?, role?, actor?, occurred_at?, kind?,
    idempotency_key?, metadata?}]``, ``id`` = source id) as ``SourceEntry`` values.

    Args:
        name: ``Guard.scoped_name``: puts a scoped caller's ids in its own namespace.

    Raises:
        InvalidInput: not a list, empty or longer than ``MAX_OBSERVE_MANY``, or a turn that is
            not an object, has an unknown field or a bad time (``index`` in the details).
    """
    from remem.domain.filters import parse_metadata
    from remem.domain.limits import MAX_SOURCE_ID_BYTES
    from remem.domain.timefmt import from_iso
    from remem.service.sources import SourceEntry

    if not isinstance(turns, list) or not turns:
        raise InvalidInput("turns must be a non-empty list of {text, id?, role?, ...}.",
                           field="turns")
    if len(turns) > MAX_OBSERVE_MANY:
        raise InvalidInput(f"{len(turns)} turns in one call; send at most "
                           f"{MAX_OBSERVE_MANY} per call.", field="turns")
    out = []
    for i, t in enumerate(turns):
        try:
            if not isinstance(t, dict):
                raise InvalidInput(f"turn {i} is not an object.", field=f"turns[{i}]")
            unknown = sorted(set(t) - _TURN_FIELDS)
            if unknown:
                raise InvalidInput(f"turn {i} has unknown fields {unknown}; allowed: "
                                   f"{sorted(_TURN_FIELDS)}.", field=f"turns[{i}]")
            at = t.get("occurred_at")
            if isinstance(at, str):
                at = from_iso(at, field=f"turns[{i}].occurred_at")
            elif at is not None and not isinstance(at, datetime):
                raise InvalidInput(f"turns[{i}].occurred_at must be an ISO-8601 time.",
                                   field=f"turns[{i}].occurred_at")
            sid = t.get("id", t.get("source_id"))
            check_text(sid, f"turns[{i}].id", MAX_SOURCE_ID_BYTES)
            out.append(SourceEntry(
                scope=scope, text=t.get("text"), role=t.get("role"),
                actor=t.get("actor"), source_id=name(scope, sid), run_id=run_id,
                occurred_at=at, kind=t.get("kind"), payload=t.get("payload"),
                caused_by_log_id=t.get("caused_by_log_id"),
                idempotency_key=name(scope, t.get("idempotency_key")),
                recorded_by=recorded_by, metadata=parse_metadata(t.get("metadata"))))
        except InvalidInput as exc:
            exc.details["index"] = i
            raise
    return out


def _key_and_meaning(e: Any) -> tuple[str | None, str]:
    """A source entry's stored idempotency key (None: derived from its source id once it has
    one) and its meaning digest (the KIP binding rules: intent, scope, text digest, role,
    kind, run, source id, time, actor, metadata; payload, causedByLogId and priority when
    given). ``e`` has its kind, role and text resolved (``sources.resolve_entry``)."""
    key = scoped_key(e.scope, e.idempotency_key or (
        f"source:{e.run_id or 'default'}:{e.source_id}" if e.source_id else None))
    meaning = digest(["observe", e.scope, sha256_hex(e.text.encode("utf-8")) if isinstance(
        e.text, str) else None, e.role, e.kind, e.run_id or "default", e.source_id,
        to_iso(e.occurred_at) if isinstance(e.occurred_at, datetime) else None, e.actor]
        + ([e.metadata] if e.metadata is not None else [])
        + ([{"payload": e.payload}] if e.payload is not None else [])
        + ([{"caused_by": e.caused_by_log_id}] if e.caused_by_log_id is not None else [])
        + ([{"priority": e.priority}] if e.priority is not None else []))
    return key, meaning


@dataclass(frozen=True)
class Barrier:
    """Outcome of waiting for receipts: satisfied | pending | failed."""

    state: str
    receipts: list[Receipt]

    @property
    def unresolved(self) -> list[Receipt]:
        return [r for r in self.receipts if r.phase != "available"]

    @property
    def failed(self) -> list[Receipt]:
        return [r for r in self.receipts if r.phase == "failed"]


class Intake:
    """Receipts for one memory (``MemoryContext.intake``)."""

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self.store = ctx.store
        #: (source id, digest) -> claims extracted ahead of their derive job (batched intake)
        self.extracted: dict[tuple[str, str], Any] = {}

    def observe(self, scope: str, text: str | None, *, role: str | None = None,
                actor: str | None = None,
                source_id: str | None = None, run_id: str | None = None,
                occurred_at: datetime | None = None, kind: str | None = None,
                idempotency_key: str | None = None, derive: bool = True,
                recorded_by: str | None = None,
                metadata: dict[str, Any] | None = None,
                capture: dict[str, Any] | None = None, procedural: bool = True,
                payload: dict[str, Any] | None = None,
                caused_by_log_id: str | None = None,
                priority: int | None = None) -> Receipt:
        """Records a source and returns its receipt; enqueues derive (runs it inline when the
        store's derive mode is ``inline``). ``capture`` (ids only: the captured span and the
        capturing identity) rides on the derive job and is recorded on its run; so does
        ``priority``, given to the facts derived (part of the observation's meaning).

        Raises:
            InvalidInput: bad input (nothing recorded).
            IdempotencyConflict: the key was used with a different meaning.
        """
        from remem.domain.logentry import entry_payload, kind_and_role
        from remem.service.sources import (
            DEFAULT_RUN,
            SourceEntry,
            check_caused_by,
            validate_observation,
        )

        log_kind, role = kind_and_role(kind, role)
        kind = log_kind.value
        given_text, given_payload = text, payload
        payload, text = entry_payload(text, payload)
        validate_observation(scope, text, role, kind, run_id or DEFAULT_RUN, source_id, actor)
        check_caused_by(caused_by_log_id)
        check_text(recorded_by, "actor", 256)
        key, meaning = _key_and_meaning(SourceEntry(
            scope, text, role, actor, source_id, run_id, occurred_at, kind, idempotency_key,
            recorded_by, metadata, given_payload, caused_by_log_id, priority))
        if key is not None:
            found = self.store.receipt_by_key(self.ctx.id, key)
            if found is not None:
                return self._replay(found, meaning, key)
        src = self.ctx.sources.observe(scope, given_text, role=role, actor=actor,
                                          source_id=source_id, run_id=run_id,
                                          occurred_at=occurred_at, kind=kind,
                                          idempotency_key=idempotency_key,
                                          recorded_by=recorded_by, metadata=metadata,
                                          payload=given_payload,
                                          caused_by_log_id=caused_by_log_id)
        key = key or f"source:{src.run_id}:{src.source_id}"
        now = to_iso(self.ctx.clock.now())
        row = {"memory_id": self.ctx.id, "receipt_id": "rcpt_" + uuid.uuid4().hex[:24],
               "intent": "observe", "idem_key": key, "digest": meaning, "scope": scope,
               "source_id": src.source_id, "phase": "recorded",
               "accepted_seq": src.accepted_seq or self.store.head_seq(self.ctx.id),
               "created_at": now, "updated_at": now}
        with self.store.unit_of_work(self.ctx.id) as uow:
            found = self.store.receipt_by_key(self.ctx.id, key, conn=uow.conn)
            if found is not None:
                return self._replay(found, meaning, key)
            self.store.insert_receipt(uow.conn, row)
            if derive and not src.redacted:
                self.store.enqueue_job(self.ctx.id, "derive",
                                       {"receipt_id": row["receipt_id"],
                                        "source_id": src.source_id,
                                        **({"capture": capture} if capture else {}),
                                        **({"priority": priority}
                                           if priority is not None else {}),
                                        **({} if procedural else {"procedural": False})},
                                       run_at=now, now=now, conn=uow.conn,
                                       job_id=new_id("job"))
        if not derive or src.redacted:
            self.complete(row["receipt_id"], src.source_id,
                          "skipped" if src.redacted else "evidence_only")
        elif self.ctx.derive_mode == "inline":
            self.ctx.run_jobs()
        out = self.get(row["receipt_id"])
        if src.replayed:  # the source was already recorded under another key
            from dataclasses import replace

            out = replace(out, replayed=True)
        return out

    def observe_many(self, entries: list[Any], *, derive: bool = True,
                     capture: dict[str, Any] | None = None) -> list[Receipt]:
        """Records a batch of sources (``SourceEntry``) and their receipts and derive jobs in
        one transaction, with one embedding call; then runs derive inline (embedded mode) or
        leaves it to the worker. Every entry is checked before anything is written.

        Returns:
            one receipt per entry, in order; a replayed entry (same key, same meaning, now or
            earlier in the batch) gets the original receipt with ``replayed=True``.

        Raises:
            InvalidInput: an entry is invalid (nothing recorded; ``index`` in the details).
            IdempotencyConflict: an entry's key was used with a different meaning (nothing
                recorded).
        """
        from remem.service.sources import resolve_entry

        keyed: list[tuple[str | None, str]] = []
        for i, e in enumerate(entries):
            try:
                keyed.append(_key_and_meaning(resolve_entry(e)[0]))
            except InvalidInput as exc:
                exc.details["index"] = i
                raise
        earlier: dict[str, dict[str, Any]] = {}
        fresh: list[int] = []
        first: dict[str, str] = {}
        for i, (key, meaning) in enumerate(keyed):
            if key is None:
                fresh.append(i)
                continue
            if key in first:  # the same key earlier in this batch
                if first[key] != meaning:
                    self._conflict(key)
                continue
            first[key] = meaning
            found = self.store.receipt_by_key(self.ctx.id, key)
            if found is not None:
                self._replay(found, meaning, key)  # raises on a conflict
                earlier[key] = found
            else:
                fresh.append(i)
        now = to_iso(self.ctx.clock.now())
        rows: dict[int, dict[str, Any]] = {}
        replayed: dict[int, dict[str, Any]] = {}

        def record(uow: Any, srcs: list[Any]) -> None:
            for i, src in zip(fresh, srcs, strict=True):
                key = keyed[i][0] or f"source:{src.run_id}:{src.source_id}"
                found = self.store.receipt_by_key(self.ctx.id, key, conn=uow.conn)
                if found is not None:  # recorded meanwhile (another writer)
                    self._replay(found, keyed[i][1], key)
                    replayed[i] = found
                    continue
                row = {"memory_id": self.ctx.id, "receipt_id": "rcpt_" + uuid.uuid4().hex[:24],
                       "intent": "observe", "idem_key": key, "digest": keyed[i][1],
                       "scope": src.scope, "source_id": src.source_id, "phase": "recorded",
                       "accepted_seq": src.accepted_seq or uow.head()[0],
                       "created_at": now, "updated_at": now, "_src": src}
                self.store.insert_receipt(uow.conn, {k: v for k, v in row.items()
                                                     if k != "_src"})
                rows[i] = row
                if derive and not src.redacted:
                    self.store.enqueue_job(self.ctx.id, "derive", {
                        "receipt_id": row["receipt_id"], "source_id": src.source_id,
                        **({"capture": capture} if capture else {}),
                        **({"priority": entries[i].priority}
                           if entries[i].priority is not None else {})},
                        run_at=now, now=now, conn=uow.conn, job_id=new_id("job"))

        if fresh:
            self.ctx.sources.observe_many([entries[i] for i in fresh], then=record)
        for row in rows.values():
            if not derive or row["_src"].redacted:
                self.complete(row["receipt_id"], row["source_id"],
                              "skipped" if row["_src"].redacted else "evidence_only")
        if derive and rows and self.ctx.derive_mode == "inline":
            from remem.service.jobs.derive import prime_derive

            prime_derive(self.ctx.owner.memory(self.ctx.id),
                         [r["source_id"] for r in rows.values() if not r["_src"].redacted])
            self.ctx.run_jobs()
        return [self._with_source(replayed[i], replayed=True) if i in replayed
                else self._batch_receipt(i, keyed[i][0], rows, earlier)
                for i in range(len(entries))]

    def _batch_receipt(self, i: int, key: str | None, rows: dict[int, dict[str, Any]],
                       earlier: dict[str, dict[str, Any]]) -> Receipt:
        """Entry ``i``'s receipt: written now, or the original one it replays (found before
        the batch, or written earlier in it under the same key)."""
        from dataclasses import replace

        if i in rows:
            out = self.get(rows[i]["receipt_id"])
            return replace(out, replayed=True) if rows[i]["_src"].replayed else out
        found = earlier.get(key) if key is not None else None
        if found is None and key is not None:
            found = self.store.receipt_by_key(self.ctx.id, key)
        assert found is not None, "every entry has a receipt: written, or the one it replays"
        return self._with_source(found, replayed=True)

    def _conflict(self, key: str) -> None:
        raise IdempotencyConflict(
            f"Idempotency key {key!r} was already used for a different observation (other "
            "text, scope, role or time). Retry the original unchanged, or use a new key.",
            idempotency_key=key)

    def _replay(self, found: dict[str, Any], meaning: str, key: str) -> Receipt:
        if found["digest"] == REDACTED_DIGEST:  # the text was erased: nothing to compare
            return self._with_source(found, replayed=True)
        if found["digest"] != meaning:
            self._conflict(key)
        return self._with_source(found, replayed=True)

    def _with_source(self, row: dict[str, Any], replayed: bool = False) -> Receipt:
        src = self.store.source(self.ctx.id, row["source_id"]) if row["source_id"] else None
        return Receipt.from_row(row, replayed=replayed, source=src)

    def get(self, receipt_id: str) -> Receipt:
        """The receipt; NotFoundOrNotVisible when it is not in this memory."""
        return self._with_source(self.store.receipt(self.ctx.id, receipt_id))

    def complete(self, receipt_id: str, source_id: str | None, disposition: str) -> None:
        """processed then available: derive committed and indexes include it (same tx)."""
        now = to_iso(self.ctx.clock.now())
        head = self.store.head_seq(self.ctx.id)
        self.store.advance_receipt(self.ctx.id, receipt_id, phase="processed", now=now,
                                   resolved_seq=head, disposition=disposition)
        self.store.advance_receipt(self.ctx.id, receipt_id, phase="available", now=now,
                                   available_seq=head)
        if source_id:
            self.store.set_source_disposition(self.ctx.id, source_id, disposition)

    def fail(self, receipt_id: str, reason: str) -> None:
        self.store.advance_receipt(self.ctx.id, receipt_id, phase="failed",
                                   now=to_iso(self.ctx.clock.now()), reason=reason)

    def wait(self, receipt_ids: list[str], *, deadline_ms: int = 0,
             poll_ms: int = 20) -> Barrier:
        """Waits until every receipt is available (or failed), up to ``deadline_ms``.

        Raises:
            NotFoundOrNotVisible: a receipt is not visible in this memory.
        """
        end = time.monotonic() + max(deadline_ms, 0) / 1000
        while True:
            receipts = [self.get(r) for r in receipt_ids]
            if any(r.phase == "failed" for r in receipts):
                return Barrier("failed", receipts)
            if all(r.phase == "available" for r in receipts):
                return Barrier("satisfied", receipts)
            if time.monotonic() >= end:
                return Barrier("pending", receipts)
            time.sleep(poll_ms / 1000)


def capture(memory: Any, scope: str, host_kind: str, host_id: str,
            turns: list[dict[str, Any]], *, expected_position: int | None = None
            ) -> dict[str, Any]:
    """Captures a host conversation: observes only turns after the cursor, then advances it
    by compare-and-set (``capture.advanced``), so re-sending a conversation duplicates nothing.

    Args:
        turns: the whole conversation (or its tail) as ``[{id, role, text, occurred_at?,
            kind?, payload?, caused_by_log_id?}]`` (log entry fields: ``Memory.observe``),
            oldest first; ``id`` is the host's stable message id (the source id).
        expected_position: the cursor position the caller last saw; None reads it now.

    Returns:
        ``{"position", "captured": [receipt dicts], "skipped": n}``.

    Raises:
        CursorMismatch: another capture moved the cursor first (re-read and resend).
        InvalidInput: a turn without id/role/text.
    """
    from remem.domain.events import Event, EventType
    from remem.domain.model import Scope
    from remem.errors import InvalidInput
    from remem.service.writer import append_events

    Scope.parse(scope)
    check_text(host_kind, "host_kind", 128)
    check_text(host_id, "host_id", 512)
    if not isinstance(turns, list):
        raise InvalidInput("turns must be a list of {id, role, text}.", field="turns")
    for i, t in enumerate(turns):
        if not isinstance(t, dict) or not t.get("id") or not t.get("role") or not isinstance(
                t.get("text"), str):
            raise InvalidInput(f"turn {i} needs id, role and text.", field=f"turns[{i}]")
        for name in ("id", "role", "text", "actor", "occurred_at"):
            if isinstance(t.get(name), str):
                check_text(t[name], f"turns[{i}].{name}", 1 << 20)
    cur = memory.store.capture_cursor(memory.id, host_kind, host_id)
    position = cur["position"] if cur else 0
    if expected_position is not None and expected_position != position:
        from remem.errors import CursorMismatch

        raise CursorMismatch(f"Capture cursor of {host_kind}:{host_id} is at {position}, not "
                             f"{expected_position}; re-read it and send only newer turns.",
                             position=position)
    last_id = cur["last_event_id"] if cur else None
    ids = [t["id"] for t in turns]
    start = ids.index(last_id) + 1 if last_id in ids else 0
    run_id = f"{host_kind}:{host_id}"
    # Past the cursor, and never a turn this conversation already recorded (a resent head).
    new = [t for t in turns[start:]
           if (row := memory.store.source(memory.id, memory.guard.scoped_name(scope, t["id"])))
           is None or row["run_id"] != run_id]
    context = capture_context(memory, scope, host_kind, host_id, position, new)
    captured = [r.to_dict() for r in _observe_captured(memory, scope, run_id, new, context)]
    if new:
        now = to_iso(memory.clock.now())
        with memory.store.unit_of_work(memory.id) as uow:
            memory.store.advance_capture_cursor(
                uow.conn, memory.id, host_kind, host_id, expected_position=position,
                last_event_id=new[-1]["id"], position=position + len(new), now=now)
            head, _ = uow.head()
            append_events(uow, [Event(EventType.CAPTURE_ADVANCED, {
                "host_kind": host_kind, "host_id": host_id, "last_event_id": new[-1]["id"]})],
                actor="system:capture", at=now, expected_seq=head)
        position += len(new)
    return {"position": position, "captured": captured, "skipped": len(turns) - len(new)}


def _observe_captured(memory: Any, scope: str, run_id: str, new: list[dict[str, Any]],
                      context: dict[str, Any] | None) -> list[Receipt]:
    """Observes captured turns in batches of ``MAX_OBSERVE_MANY`` (one embedding call and one
    transaction each), as ``Memory.observe`` would one by one: the caller's namespace, its
    frozen identity on every derive run."""
    if not new:
        return []
    p = memory.principal
    capture = {"span": dict((context or {}).get("span") or {}), "identity": {
        "scope": scope, "subject": p.subject, "role": p.role.value, "token_id": p.token_id}}
    run_id = memory.guard.scoped_name(scope, run_id)  # never another scope's namespace
    turns = [{k: t[k] for k in ("id", "role", "text", "actor", "occurred_at", "kind", "payload",
                                "caused_by_log_id") if t.get(k) is not None} for t in new]
    for t in turns:  # a cause must be a source the caller can see
        if "caused_by_log_id" in t:
            t["caused_by_log_id"] = memory.guard.source(t["caused_by_log_id"])["source_id"]
    out: list[Receipt] = []
    for start in range(0, len(turns), MAX_OBSERVE_MANY):
        entries = parse_turns(scope, turns[start:start + MAX_OBSERVE_MANY], run_id=run_id,
                              recorded_by=memory._recorder(), name=memory.guard.scoped_name)
        out += memory.ctx.intake.observe_many(entries, capture=capture)
    return out


def capture_context(memory: Any, scope: str, host_kind: str, host_id: str, position: int,
                    new: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The captured span of the conversation (ids and positions only, never text); ``observe``
    adds the capturing identity and both are recorded on each derive run (KickSide)."""
    if not new:
        return None
    return {"span": {"host_kind": host_kind, "host_id": host_id, "from_position": position,
                     "to_position": position + len(new), "first_event_id": new[0]["id"],
                     "last_event_id": new[-1]["id"]}}
