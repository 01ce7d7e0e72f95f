"""The Source block of a Kind-B cached fact, parsed exactly as the Log+Facts schema states it.

``$defs/Source`` of ``memory.schema.json`` (1.3.0): ``kind`` (http-api | blob | mcp-tool |
external-db | user-input), optional ``uri``, ``freshness`` {ttlSeconds, lastVerifiedAt, etag,
sourceVersion} and ``refresh`` {strategy on-read | background | manual, handler, priority}.
Unknown fields, wrong types and values outside the enums are refused (``InvalidInput`` naming
the field, nothing written). remem adds size limits the schema leaves open (below).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from remem.domain.timefmt import from_iso, to_iso
from remem.errors import InvalidInput

MAX_URI_BYTES = 2048
MAX_VALIDATOR_CHARS = 256
MAX_HANDLER_CHARS = 128
MAX_TTL_SECONDS = 10 * 365 * 86400  # ten years: beyond it, use no TTL
SourceKind = Literal["http-api", "blob", "mcp-tool", "external-db", "user-input"]
Strategy = Literal["on-read", "background", "manual"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=False)


class Freshness(_Strict):
    """How to tell if the cached fact is still current (all optional)."""

    ttl_seconds: StrictInt | None = Field(None, alias="ttlSeconds", ge=0, le=MAX_TTL_SECONDS)
    last_verified_at: StrictStr | None = Field(None, alias="lastVerifiedAt")
    etag: StrictStr | None = Field(None, max_length=MAX_VALIDATOR_CHARS)
    source_version: StrictStr | None = Field(None, alias="sourceVersion",
                                             max_length=MAX_VALIDATOR_CHARS)


class Refresh(_Strict):
    """How the cached fact gets refreshed."""

    strategy: Strategy
    handler: StrictStr | None = Field(None, min_length=1, max_length=MAX_HANDLER_CHARS,
                                      pattern=r"^[A-Za-z0-9][A-Za-z0-9._:/-]*$")
    priority: StrictInt | None = Field(None, ge=-1_000_000, le=1_000_000)


class CachedSource(_Strict):
    """``$defs/Source``: where the truth of a cached fact lives and how to refresh it."""

    kind: SourceKind
    uri: StrictStr | None = None
    freshness: Freshness
    refresh: Refresh

    @property
    def handler_name(self) -> str:
        """The registered handler that refreshes it: ``refresh.handler``, else the kind."""
        return self.refresh.handler or self.kind

    def to_schema(self) -> dict[str, Any]:
        """The block in the schema's shape (camelCase, absent fields left out)."""
        return self.model_dump(by_alias=True, exclude_none=True)


def parse_cached_source(obj: Any) -> CachedSource:
    """A CachedSource from a dict in the schema's shape (or a CachedSource).

    Raises:
        InvalidInput: not an object, an unknown field, a wrong type, a value outside an enum,
            a time without a zone, or a limit exceeded; ``details.field`` names the field as
            ``cached_source.<path>``.
    """
    if isinstance(obj, CachedSource):
        src = obj
    elif not isinstance(obj, dict):
        raise InvalidInput("cached_source must be an object: the Log+Facts Source block "
                           "{kind, uri, freshness, refresh}.", field="cached_source")
    else:
        try:
            src = CachedSource.model_validate(obj)
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"])
            raise InvalidInput(f"cached_source.{where}: {err['msg']} (the Log+Facts Source "
                               "block: kind, uri, freshness {ttlSeconds, lastVerifiedAt, "
                               "etag, sourceVersion}, refresh {strategy, handler, priority}).",
                               field=f"cached_source.{where}") from None
    if src.uri is not None and (not src.uri or len(src.uri.encode("utf-8", "replace"))
                                > MAX_URI_BYTES or any(ord(ch) < 32 for ch in src.uri)):
        raise InvalidInput(f"cached_source.uri must be 1-{MAX_URI_BYTES} bytes without "
                           "control characters.", field="cached_source.uri")
    if src.freshness.last_verified_at is not None:
        from_iso(src.freshness.last_verified_at, field="cached_source.freshness.lastVerifiedAt")
    return src


def source_row(src: CachedSource, *, item_id: str, scope: str, key: str,
               now: datetime) -> dict[str, Any]:
    """The ``cached_sources`` row of a new cached item. ``lastVerifiedAt`` defaults to
    ``now``: whoever states the value has just read it from the source."""
    verified = (from_iso(src.freshness.last_verified_at)
                if src.freshness.last_verified_at else now)
    return {"item_id": item_id, "scope": scope, "key": key, "source_kind": src.kind,
            "uri": src.uri, "ttl_seconds": src.freshness.ttl_seconds,
            "last_verified_at": to_iso(verified), "etag": src.freshness.etag,
            "source_version": src.freshness.source_version,
            "strategy": src.refresh.strategy, "handler": src.refresh.handler,
            "priority": src.refresh.priority,
            "due_at": due_at(verified, src.freshness.ttl_seconds),
            "stale_reason": None, "stale_at": None}


def due_at(verified: datetime, ttl_seconds: int | None) -> str | None:
    """When a fact verified at ``verified`` turns stale (None: no TTL, never by time)."""
    if ttl_seconds is None:
        return None
    try:
        return to_iso(verified + timedelta(seconds=ttl_seconds))
    except (OverflowError, InvalidInput):
        return None


def is_stale(row: dict[str, Any], now_iso: str) -> bool:
    """A cached fact is stale when its last check failed or its TTL has run out."""
    return row.get("stale_reason") is not None or (
        row.get("due_at") is not None and row["due_at"] <= now_iso)


def schema_block(row: dict[str, Any]) -> dict[str, Any]:
    """A stored row back in the schema's Source shape (for views and export)."""
    fresh = {"ttlSeconds": row.get("ttl_seconds"), "lastVerifiedAt": row.get("last_verified_at"),
             "etag": row.get("etag"), "sourceVersion": row.get("source_version")}
    refresh = {"strategy": row["strategy"], "handler": row.get("handler"),
               "priority": row.get("priority")}
    out: dict[str, Any] = {"kind": row["source_kind"]}
    if row.get("uri") is not None:
        out["uri"] = row["uri"]
    out["freshness"] = {k: v for k, v in fresh.items() if v is not None}
    out["refresh"] = {k: v for k, v in refresh.items() if v is not None}
    return out


__all__ = ["CachedSource", "parse_cached_source", "source_row", "is_stale", "schema_block",
           "due_at"]
