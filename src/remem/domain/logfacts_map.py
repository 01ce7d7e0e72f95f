"""remem rows <-> Log+Facts 1.3.0 records (``specs/logfacts/memory.schema.json``), pure.

A small seam: the export/import pipeline (``service.logfacts_io``) calls only the functions
here, so schema-exact mappings built elsewhere can replace them one by one.

How remem fills the records (the README "Log + Facts" section repeats this):

- **LogEntry** (a remem *source*): ``id`` = source id; ``kind`` = the source kind when it is
  one of the schema's 13, else ``event-received`` with ``payload.rememKind``; ``scope`` = the
  Scope object (tenantId + the one field of the remem scope; ``agent:`` has no schema field, so
  ``payload.scope`` carries the remem handle for every entry); ``runId`` = run id;
  ``actor``; ``timestamp`` = occurred_at; ``sequence`` from 0 per (tenant, run) over the
  *exported* entries; ``payload`` = ``{text, role, scope[, rememKind][, metadata]}``;
  ``contentHash`` = sha256 of the canonical payload; ``prevHash`` / ``entryHash`` chain the
  exported entries of the run (first: ``sha256:`` + 64 zeros; entryHash = sha256 of the RFC
  8785 JSON of exactly id, kind, scope, runId, actor, timestamp, sequence, payload, prevHash).
  An erased source is not exported (its text is gone) and the exported chain links over it.
- **Fact** (a remem *item*, current and history): ``id`` = ``<scope>/<key>`` (one fact line
  per key); ``version`` = 1, 2, ... per (scope, id) in revision order; ``type`` = the remem
  kind; ``createdAt`` = valid_at; ``updatedAt`` = invalid_at (history only); ``content`` =
  ``{scope, key, value, status, cardinality[, text][, role][, metadata][, validUntil]}``; ``contentHash``
  / ``size`` of the canonical content; ``causedByLogId`` = [source id]; ``supersedes`` =
  ``<id>@<version>`` of the version it replaced; ``retention`` = keepUntil / legalHold.
- **Tombstone** (a forgotten claim): a Fact of type ``remem-tombstone`` with no content:
  ``id`` = ``<scope>/<key>#<claim id>``, ``contentHash`` = ``sha256:<claim id>`` (the keyed
  claim hash), version 1, createdAt the epoch (remem keeps no time on a tombstone).
- **Claim key**: a Fact of type ``remem-claim-key`` (only when there are tombstones) carries
  the memory id and its claim-id secret, so a memory restored from the file under the same id
  keys claims the same way and its tombstones keep blocking the forgotten claims.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from remem.domain.canonical import canonical_json
from remem.errors import InvalidInput

ZERO_HASH = "sha256:" + "0" * 64
DEFAULT_TENANT = "default"
TOMBSTONE_TYPE = "remem-tombstone"
CLAIM_KEY_TYPE = "remem-claim-key"
EPOCH = "1970-01-01T00:00:00.000000Z"
LOG_KINDS = frozenset({
    "user-message", "agent-message", "system-message", "tool-call", "tool-result",
    "internal-thought", "retrieval", "artifact-produced", "event-emitted", "event-received",
    "guardrail-triggered", "wait-suspended", "wait-resumed"})
_SCOPE_FIELDS = {"user": "userId", "org": "orgId", "project": "projectId",
                 "thread": "threadId", "session": "sessionId"}
_ENTRY_FIELDS = ("id", "kind", "scope", "runId", "actor", "timestamp", "sequence", "payload",
                 "prevHash")


def sha256_ref(data: bytes) -> str:
    """``sha256:<hex>`` of bytes."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def schema_scope(scope: str, tenant: str) -> dict[str, str]:
    """The schema's Scope object of a remem scope handle (``agent:`` keeps tenantId only)."""
    kind, _, ident = scope.partition(":")
    out = {"tenantId": tenant}
    if kind in _SCOPE_FIELDS:
        out[_SCOPE_FIELDS[kind]] = ident
    return out


def entry_hash(rec: Mapping[str, Any]) -> str:
    """entryHash of a LogEntry record: sha256 over exactly the schema's fields."""
    return sha256_ref(canonical_json({k: rec[k] for k in _ENTRY_FIELDS if k in rec}))


def log_entry_record(row: Mapping[str, Any], *, tenant: str, sequence: int,
                     prev_hash: str) -> dict[str, Any]:
    """The LogEntry of a source row (source_id, run_id, scope, kind, role, actor,
    occurred_at, text, metadata) at ``sequence`` after ``prev_hash``."""
    payload: dict[str, Any] = {"text": row["text"], "role": row["role"], "scope": row["scope"]}
    kind = row["kind"]
    if kind not in LOG_KINDS:
        payload["rememKind"] = kind
        kind = "event-received"
    if row.get("metadata"):
        payload["metadata"] = row["metadata"]
    rec: dict[str, Any] = {"id": row["source_id"], "kind": kind,
                           "scope": schema_scope(row["scope"], tenant), "runId": row["run_id"],
                           "timestamp": row["occurred_at"], "sequence": sequence,
                           "payload": payload, "prevHash": prev_hash}
    if row.get("actor") is not None:
        rec["actor"] = row["actor"]
    rec["contentHash"] = sha256_ref(canonical_json(payload))
    rec["entryHash"] = entry_hash(rec)
    return rec


def fact_id(scope: str, key: str) -> str:
    return f"{scope}/{key}"


def fact_record(item: Any, payload: Mapping[str, Any], *, tenant: str, version: int
                ) -> dict[str, Any]:
    """The Fact of an item (an ``ItemRecord``) and its payload ``{value, quote, metadata}``
    as version ``version`` of ``<scope>/<key>``."""
    content: dict[str, Any] = {"scope": item.scope, "key": item.key,
                               "value": payload.get("value"), "status": item.status,
                               "cardinality": item.cardinality}
    if payload.get("quote") is not None:
        content["text"] = payload["quote"]
    if item.source_role is not None:
        content["role"] = item.source_role
    if payload.get("metadata"):
        content["metadata"] = payload["metadata"]
    if item.valid_until is not None:
        content["validUntil"] = item.valid_until
    body = canonical_json(content)
    fid = fact_id(item.scope, item.key)
    rec: dict[str, Any] = {"id": fid, "type": item.kind,
                           "scope": schema_scope(item.scope, tenant), "version": version,
                           "createdAt": item.valid_at, "content": content,
                           "contentHash": sha256_ref(body), "size": len(body)}
    if item.invalid_at is not None:
        rec["updatedAt"] = item.invalid_at
    retention = {k: v for k, v in (("keepUntil", item.keep_until),
                                   ("legalHold", True if item.legal_hold else None))
                 if v is not None}
    if retention:
        rec["retention"] = retention
    if item.source_id:
        rec["causedByLogId"] = [item.source_id]
    return rec


def tombstone_record(scope: str, key: str, claim_id: str, *, tenant: str) -> dict[str, Any]:
    """A forgotten claim: its keyed claim hash, never its value."""
    return {"id": f"{fact_id(scope, key)}#{claim_id}", "type": TOMBSTONE_TYPE,
            "scope": schema_scope(scope, tenant), "version": 1, "createdAt": EPOCH,
            "contentHash": "sha256:" + claim_id}


def claim_key_record(memory_id: str, secret: bytes, *, tenant: str) -> dict[str, Any]:
    """The memory's claim-id scheme (see the module docstring)."""
    return {"id": f"claim-key/{memory_id}", "type": CLAIM_KEY_TYPE,
            "scope": {"tenantId": tenant}, "version": 1, "createdAt": EPOCH,
            "content": {"memoryId": memory_id,
                        "secret": base64.b64encode(secret).decode("ascii")}}


# --- records -> what import writes ---------------------------------------------------------
@dataclass(frozen=True)
class SourceIn:
    source_id: str
    run_id: str
    scope: str
    kind: str
    role: str
    actor: str | None
    occurred_at: str
    text: str
    metadata: dict[str, Any] | None


@dataclass(frozen=True)
class FactIn:
    scope: str
    key: str
    kind: str
    value: Any
    status: str
    valid_at: str
    text: str | None
    role: str | None
    source_id: str | None
    metadata: dict[str, Any] | None
    valid_until: str | None
    keep_until: str | None
    legal_hold: bool
    cardinality: str | None = None


@dataclass(frozen=True)
class TombstoneIn:
    scope: str
    key: str
    claim_id: str


@dataclass(frozen=True)
class ClaimKeyIn:
    memory_id: str
    secret: bytes


Parsed = SourceIn | FactIn | TombstoneIn | ClaimKeyIn


def _need(obj: Mapping[str, Any], name: str, kind: type, where: str) -> Any:
    v = obj.get(name)
    if not isinstance(v, kind) or isinstance(v, bool) and kind is not bool:
        path = f"{where}.{name}" if where else name
        raise InvalidInput(f"{path} is missing or not of type {kind.__name__}.", field=path)
    return v


def _opt(obj: Mapping[str, Any], name: str, kind: type, where: str) -> Any:
    return None if obj.get(name) is None else _need(obj, name, kind, where)


def from_record(rec: Mapping[str, Any]) -> Parsed:
    """What a schema-valid record asks import to write (remem's own fields checked here).

    Raises:
        InvalidInput: a remem field is missing or of the wrong type; ``field`` names it.
    """
    if "kind" in rec:
        p = _need(rec, "payload", dict, "")
        kind = p.get("rememKind") or rec["kind"]
        return SourceIn(rec["id"], rec["runId"], _need(p, "scope", str, "payload"),
                        kind if isinstance(kind, str) else "", _need(p, "role", str, "payload"),
                        rec.get("actor"), rec["timestamp"], _need(p, "text", str, "payload"),
                        _opt(p, "metadata", dict, "payload"))
    if rec["type"] == TOMBSTONE_TYPE:
        fid, _, claim = rec["id"].rpartition("#")
        scope, _, key = fid.partition("/")
        if not claim or not key or rec.get("contentHash") != "sha256:" + claim:
            raise InvalidInput("a remem-tombstone id must be <scope>/<key>#<claim id> and its "
                               "contentHash sha256:<claim id>.", field="id")
        return TombstoneIn(scope, key, claim)
    c = _need(rec, "content", dict, "")
    if rec["type"] == CLAIM_KEY_TYPE:
        try:
            secret = base64.b64decode(_need(c, "secret", str, "content"), validate=True)
        except ValueError as exc:
            raise InvalidInput("content.secret is not base64.", field="content.secret") from exc
        return ClaimKeyIn(_need(c, "memoryId", str, "content"), secret)
    if "value" not in c:
        raise InvalidInput("content.value is missing.", field="content.value")
    caused = rec.get("causedByLogId") or [None]
    ret = rec.get("retention") or {}
    return FactIn(_need(c, "scope", str, "content"), _need(c, "key", str, "content"),
                  rec["type"], c["value"], _need(c, "status", str, "content"),
                  rec["createdAt"], _opt(c, "text", str, "content"),
                  _opt(c, "role", str, "content"), caused[0],
                  _opt(c, "metadata", dict, "content"), _opt(c, "validUntil", str, "content"),
                  ret.get("keepUntil"), bool(ret.get("legalHold")),
                  _opt(c, "cardinality", str, "content"))
