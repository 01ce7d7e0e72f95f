"""``observe``: record an immutable source (a user turn, a tool result, a document chunk).

A source is appended to its run's hash chain (:mod:`remem.domain.sourcelog`), indexed for
full-text and vector search, and acknowledged by a ``source.recorded`` ledger event, all in one
transaction. Its vector is computed before the transaction opens.

Identity and idempotency: the source id is the caller's ``source_id``; else it is derived from
``idempotency_key`` (``obs_`` + sha256 prefix); else it is random. The same id with the same
content (text, scope, kind, role, run, actor, and ``occurred_at`` when given) returns the
original receipt with ``replayed=True``; the same id with anything different raises
``IdempotencyConflict``. A source whose text was erased stays erased: observing it again
returns its redacted receipt and stores nothing.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from remem.domain.events import Event, EventType
from remem.domain.filters import dump_metadata
from remem.domain.limits import MAX_OBSERVE_BYTES, MAX_STORED_SOURCE_ID_BYTES, ROLES, check_text
from remem.domain.canonical import canonical_json
from remem.domain.logentry import (
    LEGACY_FORMAT,
    SCHEMA_FORMAT,
    ZERO_LOG_HASH,
    entry_payload,
    legacy_kind,
    log_entry_hash,
    check_kind_role,
    kind_and_role,
    payload_digest,
    prefixed,
    with_role,
)
from remem.domain.logentry import content_hash as payload_hash
from remem.domain.model import Scope
from remem.domain.sourcelog import (
    check_source_fields,
    source_doc_id,
    text_digest,
)
from remem.domain.textindex import content_hash
from remem.domain.timefmt import to_iso
from remem.errors import IdempotencyConflict, InvalidInput
from remem.domain.digests import digests_enabled
from remem.service.digests import index_digests
from remem.service.recall_results import SourceReceipt
from remem.service.writer import append_events

DEFAULT_RUN = "default"


def validate_observation(scope: str, text: Any, role: str, kind: str, run_id: str,
              source_id: str | None, actor: str | None) -> None:
    Scope.parse(scope)
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput("text is empty; give the captured input to record.", field="text")
    check_text(text, "text", MAX_OBSERVE_BYTES)
    if role not in ROLES:
        raise InvalidInput(f"role {role!r} is not one of {sorted(ROLES)}.", field="role")
    check_kind_role(kind, role)  # an agent-message spoken by 'user' is refused
    check_source_fields(kind=kind, run_id=run_id, source_id=source_id)
    if source_id is not None:
        check_text(source_id, "source_id", MAX_STORED_SOURCE_ID_BYTES)
        if not source_id.strip():
            raise InvalidInput("source_id is empty; omit it or give a stable id.",
                               field="source_id")
    check_text(actor, "actor", 256)


def check_caused_by(caused_by_log_id: Any) -> None:
    """A causedByLogId names a log entry id: text of 1-512 bytes, no control characters.

    Raises:
        InvalidInput: otherwise.
    """
    if caused_by_log_id is None:
        return
    if not isinstance(caused_by_log_id, str) or not caused_by_log_id.strip():
        raise InvalidInput("caused_by_log_id must be a log entry id (a source id).",
                           field="caused_by_log_id")
    check_text(caused_by_log_id, "caused_by_log_id", 512)
    check_source_fields(kind="user-message", run_id="r", source_id=caused_by_log_id)


def check_digest(text: str, digest: str | None) -> str:
    """The ``sha256:<hex>`` digest of ``text``'s UTF-8 bytes; a host-supplied ``digest`` must
    equal it.

    Raises:
        InvalidInput: ``text`` is not a string, or the digest differs (the bytes changed).
    """
    if not isinstance(text, str):
        raise InvalidInput("text must be a string.", field="text")
    sha = "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
    if digest is not None and digest != sha:
        raise InvalidInput("digest does not match the text's UTF-8 bytes; stage the exact "
                           "bytes the host captured with their sha256 digest.", field="digest")
    return sha


def _source_id(source_id: str | None, idempotency_key: str | None) -> str:
    if source_id is not None:
        return source_id
    if idempotency_key is not None:
        return "obs_" + hashlib.sha256(idempotency_key.encode()).hexdigest()[:32]
    return "obs_" + uuid.uuid4().hex


def _own_source(reader: Any, sid: str, scope: str) -> tuple[str, dict[str, Any] | None]:
    """The id a source has in ``scope`` and its row if already recorded there.

    Source ids are per scope: an id another scope already holds is stored in this scope's
    namespace (``user:b/turn-1``, as a scoped token's ids are), so the same id in two scopes is
    two sources, never a replay or conflict across scopes.
    """
    found = reader.source(sid)
    if found is None or found["scope"] == scope or sid.startswith(f"{scope}/"):
        return sid, found
    own = f"{scope}/{sid}"
    return own, reader.source(own)


def _receipt(row: dict[str, Any], accepted_seq: int | None, replayed: bool) -> SourceReceipt:
    return SourceReceipt(
        source_id=row["source_id"], run_id=row["run_id"], sequence=row["sequence"],
        scope=row["scope"], kind=row["kind"], role=row["role"], actor=row["actor"],
        occurred_at=row["occurred_at"], recorded_at=row["recorded_at"],
        entry_hash=row["entry_hash"], accepted_seq=accepted_seq, replayed=replayed,
        redacted=row.get("text") is None)


def _same(row: dict[str, Any], want: dict[str, Any], text: str) -> bool:
    legacy = (row.get("log_format") or LEGACY_FORMAT) == LEGACY_FORMAT
    for k, v in want.items():
        if k in ("metadata", "payload") and row.get("text") is None:
            continue  # erased with the text
        if legacy and k in ("payload", "caused_by"):
            continue  # not stored before schema entries; the text is compared below
        have = legacy_kind(row[k], row["role"]).value if legacy and k == "kind" else row[k]
        if v is not None and have != v:
            return False
    if row.get("text") is None or row.get("salt") is None:
        return True  # erased: only the metadata can be compared
    if row.get("log_format") == SCHEMA_FORMAT:
        return True  # the payload was compared above (canonical JSON)
    return text_digest(bytes(row["salt"]), text) == row["digest"]


def _replay(row: dict[str, Any], want: dict[str, Any], text: str,
            accepted_seq: int | None) -> SourceReceipt:
    if not _same(row, want, text):
        raise IdempotencyConflict(
            f"Source {row['source_id']!r} was already recorded with different content. "
            "Retry the original observation unchanged, or use a new source id.",
            source_id=row["source_id"])
    return _receipt(row, accepted_seq, replayed=True)


class SourceService:
    """``observe`` for one Memory.

    Args:
        ctx: the MemoryContext.
        embedding: its EmbeddingService (vectors and the model check).
    """

    def __init__(self, ctx: Any, embedding: Any) -> None:
        self.ctx = ctx
        self.embedding = embedding

    def observe(self, scope: str, text: str | None, *, role: str | None = None,
                actor: str | None = None, source_id: str | None = None,
                run_id: str | None = None, occurred_at: datetime | None = None,
                kind: str | None = None, idempotency_key: str | None = None,
                recorded_by: str | None = None,
                metadata: dict[str, Any] | None = None,
                payload: dict[str, Any] | None = None,
                caused_by_log_id: str | None = None) -> SourceReceipt:
        """Records a source as a schema LogEntry (``domain.logentry``); see the module
        docstring for identity rules.

        Args:
            role: the speaker's role; None: from ``kind`` (tool kinds speak as ``tool``).
            kind: one of the 13 log kinds (or an old role word naming one); None: from role.
            payload: the kind-specific payload (unknown fields kept); ``text`` goes into it.
            caused_by_log_id: the log entry (source id) that caused this one.

        Raises:
            InvalidInput: bad scope, empty or oversize text (> 16,384 bytes), payload not an
                object or over 65,536 bytes, unknown role or kind, bad run id, naive
                ``occurred_at``.
            IdempotencyConflict: the source id was recorded with different content.
            EmbeddingMismatch: the memory was embedded with another model.
        """
        return self._observe_one(SourceEntry(
            scope, text, role, actor, source_id, run_id, occurred_at, kind, idempotency_key,
            recorded_by, metadata, payload, caused_by_log_id))

    def _observe_one(self, given: SourceEntry) -> SourceReceipt:
        e, payload = resolve_entry(given)
        sid = _source_id(e.source_id, e.idempotency_key)
        want = _want(e, payload)
        index = self.embedding.index
        with index.read(self.ctx.id) as snap:
            sid, found = _own_source(snap, sid, e.scope)
            if found is not None:
                return _replay(found, want, e.text, snap.source_event_seq(sid))
        vec = self.embedding.embed([source_document(e.text)])[0]
        now = to_iso(self.ctx.clock.now())
        with self.ctx.store.unit_of_work(self.ctx.id) as uow:
            w = index.writer(uow)
            sid, found = _own_source(w, sid, e.scope)
            if found is not None:
                return _replay(found, want, e.text,
                               index.in_transaction(uow).source_event_seq(sid))
            row = _chain_row(self.ctx, sid, e, payload, now, w.run_head(e.run_id))
            seq = self._record(uow, w, row, vec, e.recorded_by or e.actor or e.role, now)
        return _receipt(row, seq, replayed=False)

    def _record(self, uow: Any, w: Any, row: dict[str, Any], vec: Any, actor: str,
                now: str) -> int:
        """Inserts a chained source row, indexes it and appends its ``source.recorded``
        event; returns the event's ledger seq. Runs inside the caller's transaction."""
        w.insert_source(row)
        if vec is not None:
            index_sources(self.embedding, w, [(row, vec)])
            if digests_enabled(self.ctx.config):
                index_digests(self.embedding, w, [row])
        head, _ = uow.head()
        stored = append_events(uow, [Event(EventType.SOURCE_RECORDED, {
            "source_id": row["source_id"], "run_id": row["run_id"], "scope": row["scope"],
            "sequence": row["sequence"], "entry_hash": row["entry_hash"]})],
            actor=actor, at=now, expected_seq=head)
        return stored[0]["seq"]

    def observe_many(self, entries: Sequence[SourceEntry], *,
                     then: Callable[[Any, list[SourceReceipt]], None] | None = None
                     ) -> list[SourceReceipt]:
        """Records several sources with one embedding call and in one transaction.

        Each entry is validated as ``observe`` validates it, all before anything is written;
        each source is chained with the same per-entry functions as ``observe`` (run head,
        ``entry_hash``, one ``source.recorded`` event each), so the ledger and chains are the
        ones ``observe`` called in order would have written. ``then(uow, receipts)`` runs in
        the same transaction (the caller's receipts and jobs).

        Raises:
            InvalidInput: an entry is invalid (nothing recorded); its index is in the details.
            IdempotencyConflict: an entry's source id was recorded with different content.
        """
        resolved = []
        for i, given in enumerate(entries):
            try:
                e, payload = resolve_entry(given)
            except InvalidInput as exc:
                exc.details["index"] = i
                raise
            resolved.append((e, payload, _want(e, payload)))
        index = self.embedding.index
        with index.read(self.ctx.id) as snap:
            known = [_own_source(snap, _source_id(e.source_id, e.idempotency_key), e.scope)
                     for e, _p, _w in resolved]
            for (_sid, found), (e, _p, want) in zip(known, resolved, strict=True):
                if found is not None:
                    _replay(found, want, e.text, None)  # raises on a conflict
        fresh = [i for i, (_s, found) in enumerate(known) if found is None]
        vecs = self.embedding.embed([source_document(resolved[i][0].text) for i in fresh])
        vec_of = dict(zip(fresh, vecs, strict=True))
        now = to_iso(self.ctx.clock.now())
        out: list[SourceReceipt] = []
        with self.ctx.store.unit_of_work(self.ctx.id) as uow:
            w = index.writer(uow)
            snap_tx = index.in_transaction(uow)
            heads: dict[str, tuple[int, str]] = {}
            indexed: list[tuple[dict[str, Any], Any]] = []
            for i, (e, payload, want) in enumerate(resolved):
                sid, found = _own_source(w, _source_id(e.source_id, e.idempotency_key),
                                         e.scope)
                if found is not None:  # recorded before, or earlier in this batch
                    out.append(_replay(found, want, e.text, snap_tx.source_event_seq(sid)))
                    continue
                if i not in vec_of:  # erased since the check: embed it now
                    vec_of[i] = self.embedding.embed([source_document(e.text)])[0]
                row = _chain_row(self.ctx, sid, e, payload, now,
                                 heads.get(e.run_id) or w.run_head(e.run_id))
                heads[e.run_id] = (row["sequence"], row["entry_hash"])
                seq = self._record(uow, w, row, None, e.recorded_by or e.actor or e.role, now)
                indexed.append((row, vec_of[i]))
                out.append(_receipt(row, seq, replayed=False))
            index_sources(self.embedding, w, indexed)
            if digests_enabled(self.ctx.config):
                index_digests(self.embedding, w, [row for row, _ in indexed])
            if then is not None:
                then(uow, out)
        return out


@dataclass(frozen=True)
class SourceEntry:
    """One source to record (``observe``'s arguments; see ``SourceService.observe_many``).
    ``role``/``kind`` None: taken from each other (``domain.logentry.kind_and_role``);
    ``priority`` rides on the derive job (intake), it is no part of the log entry."""

    scope: str
    text: str | None
    role: str | None = None
    actor: str | None = None
    source_id: str | None = None
    run_id: str | None = None
    occurred_at: datetime | None = None
    kind: str | None = None
    idempotency_key: str | None = None
    recorded_by: str | None = None
    metadata: dict[str, Any] | None = None
    payload: dict[str, Any] | None = None
    caused_by_log_id: str | None = None
    priority: int | None = None


def resolve_entry(given: SourceEntry) -> tuple[SourceEntry, dict[str, Any]]:
    """The entry with its kind, role, text and run resolved and checked, and its payload
    object (the text in it; the role when not the kind's own).

    Raises:
        InvalidInput: bad scope, kind, role, text, payload, run, source id or causedByLogId.
    """
    parsed, role = kind_and_role(given.kind, given.role)
    payload, text = entry_payload(given.text, given.payload)
    payload = with_role(payload, parsed, role)
    run_id = given.run_id or DEFAULT_RUN
    validate_observation(given.scope, text, role, parsed.value, run_id, given.source_id,
                         given.actor)
    check_caused_by(given.caused_by_log_id)
    check_text(given.recorded_by, "actor", 256)
    return replace(given, text=text, role=role, kind=parsed.value, run_id=run_id), payload


def _want(e: SourceEntry, payload: dict[str, Any]) -> dict[str, Any]:
    """The fields a replay of the resolved entry ``e`` must match (see ``_same``)."""
    return {"scope": e.scope, "kind": e.kind, "role": e.role, "run_id": e.run_id,
            "actor": e.actor,
            "occurred_at": to_iso(e.occurred_at) if e.occurred_at is not None else None,
            "metadata": dump_metadata(e.metadata),
            "payload": canonical_json(payload).decode("utf-8"), "caused_by": e.caused_by_log_id}


def _chain_row(ctx: Any, sid: str, e: SourceEntry, payload: dict[str, Any], now: str,
               head: tuple[int, str] | None) -> dict[str, Any]:
    """The schema LogEntry row of the resolved entry ``e``, chained after ``head`` (the run's
    last sequence and entry hash; None: the run's first entry, sequence 0)."""
    sequence, prev = (0, ZERO_LOG_HASH) if head is None else (head[0] + 1, prefixed(head[1]))
    salt = os.urandom(16)
    at = e.occurred_at
    row = {"source_id": sid, "run_id": e.run_id, "sequence": sequence, "scope": e.scope,
           "kind": e.kind, "role": e.role, "actor": e.actor,
           "occurred_at": to_iso(at) if at is not None else now, "recorded_at": now,
           "digest": payload_digest(salt, payload), "salt": salt, "text": e.text,
           "prev_hash": prev, "metadata": dump_metadata(e.metadata),
           "tenant_id": ctx.tenant_id, "payload": canonical_json(payload).decode("utf-8"),
           "content_hash": payload_hash(payload), "caused_by": e.caused_by_log_id,
           "log_format": SCHEMA_FORMAT,
           # the speaker's own UTC offset: relative dates resolve in their zone
           "tz_offset_min": (int(at.utcoffset().total_seconds() // 60)
                             if at is not None else None)}
    row["entry_hash"] = log_entry_hash(row)
    return row


def source_document(text: str) -> str:
    """The text a source is indexed and embedded under: the one place that decides it (full
    text and vector of a source both come from this)."""
    return text


def index_sources(embedding: Any, w: Any, rows: Sequence[tuple[dict[str, Any], Any]]
                  ) -> None:
    """Indexes recorded sources: each one's full-text row and vector (``(row, vec)`` pairs;
    each vector was computed from ``source_document`` before the transaction opened)."""
    vectors = []
    for row, vec in rows:
        text = source_document(row["text"])
        doc = source_doc_id(row["source_id"])
        w.index_text(doc, "source", row["scope"], text)
        vectors.append((doc, "source", row["scope"], content_hash(text), vec))
    embedding.store_vectors(w, vectors)
