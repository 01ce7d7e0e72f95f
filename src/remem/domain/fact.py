"""Facts as the Log+Facts schema states them (``memory.schema.json`` ``$defs/Fact``, 1.3.0).

remem's items are the schema's Facts. This module is pure: it maps an item record plus the
attributes the service read beside it onto the exact schema JSON (``fact_record``) and back
(``fact_from_record``). The mapping, field by field:

- ``id``: the item id. ``version``: the item's revision, numbered per (scope, key) -- so it
  is monotonic within (scope, id) as the schema asks, and a superseding item of the same key
  carries a higher version. ``supersedes``: the id of the item this one superseded.
- ``type``: the caller's pack-defined type when one was given, else derived from the kind
  (``profile_slot`` <-> ``user-profile``, every other kind under its own name).
- ``scope``: ``{"tenantId": T}`` plus one id field: ``user:a`` -> ``userId``, ``org:`` ->
  ``orgId``, ``project:`` -> ``projectId``, ``thread:`` -> ``threadId``, ``session:`` ->
  ``sessionId``. The schema has no agent scope and allows no extra field, so ``agent:bot``
  travels as ``userId: "agent:bot"`` (the extension the log entries use; reversed on import).
- ``content``: ``{"key": key, "value": value}`` inline (at most ``MAX_FACT_CONTENT_BYTES`` of
  canonical JSON). Larger content lives in a blob: ``contentRef`` names it and ``content``
  holds ``{"key": key, "summary": <first MAX_INDEXED_CHARS characters>}``.
- ``contentHash``: ``sha256:`` + hex of the canonical JSON (RFC 8785) of the full content
  (for a blob fact: of the blob's bytes, which are exactly that canonical JSON);
  ``size``: that byte count.
- ``createdAt`` / ``updatedAt``: the item's creation and last change (ledger times).
- ``embeddingModel``: the model of the item's stored vector (absent when not embedded).
- ``retention``: ``keepUntil`` and ``legalHold`` (``keepDays`` is resolved to ``keepUntil`` =
  createdAt + keepDays when set; on import ``keepDays`` is turned into ``keepUntil`` alike).
- ``causedByLogId``: every source id the item was taken from, in the order they were seen
  (restatements, merged duplicates and multi-turn extraction included); absent when the fact
  was stated by its owner without a source (the schema asks for at least one id when present).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from remem.domain.canonical import canonical_json
from remem.domain.model import Kind, Scope, ScopeKind
from remem.domain.timefmt import from_iso, to_iso
from remem.errors import InvalidInput

#: Inline content limit of a fact (canonical JSON bytes); larger content goes to a blob.
MAX_FACT_CONTENT_BYTES = 65_536  # = limits.MAX_FACT_VALUE_BYTES
#: Characters of a fact's text that recall indexes (full text and embedding), and that a
#: blob fact keeps inline as its summary.
MAX_INDEXED_CHARS = 4_096
MAX_TYPE_BYTES = 128

_KIND_TO_TYPE = {Kind.PROFILE_SLOT: "user-profile"}
_TYPE_TO_KIND = {v: k for k, v in _KIND_TO_TYPE.items()}
_SCOPE_FIELDS = {ScopeKind.USER: "userId", ScopeKind.ORG: "orgId",
                 ScopeKind.PROJECT: "projectId", ScopeKind.THREAD: "threadId",
                 ScopeKind.SESSION: "sessionId"}
_FIELD_SCOPES = {v: k for k, v in _SCOPE_FIELDS.items()}


def type_of_kind(kind: str) -> str:
    """The schema ``type`` of a remem kind: ``profile_slot`` -> ``user-profile``, else the
    kind's own name (``fact``, ``preference``, ...)."""
    k = Kind(kind)
    return _KIND_TO_TYPE.get(k, k.value)


def kind_of_type(fact_type: str) -> Kind:
    """The remem kind of a schema ``type``: the inverse of ``type_of_kind``; any other
    (pack-defined) type is a ``fact``."""
    if fact_type in _TYPE_TO_KIND:
        return _TYPE_TO_KIND[fact_type]
    try:
        return Kind(fact_type)
    except ValueError:
        return Kind.FACT


RESERVED_TYPE_PREFIX = "remem-"
"""Types of the export's own bookkeeping records (``remem-claim-key``, ``remem-item-state``,
``remem-tombstone``): a fact may not take one, or its export line would read back as one."""


def check_type(fact_type: Any) -> str:
    """Validates a pack-defined type: a non-empty string of at most 128 UTF-8 bytes, no
    control characters, not starting with :data:`RESERVED_TYPE_PREFIX`.

    Raises:
        InvalidInput: otherwise.
    """
    if isinstance(fact_type, str) and fact_type.startswith(RESERVED_TYPE_PREFIX):
        raise InvalidInput(f"type may not start with {RESERVED_TYPE_PREFIX!r}: remem's export "
                           "uses those types for its own records; choose another type.",
                           field="type")
    if (not isinstance(fact_type, str) or not fact_type.strip()
            or len(fact_type.encode("utf-8", "surrogatepass")) > MAX_TYPE_BYTES
            or any(ord(ch) < 32 or 0xD800 <= ord(ch) <= 0xDFFF for ch in fact_type)):
        raise InvalidInput(f"type must be a non-empty string of at most {MAX_TYPE_BYTES} "
                           "bytes without control characters, e.g. 'user-profile'.",
                           field="type")
    return fact_type


def scope_record(scope: str, tenant_id: str) -> dict[str, str]:
    """The schema's Scope object of a remem scope handle (agent scope: ``userId`` with the
    prefix ``agent:``, as ``domain.logentry.scope_object`` does for log entries)."""
    s = Scope.parse(scope)
    if s.kind is ScopeKind.AGENT:
        return {"tenantId": tenant_id, "userId": str(s)}
    return {"tenantId": tenant_id, _SCOPE_FIELDS[s.kind]: s.id}


def scope_from_record(rec: dict[str, Any]) -> tuple[str, str]:
    """(remem scope handle, tenant id) of a schema Scope object with exactly one id field.

    Raises:
        InvalidInput: no tenant, or not exactly one id field.
    """
    if not isinstance(rec, dict) or not rec.get("tenantId"):
        raise InvalidInput("scope needs a tenantId.", field="scope.tenantId")
    ids = {k: v for k, v in rec.items() if k != "tenantId"}
    if len(ids) != 1 or next(iter(ids)) not in _FIELD_SCOPES:
        raise InvalidInput("scope must name exactly one of userId, orgId, projectId, "
                           "threadId, sessionId besides tenantId.", field="scope")
    field, value = next(iter(ids.items()))
    if field == "userId" and isinstance(value, str) and value.startswith("agent:"):
        return str(Scope.parse(value)), rec["tenantId"]
    return str(Scope.parse(f"{_FIELD_SCOPES[field].value}:{value}")), rec["tenantId"]


def content_of(key: str, value: Any) -> dict[str, Any]:
    """A fact's full content: ``{"key": key, "value": value}``."""
    return {"key": key, "value": value}


def content_bytes(key: str, value: Any) -> bytes:
    """Canonical JSON bytes of a fact's full content (what a blob stores)."""
    return canonical_json(content_of(key, value))


def content_hash(data: bytes) -> str:
    """``sha256:`` + hex of ``data``."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def summary_text(value: Any, limit_chars: int = MAX_INDEXED_CHARS) -> str:
    """The first ``limit_chars`` characters of a value's text (strings as they are, other
    values as canonical JSON): what recall indexes of a big fact."""
    text = value if isinstance(value, str) else canonical_json(value).decode("utf-8")
    return text[:limit_chars]


@dataclass(frozen=True)
class FactAttrs:
    """What remem keeps beside an item for its Fact record (in the payload row, erased with
    it). ``size_bytes``/``content_hash`` describe the full content; ``content_ref`` is set
    when it lives in a blob."""

    fact_type: str | None = None
    content_ref: str | None = None
    size_bytes: int | None = None
    content_hash: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in {"type": self.fact_type, "content_ref": self.content_ref,
                                  "size": self.size_bytes,
                                  "content_hash": self.content_hash}.items() if v is not None}

    @classmethod
    def from_json(cls, d: dict[str, Any] | None) -> FactAttrs:
        d = d or {}
        return cls(d.get("type"), d.get("content_ref"), d.get("size"), d.get("content_hash"))


def fact_record(item: Any, *, value: Any, tenant_id: str, attrs: FactAttrs | None = None,
                updated_at: str | None = None, embedding_model: str | None = None,
                caused_by: Sequence[str] = (), supersedes: str | None = None) -> dict[str, Any]:
    """The schema Fact JSON of one item (``domain.fold.ItemRecord`` or alike).

    Args:
        item: the item record (item_id, scope, key, kind, revision, created_at, legal_hold,
            keep_until).
        value: the stored value (a blob fact: its inline summary text).
        tenant_id: the memory's tenant.
        attrs: the fact attributes kept beside the item (type, blob ref, size, hash).
        updated_at: ISO time of the item's last change (None: same as created).
        embedding_model: model id of the item's vector (None: not embedded).
        caused_by: source ids in the order seen (duplicates dropped; empty: omitted).
        supersedes: the superseded item's id.

    Returns:
        A dict valid against ``$defs/Fact`` (keys in the schema's order).
    """
    attrs = attrs or FactAttrs()
    if attrs.content_ref:
        summary = value["summary"] if isinstance(value, dict) and "summary" in value \
            else summary_text(value)
        content: dict[str, Any] = {"key": item.key, "summary": summary}
        size, chash = attrs.size_bytes, attrs.content_hash
    else:
        content = content_of(item.key, value)
        data = canonical_json(content)
        size, chash = len(data), content_hash(data)
    out: dict[str, Any] = {
        "id": item.item_id, "type": attrs.fact_type or type_of_kind(item.kind),
        "scope": scope_record(item.scope, tenant_id), "version": max(1, int(item.revision)),
        "createdAt": item.created_at, "updatedAt": updated_at or item.created_at,
        "content": content}
    if attrs.content_ref:
        out["contentRef"] = attrs.content_ref
    if chash:
        out["contentHash"] = chash
    if size is not None:
        out["size"] = size
    if embedding_model:
        out["embeddingModel"] = embedding_model
    retention: dict[str, Any] = {"legalHold": bool(item.legal_hold)}
    if item.keep_until:
        retention = {"keepUntil": item.keep_until, **retention}
    out["retention"] = retention
    causes = list(dict.fromkeys(c for c in caused_by if c))
    if causes:
        out["causedByLogId"] = causes
    if supersedes:
        out["supersedes"] = supersedes
    return out


@dataclass(frozen=True)
class FactInput:
    """A Fact record parsed for a write (``fact_from_record``): what ``remember_fact`` takes.

    ``value`` is None for a blob fact (``content_ref`` set: the caller fetches the blob).
    """

    id: str
    scope: str
    tenant_id: str
    key: str
    value: Any
    kind: Kind
    fact_type: str
    version: int
    created_at: str
    updated_at: str | None
    content_ref: str | None
    content_hash: str | None
    size_bytes: int | None
    embedding_model: str | None
    keep_until: str | None
    legal_hold: bool
    caused_by: tuple[str, ...]
    supersedes: str | None


def fact_from_record(rec: dict[str, Any]) -> FactInput:
    """Parses a schema Fact (already valid against the schema) into a ``FactInput``.

    ``retention.keepDays`` becomes ``keep_until`` = createdAt + keepDays (the earlier of it and
    ``keepUntil`` when both are given). Content must be ``{"key", "value"}`` (inline) or
    ``{"key", "summary"}`` with a ``contentRef``.

    Raises:
        InvalidInput: a field remem cannot map (naming it); a content hash that does not
            match inline content.
    """
    for f in ("id", "type", "scope", "version", "createdAt"):
        if f not in rec:
            raise InvalidInput(f"fact lacks {f!r}.", field=f)
    scope, tenant = scope_from_record(rec["scope"])
    content = rec.get("content")
    ref = rec.get("contentRef")
    if not isinstance(content, dict) or not isinstance(content.get("key"), str):
        raise InvalidInput("fact content must be an object with a 'key' and a 'value' "
                           "(or a 'summary' beside a contentRef).", field="content")
    if ref is None and "value" not in content:
        raise InvalidInput("fact content has no 'value' and the fact no contentRef.",
                           field="content.value")
    value = content.get("value") if ref is None else None
    if ref is None and rec.get("contentHash"):
        if content_hash(content_bytes(content["key"], value)) != rec["contentHash"]:
            raise InvalidInput("fact contentHash does not match its content.",
                               field="contentHash")
    ret = rec.get("retention") or {}
    keep_until = ret.get("keepUntil")
    if ret.get("keepDays") is not None:
        by_days = to_iso(from_iso(rec["createdAt"], field="createdAt")
                         + timedelta(days=int(ret["keepDays"])))
        if keep_until is None or from_iso(by_days) < from_iso(keep_until,
                                                             field="retention.keepUntil"):
            keep_until = by_days
    fact_type = check_type(rec["type"])
    return FactInput(
        id=rec["id"], scope=scope, tenant_id=tenant, key=content["key"], value=value,
        kind=kind_of_type(fact_type), fact_type=fact_type, version=int(rec["version"]),
        created_at=rec["createdAt"], updated_at=rec.get("updatedAt"), content_ref=ref,
        content_hash=rec.get("contentHash"), size_bytes=rec.get("size"),
        embedding_model=rec.get("embeddingModel"), keep_until=keep_until,
        legal_hold=bool(ret.get("legalHold", False)),
        caused_by=tuple(rec.get("causedByLogId") or ()), supersedes=rec.get("supersedes"))


__all__ = ["MAX_FACT_CONTENT_BYTES", "MAX_INDEXED_CHARS", "FactAttrs", "FactInput",
           "check_type", "content_bytes", "content_hash", "content_of", "fact_from_record",
           "fact_record", "kind_of_type", "scope_from_record", "scope_record",
           "summary_text", "type_of_kind"]
