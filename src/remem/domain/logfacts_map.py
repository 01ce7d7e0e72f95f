"""remem rows <-> Log+Facts 1.3.0 records for export/import (pure).

There is ONE mapping of LogEntries and Facts: ``domain.logentry.log_entry_record`` /
``log_entry_from_record`` and ``domain.fact.fact_record`` / ``fact_from_record``. This module
only delegates to them and adds what they lack (docs/log-facts.md, "Export and import"):

- **Tombstone** (a forgotten claim): a Fact of type ``remem-tombstone`` with no content:
  ``id`` = ``<scope>/<key>#<claim id>``, ``contentHash`` = ``sha256:<claim id>`` (the keyed
  claim hash, never the value), version 1, createdAt the epoch (remem keeps no time on it).
- **Claim key**: a Fact of type ``remem-claim-key`` (first in the file) carries the memory
  id and its claim-id secret, so a memory restored under the same id keys claims the same
  way (its item ids, label refs and tombstones then match the file's).
- **Item state**: a Fact of type ``remem-item-state`` (``<item id>#state``, just before its
  Fact) with what the schema Fact has no field for: ``content`` = ``{status, validAt,
  cardinality[, validUntil][, metadata]}`` (world time drives the decision, so a restore
  needs it; the key's cardinality declares a key the target's config leaves open).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from remem.domain.fact import FactInput, fact_from_record, scope_record
from remem.domain.logentry import log_entry_from_record
from remem.errors import InvalidInput

TOMBSTONE_TYPE = "remem-tombstone"
CLAIM_KEY_TYPE = "remem-claim-key"
STATE_TYPE = "remem-item-state"
EPOCH = "1970-01-01T00:00:00.000000Z"


def tombstone_record(scope: str, key: str, claim_id: str, *, tenant: str) -> dict[str, Any]:
    """A forgotten claim: its keyed claim hash, never its value. ``scope``/``key`` are the
    stored ones: label refs (``lbl_...``) in a keyed memory, whose scope object then names
    the tenant only."""
    try:
        scope_obj = scope_record(scope, tenant)
    except InvalidInput:
        scope_obj = {"tenantId": tenant}
    return {"id": f"{scope}/{key}#{claim_id}", "type": TOMBSTONE_TYPE,
            "scope": scope_obj, "version": 1, "createdAt": EPOCH,
            "contentHash": "sha256:" + claim_id}


def item_state_record(item: Any, metadata: dict[str, Any] | None, *, tenant: str
                      ) -> dict[str, Any]:
    """What a Fact cannot say of an item: status, world-time validity, metadata."""
    content: dict[str, Any] = {"status": item.status, "validAt": item.valid_at,
                               "cardinality": item.cardinality}
    if item.valid_until is not None:
        content["validUntil"] = item.valid_until
    if metadata:
        content["metadata"] = metadata
    return {"id": f"{item.item_id}#state", "type": STATE_TYPE,
            "scope": scope_record(item.scope, tenant), "version": 1,
            "createdAt": item.valid_at, "content": content}


def claim_key_record(memory_id: str, secret: bytes, *, tenant: str) -> dict[str, Any]:
    """The memory's claim-id scheme (see the module docstring)."""
    return {"id": f"claim-key/{memory_id}", "type": CLAIM_KEY_TYPE,
            "scope": {"tenantId": tenant}, "version": 1, "createdAt": EPOCH,
            "content": {"memoryId": memory_id,
                        "secret": base64.b64encode(secret).decode("ascii")}}


# --- records -> what import writes ---------------------------------------------------------
@dataclass(frozen=True)
class SourceIn:
    """A LogEntry as a ``sources`` row (``log_entry_from_record``, imported format)."""

    row: dict[str, Any]


@dataclass(frozen=True)
class FactIn:
    """A Fact (``fact_from_record``) plus its Kind-B Source block, as given."""

    fact: FactInput
    source: dict[str, Any] | None


@dataclass(frozen=True)
class TombstoneIn:
    scope: str
    key: str
    claim_id: str


@dataclass(frozen=True)
class ItemStateIn:
    item_id: str
    status: str
    valid_at: str
    valid_until: str | None
    metadata: dict[str, Any] | None
    cardinality: str | None = None


@dataclass(frozen=True)
class ClaimKeyIn:
    memory_id: str
    secret: bytes


Parsed = SourceIn | FactIn | TombstoneIn | ItemStateIn | ClaimKeyIn


def _need(obj: Mapping[str, Any], name: str, kind: type, where: str) -> Any:
    v = obj.get(name)
    if not isinstance(v, kind) or isinstance(v, bool) and kind is not bool:
        path = f"{where}.{name}" if where else name
        raise InvalidInput(f"{path} is missing or not of type {kind.__name__}.", field=path)
    return v


def from_record(rec: Mapping[str, Any]) -> Parsed:
    """What a schema-valid record asks import to write (remem's own fields checked here).

    Raises:
        InvalidInput: a field remem cannot map; ``field`` names it.
    """
    if "runId" in rec:
        return SourceIn(log_entry_from_record(rec))
    if rec["type"] == TOMBSTONE_TYPE:
        fid, _, claim = rec["id"].rpartition("#")
        scope, _, key = fid.partition("/")
        if not claim or not key or rec.get("contentHash") != "sha256:" + claim:
            raise InvalidInput("a remem-tombstone id must be <scope>/<key>#<claim id> and its "
                               "contentHash sha256:<claim id>.", field="id")
        return TombstoneIn(scope, key, claim)
    if rec["type"] == STATE_TYPE:
        item_id, _, tag = rec["id"].rpartition("#")
        c = _need(rec, "content", dict, "")
        if tag != "state" or not item_id:
            raise InvalidInput("a remem-item-state id must be <item id>#state.", field="id")
        meta = c.get("metadata")
        if meta is not None and not isinstance(meta, dict):
            raise InvalidInput("content.metadata must be an object.", field="content.metadata")
        until = c.get("validUntil")
        return ItemStateIn(item_id, _need(c, "status", str, "content"),
                           _need(c, "validAt", str, "content"),
                           _need(c, "validUntil", str, "content") if until is not None
                           else None, meta, c.get("cardinality"))
    if rec["type"] == CLAIM_KEY_TYPE:
        c = _need(rec, "content", dict, "")
        try:
            secret = base64.b64decode(_need(c, "secret", str, "content"), validate=True)
        except ValueError as exc:
            raise InvalidInput("content.secret is not base64.", field="content.secret") from exc
        return ClaimKeyIn(_need(c, "memoryId", str, "content"), secret)
    return FactIn(fact_from_record(dict(rec)), rec.get("source"))
