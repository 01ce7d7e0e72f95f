"""Request models of the Facts routes (``api/routes/facts.py``); unknown fields are 422.

The response of ``GET .../facts/{item_id}`` is the schema Fact record itself
(``domain.fact.fact_record``, valid against ``memory.schema.json`` ``$defs/Fact``), so it has
no model here beyond a loose object.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt

from remem.api.schemas import IdemStr, KeyStr, MetadataField, ScopeStr, SourceIn, UtcDatetime
from remem.domain.limits import MAX_BLOB_BYTES, MAX_FACT_VALUE_BYTES
from remem.service.cached_source import CachedSource


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Out(BaseModel):
    model_config = ConfigDict(extra="allow")


class FactRetentionIn(_In):
    """The schema's retention object: keep until a time, or for a number of days; a legal
    hold (admin only) keeps the fact until an admin releases it."""

    model_config = ConfigDict(extra="forbid", populate_by_name=False)

    keep_until: UtcDatetime | None = Field(default=None, alias="keepUntil")
    keep_days: StrictInt | None = Field(default=None, alias="keepDays", ge=1, le=365_000)
    legal_hold: StrictBool = Field(default=False, alias="legalHold")

    def to_service(self) -> dict[str, Any]:
        """The ``retention`` argument of ``Memory.remember_fact``."""
        return {"keep_until": self.keep_until, "keep_days": self.keep_days,
                "legal_hold": self.legal_hold}


class FactIn(_In):
    scope: str = ScopeStr
    key: str = KeyStr
    content: Any = Field(description=f"The fact's JSON content: up to {MAX_FACT_VALUE_BYTES:,} "
                         f"bytes inline, up to {MAX_BLOB_BYTES:,} bytes in the blob store.",
                         examples=[{"diet": "vegan", "allergies": ["peanuts"]}])
    type: str | None = Field(default=None, max_length=128, examples=["user-profile"],
                             description="Pack-defined fact type (default: from the kind).")
    kind: str | None = Field(default=None, max_length=32, examples=["profile_slot"])
    retention: FactRetentionIn | None = None
    cached_source: CachedSource | None = Field(
        default=None, description="Makes the fact a Kind-B cached fact (the Log+Facts Source "
        "block, as on POST /items).")
    source: SourceIn | None = None
    valid_at: UtcDatetime | None = None
    idempotency_key: str | None = IdemStr
    metadata: dict[str, Any] | None = MetadataField


class FactOut(_Out):
    """A schema Fact record (``$defs/Fact`` of the shared schema)."""

    id: str
    type: str
    version: int


class FactContentOut(_Out):
    """The full content of a fact, read from its blob when it has one."""

    item_id: str
    content: Any
