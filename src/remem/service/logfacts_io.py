"""Export and import of a memory in the Log+Facts 1.3.0 format (JSON Lines).

Export streams one record per line — LogEntries (sources, by run and sequence), then Facts
(items by scope, key, revision), then tombstones and, when there are tombstones, the claim key
— each validated against ``specs/logfacts/memory.schema.json`` with one compiled validator.
Nothing is held beyond one store page and the current run's chain head.

Import reads the file twice: pass 1 validates every line (schema, remem's own fields, the same
input checks as remember/observe) and writes nothing if any line fails, naming the line and the
field, never the value; pass 2 rebuilds the memory through the one write path: sources through
the source log (chained per run), facts through ``Writer.write_many`` (the decision, ledger,
payloads, index), archive/retention/holds through the owner operations, tombstones as
text-free ``item.forgotten`` events. See ``domain.logfacts_map`` for the field mapping.
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from remem.domain import logfacts_map as lf
from remem.domain.events import Event, EventType
from remem.domain.limits import parse_kind, validate_candidate
from remem.domain.model import Authority, Candidate, Cardinality, Scope, Source, parse_key
from remem.domain.operations import Operation, archive
from remem.domain.textindex import item_text
from remem.domain.timefmt import from_iso
from remem.errors import InvalidInput

SCHEMA_PATH = Path(__file__).resolve().parents[1] / "specs" / "logfacts" / "memory.schema.json"
FACT_BATCH = 500
Progress = Callable[[int, int], None]
IMPORT_ACTOR = "system:import"


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    """The schema with every local ``$ref`` replaced by its definition (the schema has no
    recursion): the same rules, validated about 3x faster than through ``$ref`` lookups."""
    if isinstance(node, dict):
        if "$ref" in node:
            target = _inline(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
            return {**target, **{k: v for k, v in node.items()
                                 if k not in ("$ref", "description")}}
        return {k: _inline(v, defs) for k, v in node.items()}
    if isinstance(node, list):
        return [_inline(v, defs) for v in node]
    return node


@cache
def validators() -> tuple[Any, Any, Any]:
    """Compiled ``jsonschema`` validators: (the whole schema, LogEntry, Fact). A record is
    valid against the whole schema (``oneOf``) exactly when it is valid against the branch
    it names: a LogEntry can never be a valid Fact (``kind``/``type`` are each refused by the
    other branch's ``additionalProperties: false``), so ``is_valid`` checks that branch."""
    from jsonschema import Draft202012Validator

    schema = json.loads(SCHEMA_PATH.read_text("utf-8"))
    fc = Draft202012Validator.FORMAT_CHECKER
    defs = schema["$defs"]
    return (Draft202012Validator(schema, format_checker=fc),
            Draft202012Validator(_inline(defs["LogEntry"], defs), format_checker=fc),
            Draft202012Validator(_inline(defs["Fact"], defs), format_checker=fc))


def is_valid(rec: Any) -> bool:
    """Whether a record is valid Log+Facts 1.3.0 (see ``validators``)."""
    _, log_v, fact_v = validators()
    if not isinstance(rec, dict):
        return False
    return (log_v if "runId" in rec else fact_v).is_valid(rec)


def schema_problem(rec: Any) -> str | None:
    """The first schema violation of a record as ``field 'a.b' fails rule 'x'`` (the value is
    never repeated), or None when the record is valid."""
    _, log_v, fact_v = validators()
    if is_valid(rec):
        return None
    if not isinstance(rec, dict):
        return "the line is not a JSON object"
    v = log_v if "kind" in rec or "runId" in rec else fact_v
    err = next(iter(sorted(v.iter_errors(rec), key=lambda e: list(e.absolute_path))), None)
    if err is None:
        return "the record matches neither LogEntry nor Fact"
    path = [str(p) for p in err.absolute_path]
    if err.validator == "required" and isinstance(err.instance, dict):
        missing = [f for f in err.validator_value if f not in err.instance]
        return f"field '{'.'.join(path + missing[:1])}' is required"
    if err.validator == "additionalProperties" and isinstance(err.instance, dict):
        allowed = set(err.schema.get("properties", {}))
        extra = sorted(k for k in err.instance if k not in allowed)
        return f"field '{'.'.join(path + extra[:1])}' is not in the schema"
    return f"field '{'.'.join(path) or '(record)'}' fails the schema's {err.validator!r} rule"


def dump_line(rec: dict[str, Any]) -> bytes:
    """One JSON Lines line (sorted keys, compact, UTF-8): the same record, the same bytes."""
    return (json.dumps(rec, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
            + "\n").encode("utf-8")


# --- export --------------------------------------------------------------------------------
def export_records(ctx: Any, *, tenant: str | None = None,
                   claim_key: bool = True) -> Iterator[dict[str, Any]]:
    """Every record of the memory, in export order (see the module docstring). The claim key
    comes first (when there are tombstones and ``claim_key``), so an import adopts it before
    any claim is written."""
    tenant = tenant or lf.DEFAULT_TENANT
    store, mid = ctx.store, ctx.id
    secret = store.claim_secret(mid) if claim_key else None
    if secret is not None and store.export_counts(mid)["tombstones"]:
        yield lf.claim_key_record(mid, secret, tenant=tenant)
    run, seq, prev = None, 0, lf.ZERO_HASH
    for row in store.export_sources(mid):
        if row["run_id"] != run:
            run, seq, prev = row["run_id"], 0, lf.ZERO_HASH
        rec = lf.log_entry_record(row, tenant=tenant, sequence=seq, prev_hash=prev)
        seq, prev = seq + 1, rec["entryHash"]
        yield rec
    line, version = None, 0
    replaced: dict[str, str] = {}  # successor item id -> "<id>@<version>" it replaced
    for item, payload in store.export_items(mid):
        if (item.scope, item.key) != line:
            line, version, replaced = (item.scope, item.key), 0, {}
        version += 1
        rec = lf.fact_record(item, payload, tenant=tenant, version=version)
        if item.item_id in replaced:
            rec["supersedes"] = replaced.pop(item.item_id)
        if item.superseded_by:
            replaced[item.superseded_by] = f"{rec['id']}@{version}"
        yield rec
    for scope, key, claim in store.export_tombstones(mid):
        yield lf.tombstone_record(scope, key, claim, tenant=tenant)


def record_kind(rec: dict[str, Any]) -> str:
    """log_entries | facts | tombstones | claim_keys (the Summary counter of a record)."""
    if "runId" in rec:
        return "log_entries"
    return {lf.TOMBSTONE_TYPE: "tombstones", lf.CLAIM_KEY_TYPE: "claim_keys"}.get(
        rec.get("type"), "facts")


def _export(ctx: Any, tenant: str | None, progress: Progress | None, claim_key: bool = True
            ) -> Iterator[tuple[dict[str, Any], bytes]]:
    total = sum(ctx.store.export_counts(ctx.id).values()) if progress else 0
    for n, rec in enumerate(export_records(ctx, tenant=tenant, claim_key=claim_key), 1):
        if not is_valid(rec):
            raise ValueError(f"export record {n} is not valid Log+Facts: "
                             f"{schema_problem(rec)}")
        yield rec, dump_line(rec)
        if progress is not None and (n % 100 == 0):
            progress(n, max(total, n))


def export_lines(ctx: Any, *, tenant: str | None = None, progress: Progress | None = None,
                 claim_key: bool = True) -> Iterator[bytes]:
    """The export as JSON Lines bytes, each record validated (one compiled validator) before
    it is yielded.

    Raises:
        ValueError: a record remem built is not schema-valid (a bug: the export stops rather
            than write an invalid line).
    """
    for _, line in _export(ctx, tenant, progress, claim_key):
        yield line


@dataclass
class Summary:
    """What an export or import did: record counts, bytes and seconds."""

    log_entries: int = 0
    facts: int = 0
    tombstones: int = 0
    claim_keys: int = 0
    bytes: int = 0
    seconds: float = 0.0
    #: CPU seconds of this process (wall seconds depend on how busy the machine is).
    cpu_seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)

    @property
    def records(self) -> int:
        return self.log_entries + self.facts + self.tombstones + self.claim_keys

    def count(self, kind: str) -> None:
        setattr(self, kind, getattr(self, kind) + 1)

    def to_dict(self) -> dict[str, Any]:
        rate = self.records / self.seconds if self.seconds > 0 else None
        return {"records": self.records, "log_entries": self.log_entries, "facts": self.facts,
                "tombstones": self.tombstones, "claim_keys": self.claim_keys,
                "bytes": self.bytes, "seconds": round(self.seconds, 3),
                "records_per_s": round(rate, 1) if rate else None,
                "cpu_seconds": round(self.cpu_seconds, 3), "warnings": self.warnings}


def export_to(ctx: Any, out: Any, *, tenant: str | None = None,
              progress: Progress | None = None, claim_key: bool = True) -> Summary:
    """Writes the export to a binary file object; returns the summary."""
    t0, c0, s = time.perf_counter(), time.process_time(), Summary()
    for rec, line in _export(ctx, tenant, progress, claim_key):
        out.write(line)
        s.bytes += len(line)
        s.count(record_kind(rec))
    s.seconds, s.cpu_seconds = time.perf_counter() - t0, time.process_time() - c0
    if progress is not None:
        progress(s.records, s.records)
    return s


# --- import --------------------------------------------------------------------------------
def parse_lines(lines: Iterable[bytes | str], *, schema: bool = True
                ) -> Iterator[tuple[int, lf.Parsed]]:
    """``(line number, parsed record)`` of every non-blank line, fully checked
    (``schema=False``: pass 2 of an import, after pass 1 checked the schema of every line).

    Raises:
        InvalidInput: the first bad line: ``details.line`` and ``details.field`` name it.
    """
    for n, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            rec = json.loads(raw)
        except ValueError as exc:
            raise InvalidInput(f"line {n} is not JSON; every line must be one Log+Facts "
                               "record.", line=n, field="(line)") from exc
        problem = schema_problem(rec) if schema else None
        if problem is not None:
            field_name = problem.split("'")[1] if "'" in problem else "(record)"
            raise InvalidInput(f"line {n}: {problem}; nothing was imported.", line=n,
                               field=field_name)
        try:
            parsed = lf.from_record(rec)
            check(parsed)
        except InvalidInput as exc:
            f = _record_field(rec, str(exc.details.get("field", "(record)")))
            raise InvalidInput(f"line {n}: field '{f}' is not valid for remem "
                               f"({_reason(exc)}); nothing was imported.", line=n,
                               field=f) from exc
        yield n, parsed


_SOURCE_FIELDS = {"scope": "payload.scope", "text": "payload.text", "role": "payload.role",
                  "kind": "kind", "run_id": "runId", "source_id": "id", "actor": "actor"}
_FACT_FIELDS = {"scope": "content.scope", "key": "content.key", "value": "content.value",
                "kind": "type", "valid_at": "createdAt", "valid_until": "content.validUntil",
                "source": "causedByLogId", "source.id": "causedByLogId",
                "source.text": "content.text", "source.role": "content.role"}


def _record_field(rec: dict[str, Any], field: str) -> str:
    """The record's own path of a field a remem check named (``scope`` -> content.scope)."""
    fields = _SOURCE_FIELDS if "runId" in rec else _FACT_FIELDS
    return fields.get(field, field)


def _reason(exc: InvalidInput) -> str:
    """The checking error's kind, without any value the caller sent."""
    return {"scope": "not a scope handle", "key": "not a snake_case key",
            "kind": "not a remem kind"}.get(str(exc.details.get("field")), "refused")


def check(rec: lf.Parsed) -> None:
    """The checks remember/observe make, before anything is written."""
    from remem.service.sources import validate_observation

    if isinstance(rec, lf.SourceIn):
        validate_observation(rec.scope, rec.text, rec.role, rec.kind, rec.run_id,
                             rec.source_id, rec.actor)
        from_iso(rec.occurred_at, field="timestamp")
    elif isinstance(rec, lf.FactIn):
        fact_candidate(rec)
    elif isinstance(rec, lf.TombstoneIn):
        Scope.parse(rec.scope)
        parse_key(rec.key)


def fact_candidate(f: lf.FactIn) -> Candidate:
    """The decision's candidate for a fact line (validated as ``remember`` validates)."""
    src = Source(id=f.source_id, text=f.text, role=f.role or "owner")
    cand = Candidate(scope=Scope.parse(f.scope), key=parse_key(f.key), value=f.value,
                     kind=parse_kind(f.kind),
                     valid_at=from_iso(f.valid_at, field="createdAt"), source=src,
                     valid_until=from_iso(f.valid_until, field="content.validUntil")
                     if f.valid_until else None)
    validate_candidate(cand)
    return cand


def _read(path: Path) -> Iterator[bytes]:
    with open(path, "rb") as fh:
        yield from fh


def check_file(path: Path, progress: Progress | None = None) -> Summary:
    """Pass 1: validates every line; counts what pass 2 will write.

    Raises:
        InvalidInput: the first bad line (``details.line``, ``details.field``).
    """
    s = Summary()
    kinds = {lf.SourceIn: "log_entries", lf.FactIn: "facts", lf.TombstoneIn: "tombstones",
             lf.ClaimKeyIn: "claim_keys"}
    for n, rec in parse_lines(_read(path)):
        s.count(kinds[type(rec)])
        if progress is not None and n % 100 == 0:
            progress(n, 0)
    s.bytes = path.stat().st_size
    return s


def import_file(mem: Any, path: Path, progress: Progress | None = None) -> Summary:
    """Validates ``path`` (pass 1, nothing written on a bad line), then rebuilds the memory
    through the write path (pass 2). Called by ``Memory.import_log_facts`` after the guard."""
    t0, c0 = time.perf_counter(), time.process_time()
    plan = check_file(path)
    total = plan.records
    imp = _Importer(mem, plan)
    for n, (_, rec) in enumerate(parse_lines(_read(path), schema=False), 1):
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


class _Importer:
    """Pass 2: writes parsed records in file order, facts in batches of ``FACT_BATCH``."""

    def __init__(self, mem: Any, plan: Summary) -> None:
        self.mem, self.ctx, self.plan = mem, mem.ctx, plan
        self.facts: list[lf.FactIn] = []
        self.cardinality: dict[str, Cardinality] = {}  # key -> the file's cardinality

    def _policy(self, key: str) -> tuple[Cardinality | None, Any]:
        """The memory's key policy; a key its config leaves open takes the file's
        cardinality (declared by the key's first write, as the source memory had it)."""
        card, on_change = self.ctx.writer.policy(key)
        return (card or self.cardinality.get(key)), on_change

    def _writer(self) -> Any:
        """The memory's writer with the import's key policy (a copy: the cached writer other
        callers share is left as it is)."""
        w = copy.copy(self.ctx.writer)
        w.policy = self._policy
        return w

    def add(self, rec: lf.Parsed) -> None:
        if isinstance(rec, lf.FactIn):
            self.facts.append(rec)
            if len(self.facts) >= FACT_BATCH:
                self.flush()
            return
        self.flush()
        if isinstance(rec, lf.SourceIn):
            self.ctx.sources.observe(
                rec.scope, rec.text, role=rec.role, actor=rec.actor, source_id=rec.source_id,
                run_id=rec.run_id, occurred_at=from_iso(rec.occurred_at), kind=rec.kind,
                metadata=rec.metadata)
        elif isinstance(rec, lf.TombstoneIn):
            self._tombstone(rec)
        elif isinstance(rec, lf.ClaimKeyIn):
            self._claim_key(rec)

    def flush(self) -> None:
        """Writes the pending facts in one transaction (each through the decision)."""
        from remem.service.writer import WriteRequest

        if not self.facts:
            return
        facts, self.facts = self.facts, []
        cands = [fact_candidate(f) for f in facts]
        for f in facts:
            if f.cardinality in ("single", "multi"):
                self.cardinality.setdefault(f.key, Cardinality(f.cardinality))
        self.ctx.embedding.prime([item_text(c.key, c.value, c.source.text) for c in cands])
        reqs = [WriteRequest(c, Authority.OWNER, IMPORT_ACTOR, metadata=f.metadata,
                             stated_valid_at=c.valid_at, intent="import")
                for c, f in zip(cands, facts, strict=True)]
        results = self._writer().write_many(reqs)
        for f, r in zip(facts, results, strict=True):
            self._after(f, r)

    def _after(self, f: lf.FactIn, result: Any) -> None:
        """Statuses and retention the decision does not set: archive, keep_until, hold."""
        if result.item_id is None:
            return
        if f.status == "archived":
            self.ctx.writer.operate(f.scope, f.key, IMPORT_ACTOR,
                                    lambda st, p: archive(st, result.item_id))
        if f.keep_until:
            self.mem.set_retention(result.item_id, keep_until=from_iso(f.keep_until),
                                   actor=IMPORT_ACTOR)
        if f.legal_hold:
            self.mem.set_legal_hold(result.item_id, True, actor=IMPORT_ACTOR)

    def _tombstone(self, t: lf.TombstoneIn) -> None:
        """A text-free ``item.forgotten`` event naming only the claim: it folds into a
        tombstone, so the automatic paths never learn the claim again."""
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
            self.ctx.writer._claim_secret = None  # re-read: the writer caches the secret
            return
        self.plan.warnings.append(
            f"the file's tombstones were keyed by memory {k.memory_id!r}; in memory {mid!r} "
            "they cannot recognise the forgotten claims. Import into a new memory named "
            f"{k.memory_id!r} to keep them forgotten.")
