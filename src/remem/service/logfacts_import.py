"""Import of a Log+Facts 1.3.0 JSON Lines file (see ``service.logfacts_io`` for the format).

Pass 1 validates every line (schema, remem's own fields, the same input checks as
remember/observe) and writes nothing if any line fails, naming the line and the field, never
the value; pass 2 rebuilds the memory: log entries as imported rows (their hashes kept), facts
through ``Writer.write_many`` at the record's time, archive/retention/holds through the owner
operations, tombstones as text-free ``item.forgotten`` events.
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from remem.domain import jsondoc
from remem.domain import logfacts_map as lf
from remem.domain.events import Event, EventType, ensure_text_free
from remem.domain.limits import MAX_FACT_VALUE_BYTES, validate_candidate
from remem.domain.labels import REF_PREFIX
from remem.domain.model import (Authority, Candidate, Cardinality, ItemStatus, Scope, Source,
                                parse_key)
from remem.domain.operations import Operation, archive
from remem.domain.textindex import item_text
from remem.domain.timefmt import from_iso, to_iso
from remem.errors import InvalidInput
from remem.service.logfacts_io import FACT_BATCH, IMPORT_ACTOR, Progress, Summary, schema_problem


# --- import --------------------------------------------------------------------------------
def parse_lines(lines: Iterable[bytes | str], *, schema: bool = True, blobs: Any = None,
                tenants: dict[str, int] | None = None) -> Iterator[tuple[int, lf.Parsed]]:
    """``(line number, parsed record)`` of every non-blank line, fully checked
    (``schema=False``: pass 2 of an import, after pass 1 checked the schema of every line).
    ``tenants`` (when given) counts the records naming each ``scope.tenantId``.

    Raises:
        InvalidInput: the first bad line: ``details.line`` and ``details.field`` name it.
    """
    for n, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:  # strict, as an HTTP body: no NaN, duplicate fields, lone surrogates, 65+ deep
            rec = jsondoc.loads(raw, field=f"line {n}")
        except InvalidInput as exc:  # jsondoc's message may quote a number: not repeated
            if exc.details.get("reason") == "number":  # 1e-400 would be stored as 0
                raise InvalidInput(f"line {n}: field '{exc.details['field']}' holds a number "
                                   "a 64-bit float cannot hold (out of range, or so small it "
                                   "would be stored as 0 or lose digits); nothing was "
                                   "imported.", line=n, field=exc.details["field"]) from exc
            raise InvalidInput(f"line {n} is not JSON (strict: no NaN/Infinity, duplicate "
                               "fields, lone surrogates or nesting over "
                               f"{jsondoc.MAX_DOCUMENT_DEPTH}); every line must be one "
                               "Log+Facts record.", line=n, field="(line)") from exc
        problem = schema_problem(rec) if schema else None
        if problem is not None:
            field_name = problem.split("'")[1] if "'" in problem else "(record)"
            raise InvalidInput(f"line {n}: {problem}; nothing was imported.", line=n,
                               field=field_name)
        try:
            parsed = lf.from_record(rec)
            check(parsed, blobs)
        except InvalidInput as exc:
            f = _record_field(rec, str(exc.details.get("field", "(record)")))
            raise InvalidInput(f"line {n}: field '{f}' is not valid for remem "
                               f"({_reason(exc)}); nothing was imported.", line=n,
                               field=f) from exc
        if tenants is not None:
            tenant = rec["scope"]["tenantId"]  # the schema requires it on every record
            tenants[tenant] = tenants.get(tenant, 0) + 1
        yield n, parsed


_SOURCE_FIELDS = {"text": "payload.text", "role": "payload.role", "run_id": "runId",
                  "source_id": "id", "occurred_at": "timestamp"}
_FACT_FIELDS = {"key": "content.key", "value": "content.value", "kind": "type",
                "valid_at": "createdAt", "source": "causedByLogId",
                "source.id": "causedByLogId"}


def _record_field(rec: dict[str, Any], field: str) -> str:
    """The record's own path of a field a remem check named (``run_id`` -> runId)."""
    fields = _SOURCE_FIELDS if "runId" in rec else _FACT_FIELDS
    return fields.get(field, field)


def _reason(exc: InvalidInput) -> str:
    """The checking error's kind, without any value the caller sent."""
    if isinstance(exc.details.get("reason"), str):
        return exc.details["reason"]
    return {"scope": "not a scope handle", "key": "not a snake_case key",
            "kind": "not a remem kind"}.get(str(exc.details.get("field")), "refused")


def check(rec: lf.Parsed, blobs: Any = None) -> None:
    """The checks remember/observe make, before anything is written (``blobs``: the store a
    blob fact's ``contentRef`` must name an existing blob of the stated hash in)."""
    from remem.service.cached_source import parse_cached_source
    from remem.service.sources import validate_observation

    if isinstance(rec, lf.SourceIn):
        r = rec.row
        _check_namespace(r)
        if r["text"] is not None:
            validate_observation(r["scope"], r["text"], r["role"], r["kind"], r["run_id"],
                                 r["source_id"], r["actor"])
        from_iso(r["occurred_at"], field="timestamp")
    elif isinstance(rec, lf.FactIn):
        fact_candidate(rec.fact, blob_value(rec.fact, blobs) if rec.fact.content_ref else None)
        if rec.source is not None:
            parse_cached_source(rec.source)
    elif isinstance(rec, lf.ItemStateIn):
        from remem.domain.filters import parse_metadata

        from_iso(rec.valid_at, field="content.validAt")
        if rec.valid_until is not None:
            from_iso(rec.valid_until, field="content.validUntil")
        if rec.status not in {s.value for s in ItemStatus}:
            raise InvalidInput("content.status is not an item status.", field="content.status")
        parse_metadata(rec.metadata)
    elif isinstance(rec, lf.TombstoneIn) and not rec.scope.startswith(REF_PREFIX):
        Scope.parse(rec.scope)
        parse_key(rec.key)


def _check_namespace(row: dict[str, Any]) -> None:
    """A LogEntry's ``id`` and ``runId`` may not lie in another scope's namespace
    (``user:bob/t1`` in scope ``user:maya``): every write path puts such a name under its own
    scope (``Guard.scoped_name``), so an imported file may not squat on a scoped token's
    source ids or runs either.

    Raises:
        InvalidInput: ``field`` ``source_id`` or ``run_id``.
    """
    from remem.service.guard import names_other_scope

    for field in ("source_id", "run_id"):
        name = row[field]
        if isinstance(name, str) and names_other_scope(name, row["scope"]):
            raise InvalidInput(f"{field} lies in another scope's namespace.", field=field,
                               reason="in another scope's namespace")


def _bucket(ref: str) -> str:
    """The bucket of ``blob://<provider>/<bucket>/<key>``."""
    parts = ref.split("/")
    return parts[3] if len(parts) == 5 else ""


def check_blob_owner(f: Any, memory_id: str, memories: set[str]) -> None:
    """A blob fact may name its target memory's own bucket, or the bucket of a memory this
    store does not hold (a restore under a new id); never another memory's blob here.

    Raises:
        InvalidInput: ``contentRef`` names another memory of this store.
    """
    bucket = _bucket(f.content_ref)
    if bucket != memory_id and bucket in memories:
        raise InvalidInput("contentRef names a blob of another memory of this store; a file "
                           "may name only its own memory's blobs (or those of a memory this "
                           "store does not hold, copied with the file).", field="contentRef")


def blob_value(f: Any, blobs: Any) -> Any:
    """The full content value of a blob fact, read from ``blobs`` and checked against the
    record's contentHash (an export names its blobs; it does not carry them).

    Raises:
        InvalidInput: no blob store, no such blob, or its bytes do not match.
    """
    from remem.domain.fact import content_hash

    try:
        data = blobs.get(f.content_ref) if blobs is not None else None
    except Exception:  # noqa: BLE001 - any miss reads as "not there"
        data = None
    if data is None or content_hash(data) != f.content_hash:
        raise InvalidInput("contentRef names no blob of this contentHash in this store's "
                           "blob directory; copy the blob directory with the file.",
                           field="contentRef")
    return json.loads(data)["value"]


def fact_candidate(f: Any, full_value: Any = None, state: Any = None) -> Candidate:
    """The decision's candidate for a fact line (validated as ``remember_fact`` validates);
    a blob fact (``full_value`` read from its blob) keeps remember_fact's summary value;
    ``state`` (its ``remem-item-state`` record) gives the world-time validity."""
    from remem.domain.fact import content_bytes, content_hash, summary_text

    value = f.value
    if f.content_ref:
        value = {"summary": summary_text(full_value),
                 "contentHash": content_hash(content_bytes(f.key, full_value))}
    src = Source(id=f.caused_by[0] if f.caused_by else None, text=None, role="owner")
    until = state.valid_until if state is not None else None
    cand = Candidate(scope=Scope.parse(f.scope), key=parse_key(f.key), value=value,
                     kind=f.kind, source=src,
                     valid_at=from_iso(state.valid_at if state is not None else f.created_at,
                                       field="content.validAt"),
                     valid_until=from_iso(until, field="content.validUntil") if until
                     else None)
    validate_candidate(cand, max_value_bytes=MAX_FACT_VALUE_BYTES)
    return cand


def _read(path: Path) -> Iterator[bytes]:
    with open(path, "rb") as fh:
        yield from fh


KINDS = {lf.SourceIn: "log_entries", lf.FactIn: "facts", lf.TombstoneIn: "tombstones",
         lf.ClaimKeyIn: "claim_keys", lf.ItemStateIn: "item_states"}


def check_file(path: Path, progress: Progress | None = None, blobs: Any = None,
               target: tuple[str, set[str]] | None = None,
               tenant: str | None = None) -> Summary:
    """Pass 1: validates every line; counts what pass 2 will write. ``target``: the
    importing memory's id and every memory id of the store (blob facts may not name
    another memory's blobs). ``tenant``: the importing memory's tenant; records naming
    another are counted in ``Summary.relabelled_tenants`` (they are imported into ``tenant``).

    Raises:
        InvalidInput: the first bad line (``details.line``, ``details.field``).
    """
    s, tenants = Summary(), {}
    for n, rec in parse_lines(_read(path), blobs=blobs, tenants=tenants):
        if target is not None and isinstance(rec, lf.FactIn) and rec.fact.content_ref:
            try:
                check_blob_owner(rec.fact, *target)
            except InvalidInput as exc:
                raise InvalidInput(f"line {n}: {exc.message} Nothing was imported.", line=n,
                                   field="contentRef") from None
        s.count(KINDS[type(rec)])
        if progress is not None and n % 100 == 0:
            progress(n, 0)
    s.bytes = path.stat().st_size
    if tenant is not None:
        s.relabel(tenant, tenants)
    return s


def import_file(mem: Any, path: Path, progress: Progress | None = None) -> Summary:
    """Validates ``path`` (pass 1, nothing written on a bad line), then rebuilds the memory
    through the write path (pass 2). Called by ``Memory.import_log_facts`` after the guard."""
    t0, c0 = time.perf_counter(), time.process_time()
    blobs = mem.ctx.owner.blobs
    memories = {m["memory_id"] for m in mem.ctx.owner.list_memories()}
    plan = check_file(path, blobs=blobs, target=(mem.id, memories), tenant=mem.ctx.tenant_id)
    total = plan.records
    imp = _Importer(mem, plan)
    for n, (_, rec) in enumerate(parse_lines(_read(path), schema=False, blobs=blobs), 1):
        imp.add(rec)
        if progress is not None and (n % 100 == 0 or n == total):
            progress(n, total)
    imp.flush()
    if plan.tombstones and not plan.claim_keys:
        plan.warnings.append(
            "the file carries tombstones but no claim key (exported with --no-claim-key): "
            "they are kept but cannot recognise the forgotten claims in this memory.")
    plan.seconds, plan.cpu_seconds = time.perf_counter() - t0, time.process_time() - c0
    return plan


class _FixedClock:
    def __init__(self, at: str) -> None:
        self.at = from_iso(at)

    def now(self) -> Any:
        return self.at


@contextmanager
def _at(ctx: Any, at: str) -> Iterator[None]:
    """Pins the memory's clock to a record's time, so the restored ledger keeps the file's
    createdAt/updatedAt (and an export of the import gives the same bytes)."""
    saved = ctx.clock, ctx.writer.clock
    ctx.clock = ctx.writer.clock = _FixedClock(at)
    try:
        yield
    finally:
        ctx.clock, ctx.writer.clock = saved


@contextmanager
def _each_at(writer: Any, times: dict[int, str]) -> Iterator[None]:
    """Pins the writer's clock to each request's own time while a batch is written: an
    ``at_head`` hook (run just before the decision reads the clock) sets it per request."""
    clock = _FixedClock(next(iter(times.values())))

    def pin(uow: Any, req: Any) -> None:
        if id(req) in times:  # a request rebuilt on retry keeps the last time
            clock.at = from_iso(times[id(req)])

    saved = writer.clock
    writer.clock = clock
    writer.at_head.append(pin)
    try:
        yield
    finally:
        writer.at_head.remove(pin)
        writer.clock = saved


class _Importer:
    """Pass 2: writes parsed records in file order; facts in batches of ``FACT_BATCH``, each
    at its record's createdAt (``_each_at``)."""

    def __init__(self, mem: Any, plan: Summary) -> None:
        self.mem, self.ctx, self.plan = mem, mem.ctx, plan
        self.facts: list[tuple[lf.FactIn, lf.ItemStateIn | None]] = []
        self.states: dict[str, lf.ItemStateIn] = {}
        self.cardinality: dict[str, Cardinality] = {}  # key -> the file's cardinality
        self.writer = copy.copy(self.ctx.writer)  # with the import's key policy
        self.writer.policy = self._policy
        self.writer.at_head = list(self.ctx.writer.at_head)

    def _policy(self, key: str) -> tuple[Cardinality | None, Any]:
        """The memory's key policy; a key its config leaves open takes the file's
        cardinality (declared by the key's first write, as the source memory had it)."""
        card, on_change = self.ctx.writer.policy(key)
        return (card or self.cardinality.get(key)), on_change

    def _own_blob(self, ref: str | None) -> str | None:
        """A blob fact keeps its ``contentRef`` only inside this memory's own bucket; a ref to
        another bucket (a restore under a new id with the copied directory) is copied into
        this memory's bucket, so erasing this fact never deletes another memory's file."""
        if ref is None or _bucket(ref) == self.mem.id:
            return ref
        from remem.service.ids import new_id

        blobs = self.ctx.owner.blobs
        return blobs.put(self.mem.id, new_id("blob"), blobs.get(ref))

    def add(self, rec: lf.Parsed) -> None:
        if isinstance(rec, lf.ItemStateIn):  # its Fact follows: kept until then
            self.states[rec.item_id] = rec
            return
        if isinstance(rec, lf.FactIn):
            self.facts.append((rec, self.states.pop(rec.fact.id, None)))
            if len(self.facts) >= FACT_BATCH:
                self.flush()
            return
        self.flush()
        if isinstance(rec, lf.SourceIn):
            _insert_entry(self.ctx, rec.row)
        elif isinstance(rec, lf.TombstoneIn):
            self._tombstone(rec)
        elif isinstance(rec, lf.ClaimKeyIn):
            self._claim_key(rec)

    def flush(self) -> None:
        """Writes the pending facts in one transaction (each through the decision)."""
        from remem.domain.fact import FactAttrs, type_of_kind
        from remem.service.cached_source import parse_cached_source
        from remem.service.writer import WriteRequest

        if not self.facts:
            return
        facts, self.facts = self.facts, []
        blobs = self.ctx.owner.blobs
        cands = [fact_candidate(f.fact, blob_value(f.fact, blobs) if f.fact.content_ref
                                else None, st) for f, st in facts]
        self.ctx.embedding.prime([item_text(c.key, c.value, c.source.text) for c in cands])
        reqs = []
        for c, (f, st) in zip(cands, facts, strict=True):
            x = f.fact
            attrs = FactAttrs(x.fact_type if x.fact_type != type_of_kind(x.kind) else None,
                              self._own_blob(x.content_ref),
                              x.size_bytes if x.content_ref else None,
                              x.content_hash if x.content_ref else None)
            cached = parse_cached_source(f.source) if f.source is not None else None
            reqs.append(WriteRequest(
                c, Authority.OWNER, IMPORT_ACTOR, stated_valid_at=c.valid_at,
                intent="import", fact=attrs.to_json() or None,
                metadata=st.metadata if st is not None else None,
                on_written=self.ctx.cached.written_hook(cached) if cached else None))
        for f, st in facts:
            if st is not None and st.cardinality in ("single", "multi"):
                self.cardinality.setdefault(f.fact.key, Cardinality(st.cardinality))
        with _each_at(self.writer, {id(r): f.fact.created_at for r, (f, _) in
                                    zip(reqs, facts, strict=True)}):
            results = self.writer.write_many(reqs)
        for (f, st), r in zip(facts, results, strict=True):
            self._after(f.fact, st, r)
        forgotten = sum(r.outcome == "forgotten" for r in results)
        if forgotten:
            self.plan.warnings.append(
                f"{forgotten} fact(s) of the file are claims this memory forgot; they were "
                "not imported.")

    def _after(self, f: Any, st: lf.ItemStateIn | None, result: Any) -> None:
        """What the decision does not set: archive, keep_until, hold (at the fact's
        updatedAt)."""
        archived = st is not None and st.status == "archived"
        if result.item_id is None or not (f.keep_until or f.legal_hold or archived):
            return
        with _at(self.ctx, f.updated_at or f.created_at):
            if archived:
                self.ctx.writer.operate(f.scope, f.key, IMPORT_ACTOR,
                                        lambda s, p: archive(s, result.item_id))
            if f.keep_until:
                self.mem.set_retention(result.item_id, keep_until=from_iso(f.keep_until),
                                       actor=IMPORT_ACTOR)
            if f.legal_hold:
                self.mem.set_legal_hold(result.item_id, True, actor=IMPORT_ACTOR)

    def _tombstone(self, t: lf.TombstoneIn) -> None:
        """A text-free ``item.forgotten`` event naming only the claim: it folds into a
        tombstone, so the automatic paths never learn the claim again."""
        if t.scope.startswith(REF_PREFIX):  # a keyed memory's labels: refs only
            _sealed_tombstone(self.ctx, t)
            return
        item_id = "itm_tombstone_" + t.claim_id[:32]

        def build(state: Any, proj: Any) -> Operation:
            if t.claim_id in state.tombstones:
                return Operation((), state.revision)
            return Operation((Event(EventType.ITEM_FORGOTTEN, {
                "item_id": item_id, "scope": str(state.scope), "key": state.key,
                "revision": state.revision, "claim_id": t.claim_id,
                "reason": "imported"}),), state.revision)

        self.ctx.writer.operate(str(Scope.parse(t.scope)), t.key, IMPORT_ACTOR, build)

    def _claim_key(self, k: lf.ClaimKeyIn) -> None:
        """Adopts the exported claim key when the memory is the same one and holds no claim
        yet; otherwise the tombstones cannot match new claims and the summary says so."""
        store, mid = self.ctx.store, self.ctx.id
        if store.claim_secret(mid) == k.secret:
            return
        if k.memory_id == mid and store.adopt_claim_secret(mid, k.secret):
            self.ctx.writer._claim_secret = None  # re-read: the writers cache the secret
            self.writer._claim_secret = None
            return
        if not self.plan.tombstones:
            return
        self.plan.warnings.append(
            f"the file's tombstones were keyed by memory {k.memory_id!r}; in memory {mid!r} "
            "they cannot recognise the forgotten claims. Import into a new memory named "
            f"{k.memory_id!r} to keep them forgotten.")


def _insert_entry(ctx: Any, row: dict[str, Any]) -> None:
    """Writes one imported LogEntry row (``IMPORTED_FORMAT``: hashes kept as given) with its
    text index, vector and ``source.recorded`` event; a source id already present is kept."""
    from remem.domain.textindex import content_hash
    from remem.service.writer import append_events
    from remem.domain.sourcelog import source_doc_id
    from remem.domain.digests import digests_enabled
    from remem.service.digests import index_digests

    index = ctx.sources.embedding.index
    text = row["text"]
    vec = ctx.sources.embedding.embed([text])[0] if text is not None else None
    with ctx.store.unit_of_work(ctx.id) as uow:
        w = index.writer(uow)
        if w.source(row["source_id"]) is not None:
            return
        w.insert_source({**row, "tenant_id": ctx.tenant_id, "recorded_at": row["occurred_at"],
                         "metadata": None, "tz_offset_min": None})
        if text is not None:
            doc = source_doc_id(row["source_id"])
            w.index_text(doc, "source", row["scope"], text)
            ctx.sources.embedding.store_vectors(
                w, [(doc, "source", row["scope"], content_hash(text), vec)])
            if digests_enabled(ctx.config):
                index_digests(ctx.sources.embedding, w, [row])  # windows it completes
        head, _ = uow.head()
        append_events(uow, [Event(EventType.SOURCE_RECORDED, {
            "source_id": row["source_id"], "run_id": row["run_id"], "scope": row["scope"],
            "sequence": row["sequence"], "entry_hash": row["entry_hash"]})],
            actor=IMPORT_ACTOR, at=row["occurred_at"], expected_seq=head)


class _SealedEvent(Event):
    """An event whose data already holds label refs (data version 2), as a keyed memory's
    ``item.forgotten`` is stored: ``Event`` itself only takes raw labels, which it seals."""

    def __post_init__(self) -> None:
        extra = set(self.data) - {"scope_ref", "key_ref"}
        ensure_text_free(self.type, {k: self.data[k] for k in extra})


def _sealed_tombstone(ctx: Any, t: lf.TombstoneIn) -> None:
    """A keyed memory's tombstone (label refs; the labels were erased): a sealed
    ``item.forgotten`` event naming only refs and the claim, and its read-model row."""
    from remem.domain.labels import SEALED_VERSION
    from remem.service.writer import append_events
    from remem.stores.sql.export import put_tombstone

    with ctx.store.unit_of_work(ctx.id) as uow:
        head, _ = uow.head()
        append_events(uow, [_SealedEvent(EventType.ITEM_FORGOTTEN, {
            "item_id": "itm_tombstone_" + t.claim_id[:32], "scope_ref": t.scope,
            "key_ref": t.key, "revision": 0, "claim_id": t.claim_id, "reason": "imported",
            "v": SEALED_VERSION})], actor=IMPORT_ACTOR, at=to_iso(ctx.clock.now()),
            expected_seq=head)
        put_tombstone(uow, t.scope, t.key, t.claim_id)
