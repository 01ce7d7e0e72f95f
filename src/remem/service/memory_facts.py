"""Memory methods for Facts as the Log+Facts schema states them (issue 16.3).

Mixed into :class:`remem.service.memory.Memory`; every method asks the guard first.

- ``remember_fact`` writes a fact through the one decision like ``remember``, with a
  pack-defined ``type``, per-fact ``retention`` and content up to ``MAX_FACT_VALUE_BYTES``
  inline; larger content (up to ``MAX_BLOB_BYTES``) is written to the blob store
  (``blob://local/<memory>/<blob id>``) and the item keeps a bounded summary
  (``{"summary": first MAX_INDEXED_CHARS characters, "contentHash"}``) for recall.
- ``fact`` returns the schema record (``domain.fact.fact_record``); ``fact_content`` the full
  content value, fetched from the blob when there is one.
- ``release_hold`` (admin) lives in ``memory_admin``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from remem.domain.fact import (
    FactAttrs,
    check_type,
    content_bytes,
    content_hash,
    fact_record,
    kind_of_type,
    summary_text,
)
from remem.domain.limits import MAX_BLOB_BYTES, MAX_FACT_VALUE_BYTES, check_value
from remem.domain.model import Authority, parse_key
from remem.domain.timefmt import from_iso
from remem.errors import InvalidInput, NotFound

#: A blob file younger than this is never swept: its fact may still be committing.
BLOB_GRACE_S = 3600.0

_RETENTION_FIELDS = frozenset({"keep_until", "keep_days", "legal_hold"})


def parse_retention(retention: dict[str, Any] | None) -> dict[str, Any]:
    """``{"keep_until": datetime | None, "keep_days": int | None, "legal_hold": bool}``.

    Raises:
        InvalidInput: unknown field, both keep_until and keep_days, keep_days < 0, a time
            without a zone, legal_hold not a boolean.
    """
    if retention is None:
        return {"keep_until": None, "keep_days": None, "legal_hold": False}
    if not isinstance(retention, dict) or set(retention) - _RETENTION_FIELDS:
        raise InvalidInput("retention takes keep_until, keep_days and legal_hold only.",
                           field="retention")
    until, days = retention.get("keep_until"), retention.get("keep_days")
    hold = retention.get("legal_hold", False)
    if until is not None and days is not None:
        raise InvalidInput("Give retention.keep_until or retention.keep_days, not both.",
                           field="retention.keep_days")
    if isinstance(until, str):
        until = from_iso(until, field="retention.keep_until")
    if until is not None and not isinstance(until, datetime):
        raise InvalidInput("retention.keep_until must be a time with a zone.",
                           field="retention.keep_until")
    if days is not None and (isinstance(days, bool) or not isinstance(days, int) or days < 1):
        raise InvalidInput("retention.keep_days must be a whole number of days, at least 1.",
                           field="retention.keep_days")
    if not isinstance(hold, bool):
        raise InvalidInput("retention.legal_hold must be true or false.",
                           field="retention.legal_hold")
    return {"keep_until": until, "keep_days": days, "legal_hold": hold}


def sweep_orphan_blobs(memory: Any, *, grace_s: float = BLOB_GRACE_S,
                       now_s: float | None = None) -> int:
    """Deletes the memory's blob files that no payload row references and that are older
    than ``grace_s`` seconds (a crash between writing a blob and committing its fact leaves
    one). Run by the retention job; internal (no principal check, as the job itself).

    Returns:
        How many files were deleted (0 when the store has no blob directory).
    """
    from remem.stores.sql.facts import memory_content_refs

    blobs = memory.ctx.owner.blobs
    sweep = getattr(blobs, "sweep_orphans", None)  # a provider that cannot list: no sweep
    if sweep is None:
        return 0
    return sweep(memory.id, memory_content_refs(memory.store, memory.id), grace_s=grace_s,
                 now_s=now_s)


class FactMethods:
    """remember_fact / fact / fact_content (see ``Memory``)."""

    guard: Any
    ctx: Any

    def remember_fact(self, scope: str, key: str, content: Any, *, type: str | None = None,
                      kind: str | None = None, retention: dict[str, Any] | None = None,
                      source: Any = None, valid_at: datetime | None = None,
                      idempotency_key: str | None = None, actor: str | None = None,
                      metadata: dict[str, Any] | None = None,
                      cached_source: dict[str, Any] | None = None) -> Any:
        """Remembers a fact: ``remember`` with a schema ``type``, per-fact retention and
        content up to 64 KB inline (larger goes to the blob store automatically).

        Args:
            type: pack-defined type (``user-profile``, ``summary``, ...); default from the
                kind (``profile_slot`` -> ``user-profile``, others their own name). A type
                given without a kind picks the kind it maps to (else ``fact``).
            retention: ``{"keep_until": datetime | ISO, "keep_days": int,
                "legal_hold": bool}``; a hold needs the admin role.
            cached_source: makes the fact a Kind-B cached fact (as ``remember``).

        Returns:
            WriteResult (as ``remember``).

        Raises:
            InvalidInput: bad input (nothing written; a blob written for it is removed);
                content above 64 KB with no blob store configured.
            PermissionDenied: the principal may not write the scope (or hold without admin).
        """
        from remem.domain.access import Role
        from remem.domain.filters import parse_metadata
        from remem.service.cached_source import parse_cached_source
        from remem.service.candidates import derived_key
        from remem.service.ids import new_id
        from remem.service.writer import WriteRequest

        scope = self.guard.write(scope)
        key = parse_key(key)
        fact_type = check_type(type) if type is not None else None
        if kind is None and fact_type is not None:
            kind = self.config.get("keys", {}).get(key, {}).get("kind") \
                or kind_of_type(fact_type).value
        ret = parse_retention(retention)
        if ret["legal_hold"]:
            self.guard.role(Role.ADMIN, "set legal holds")
        cached = parse_cached_source(cached_source) if cached_source is not None else None
        check_value(content, key, MAX_BLOB_BYTES)
        data = content_bytes(key, content)
        ref = None
        if len(data) > MAX_FACT_VALUE_BYTES:
            blobs = self.ctx.owner.blobs
            if blobs is None:
                raise InvalidInput(
                    f"content is {len(data)} bytes, above the {MAX_FACT_VALUE_BYTES:,}-byte "
                    "inline limit, and this store has no blob directory; open it with "
                    "blob_dir=... (or set REMEM_BLOB_DIR).", field="content")
            value: Any = {"summary": summary_text(content), "contentHash": content_hash(data)}
            attrs = FactAttrs(fact_type, None, len(data), content_hash(data))
        else:
            value, attrs = content, FactAttrs(fact_type)
        cand = self._candidate_fact(scope, key, value, kind, valid_at, source)
        parsed_meta = parse_metadata(metadata)
        try:
            if attrs.size_bytes is not None:
                ref = self.ctx.owner.blobs.put(self.id, new_id("blob"), data)
                attrs = FactAttrs(fact_type, ref, attrs.size_bytes, attrs.content_hash)
            result = self.ctx.writer.write(WriteRequest(
                cand, Authority.OWNER, self._actor(actor), metadata=parsed_meta,
                stated_valid_at=valid_at or cand.source.occurred_at,
                fact=attrs.to_json() or None,
                on_written=self.ctx.cached.written_hook(cached) if cached else None,
                extra_meaning={"cached_source": cached.to_schema()} if cached else None,
                idempotency_key=self.guard.scoped_name(scope, idempotency_key)
                or derived_key("remember_fact", cand, self.config)))
        finally:
            if ref is not None:
                self._drop_orphan_blob(ref)
        self._apply_retention(result.item_id, ret, actor)
        if cached is not None and cached.refresh.strategy == "background":
            from remem.service.jobs.refresh import arm_refresh

            arm_refresh(self)
        return result

    def _candidate_fact(self, scope: str, key: str, value: Any, kind: Any, valid_at: Any,
                        source: Any) -> Any:
        from dataclasses import replace

        from remem.service.candidates import candidate

        cand = candidate(self.ctx, scope, key, value, kind, valid_at, source, None,
                         max_value_bytes=MAX_FACT_VALUE_BYTES)
        sid = self.guard.scoped_name(str(cand.scope), cand.source.id)
        return cand if sid == cand.source.id else replace(
            cand, source=replace(cand.source, id=sid))

    def _drop_orphan_blob(self, ref: str) -> None:
        """Deletes a blob no payload refers to (the write failed, or was a duplicate)."""
        from remem.stores.sql.facts import referenced

        if not referenced(self.store, self.id, ref):
            self.ctx.owner.blobs.delete(ref)

    def _apply_retention(self, item_id: str | None, ret: dict[str, Any],
                         actor: str | None) -> None:
        from remem.service.forget import Forgetter

        if item_id is None:
            return
        forgetter = Forgetter(self)
        if ret["keep_until"] is not None or ret["keep_days"] is not None:
            forgetter.set_retention(item_id, keep_until=ret["keep_until"],
                                    keep_days=ret["keep_days"], actor=self._actor(actor))
        if ret["legal_hold"]:
            forgetter.set_legal_hold(item_id, True, actor=self._actor(actor))

    def fact(self, item_id: str) -> dict[str, Any]:
        """The item as a schema Fact (``domain.fact.fact_record``): valid against
        ``memory.schema.json`` ``$defs/Fact``. A forgotten item is gone (not found).

        Raises:
            NotFoundOrNotVisible: no such item visible to the caller.
        """
        from remem.stores.sql import facts as sql

        rec = self.guard.item(item_id)
        store = self.store
        found, value, attrs_json = sql.payload_fact(store, self.id, rec.payload_id)
        attrs = FactAttrs.from_json(attrs_json)
        causes = [p["source_id"] for p in store.provenance(self.id, item_id)]
        if rec.source_id:
            causes.insert(0, rec.source_id)
        for merged in sql.merged_into(store, self.id, item_id):
            causes.extend(p["source_id"] for p in store.provenance(self.id, merged))
        merged_ids = set(sql.merged_into(store, self.id, item_id))
        previous = [r for r in store.key_items(self.id, rec.scope, rec.key)
                    if r.superseded_by == item_id and r.item_id not in merged_ids]
        out = fact_record(
            rec, value=value, tenant_id=self._tenant_id(), attrs=attrs,
            updated_at=sql.event_at(store, self.id, rec.updated_seq),
            embedding_model=sql.vector_model(store, self.id, item_id),
            caused_by=[c for c in causes if c],
            supersedes=max(previous, key=lambda r: r.revision).item_id if previous else None)
        if not found:
            for f in ("content", "contentRef", "contentHash", "size"):
                out.pop(f, None)
        return out

    def fact_content(self, item_id: str) -> Any:
        """The full content value of a visible fact (read from its blob when it has one).

        Raises:
            NotFoundOrNotVisible: no such item; NotFound: its content was erased.
        """
        import json

        from remem.stores.sql import facts as sql

        rec = self.guard.item(item_id)
        found, value, attrs_json = sql.payload_fact(self.store, self.id, rec.payload_id)
        if not found:
            raise NotFound(f"The content of item {item_id} was erased.", item_id=item_id)
        ref = (attrs_json or {}).get("content_ref")
        if not ref:
            return value
        return json.loads(self.ctx.owner.blobs.get(ref))["value"]

    def _tenant_id(self) -> str:
        """The memory's tenant (``default`` for embedded use until tenants land)."""
        return getattr(self.ctx, "tenant_id", None) or "default"
