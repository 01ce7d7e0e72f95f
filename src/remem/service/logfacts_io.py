"""Export and import of a memory in the Log+Facts 1.3.0 format (JSON Lines).

Export streams one record per line — the claim key, LogEntries (sources, by run and
sequence), Facts (items by scope, key, revision, each preceded by its ``remem-item-state``),
then tombstones — each validated against ``specs/logfacts/memory.schema.json`` with one
compiled validator. Nothing is held beyond one store page.

Import reads the file twice: pass 1 validates every line (schema, remem's own fields, the same
input checks as remember/observe) and writes nothing if any line fails, naming the line and the
field, never the value; pass 2 rebuilds the memory: log entries as imported rows (their
hashes kept), facts through ``Writer.write_many`` (the decision, ledger, payloads, index) at
the record's time, archive/retention/holds through the owner operations, tombstones as
text-free ``item.forgotten`` events (``service.logfacts_import``). See
``domain.logfacts_map`` for the mapping.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from remem.domain import logfacts_map as lf

SCHEMA_PATH = Path(__file__).resolve().parents[1] / "specs" / "logfacts" / "memory.schema.json"
FACT_BATCH = 500
DEFAULT_TENANT = "default"
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
    comes first (unless ``claim_key`` is False: an audit copy), so an import adopts it before
    any claim is written. Every read runs in one read snapshot of the store
    (``export_snapshot``), held while the records are consumed: writes that land meanwhile
    are not in this export, none half."""
    from types import SimpleNamespace

    from remem.domain.logentry import log_entry_record

    tenant = tenant or getattr(ctx, "tenant_id", None) or DEFAULT_TENANT
    mid = ctx.id
    with ctx.store.export_snapshot() as store:
        at = SimpleNamespace(store=store, id=mid)  # what fact_of reads, in the snapshot
        secret = store.claim_secret(mid) if claim_key else None
        if secret is not None:
            yield lf.claim_key_record(mid, secret, tenant=tenant)
        for row in store.export_sources(mid):
            yield log_entry_record({**row, "tenant_id": tenant})
        merges = store.export_merges(mid)
        for group in _key_groups(store.export_items(mid)):
            records = [r for r, _ in group]
            for item, payload in group:
                yield lf.item_state_record(item, payload["metadata"], tenant=tenant)
                yield fact_of(at, item, payload, tenant, merges.get(item.item_id, []),
                              records)
        for scope, key, claim in store.export_tombstones(mid):
            yield lf.tombstone_record(scope, key, claim, tenant=tenant)


def _key_groups(rows: Iterator[tuple[Any, dict[str, Any]]]
                ) -> Iterator[list[tuple[Any, dict[str, Any]]]]:
    """The exported items one (scope, key) at a time (a key's items are adjacent)."""
    group: list[tuple[Any, dict[str, Any]]] = []
    for row in rows:
        if group and (group[0][0].scope, group[0][0].key) != (row[0].scope, row[0].key):
            yield group
            group = []
        group.append(row)
    if group:
        yield group


def fact_of(ctx: Any, item: Any, payload: dict[str, Any], tenant: str,
            merged: list[str], key_items: list[Any]) -> dict[str, Any]:
    """The Fact of an exported item (``domain.fact.fact_record``, as ``Memory.fact`` builds
    it) plus its Kind-B Source block when it is a cached fact; ``merged``: the items merged
    into it (``export_merges``); ``key_items``: the exported items of its key."""
    from remem.domain.fact import FactAttrs, fact_record
    from remem.service.cached_source import schema_block
    from remem.stores.sql import facts as sql

    store, mid = ctx.store, ctx.id
    causes = [item.source_id] + [p["source_id"] for p in store.provenance(mid, item.item_id)]
    for m in merged:
        causes.extend(p["source_id"] for p in store.provenance(mid, m))
    previous = [r for r in key_items
                if r.superseded_by == item.item_id and r.item_id not in set(merged)]
    rec = fact_record(
        item, value=payload["value"], tenant_id=tenant,
        attrs=FactAttrs.from_json(payload["fact"]),
        updated_at=sql.event_at(store, mid, item.updated_seq),
        embedding_model=sql.vector_model(store, mid, item.item_id),
        caused_by=[c for c in causes if c],
        supersedes=max(previous, key=lambda r: r.revision).item_id if previous else None)
    if not payload["found"]:
        for f in ("content", "contentRef", "contentHash", "size"):
            rec.pop(f, None)
    row = store.cached_sources(mid, [item.item_id]).get(item.item_id)
    if row is not None:
        rec["source"] = schema_block(row)
    return rec


def record_kind(rec: dict[str, Any]) -> str:
    """log_entries | facts | tombstones | claim_keys (the Summary counter of a record)."""
    if "runId" in rec:
        return "log_entries"
    return {lf.TOMBSTONE_TYPE: "tombstones", lf.CLAIM_KEY_TYPE: "claim_keys",
            lf.STATE_TYPE: "item_states"}.get(
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
    item_states: int = 0
    bytes: int = 0
    seconds: float = 0.0
    #: CPU seconds of this process (wall seconds depend on how busy the machine is).
    cpu_seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)
    #: Import: records naming a tenant other than the memory's, per tenant id named; they
    #: were imported into the memory's own tenant (relabelled).
    relabelled_tenants: dict[str, int] = field(default_factory=dict)

    @property
    def records(self) -> int:
        return (self.log_entries + self.facts + self.tombstones + self.claim_keys
                + self.item_states)

    def count(self, kind: str) -> None:
        setattr(self, kind, getattr(self, kind) + 1)

    def relabel(self, tenant: str, named: dict[str, int]) -> None:
        """Records (per ``named`` tenant id) that name a tenant other than ``tenant``, the
        importing memory's: counted in ``relabelled_tenants`` and said in a warning."""
        self.relabelled_tenants = {t: n for t, n in sorted(named.items()) if t != tenant}
        if self.relabelled_tenants:
            n = sum(self.relabelled_tenants.values())
            self.warnings.append(
                f"{n} record(s) named tenant(s) {sorted(self.relabelled_tenants)}; they were "
                f"imported into this memory's tenant {tenant!r} (a memory belongs to one "
                "tenant). Import into a memory of the file's tenant to keep it.")

    def to_dict(self) -> dict[str, Any]:
        rate = self.records / self.seconds if self.seconds > 0 else None
        return {"records": self.records, "log_entries": self.log_entries, "facts": self.facts,
                "tombstones": self.tombstones, "claim_keys": self.claim_keys,
                "item_states": self.item_states,
                "bytes": self.bytes, "seconds": round(self.seconds, 3),
                "records_per_s": round(rate, 1) if rate else None,
                "cpu_seconds": round(self.cpu_seconds, 3), "warnings": self.warnings,
                "relabelled_tenants": self.relabelled_tenants,
                "relabelled_records": sum(self.relabelled_tenants.values())}


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


def comparable_lines(data: bytes, *, same_memory: bool = True) -> list[bytes]:
    """An export's lines sorted, for comparing two exports. ``same_memory=False``: the claim
    key is dropped and item ids (derived from the memory id, so another memory restores the
    same facts under other ids) are replaced by their order in the file, in ``id``,
    ``supersedes`` and item-state records."""
    if same_memory:
        return sorted(data.splitlines())
    recs = [json.loads(x) for x in data.splitlines()]
    names: dict[str, str] = {}
    for r in recs:
        if "runId" not in r and "type" in r and not r["type"].startswith("remem-"):
            names[r["id"]] = f"item#{len(names)}"
    out = []
    for r in recs:
        if r.get("type") == lf.CLAIM_KEY_TYPE:
            continue
        if "runId" not in r:
            head, sep, tail = r["id"].partition("#")
            r["id"] = names.get(head, head) + sep + tail
            if "supersedes" in r:
                r["supersedes"] = names.get(r["supersedes"], r["supersedes"])
        out.append(dump_line(r).rstrip(b"\n"))
    return sorted(out)
