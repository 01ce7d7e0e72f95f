"""Candidates for the decision: parsed and validated write requests of the Memory API."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from remem.domain.canonical import normalize_value
from remem.domain.keys import default_cardinality
from remem.domain.limits import parse_kind, validate_candidate
from remem.domain.model import Candidate, Kind, Scope, Source, parse_key
from remem.errors import InvalidInput
from remem.service.config import key_policy


def candidate(ctx: Any, scope: str, key: str, value: Any, kind: str | Kind | None,
              valid_at: datetime | None, source: Source | dict | None,
              valid_until: datetime | None, *,
              max_value_bytes: int | None = None) -> Candidate:
    """A validated candidate (kind defaults from the memory config, else fact).

    Raises:
        InvalidInput: bad scope, key, value, kind, source or times (nothing written).
    """
    src = parse_source(source)
    key = parse_key(key)
    if kind is None:
        kind = ctx.config.get("keys", {}).get(key, {}).get("kind", "fact")
    at = valid_at or src.occurred_at or ctx.clock.now()
    cand = Candidate(scope=Scope.parse(scope), key=key, value=value,
                     kind=kind if isinstance(kind, Kind) else parse_kind(kind),
                     valid_at=at, source=src, valid_until=valid_until)
    if max_value_bytes is None:
        validate_candidate(cand)
    else:  # a fact that asked for the larger inline limit (service.memory_facts)
        validate_candidate(cand, max_value_bytes=max_value_bytes)
    return cand


def parse_source(source: Source | dict | None) -> Source:
    """A ``Source`` from a Source, a dict {id, text, role, occurred_at} or None."""
    if source is None:
        return Source()
    if isinstance(source, Source):
        return source
    if not isinstance(source, dict):
        raise InvalidInput("source must be an object {id, text, role, occurred_at}.",
                           field="source")
    unknown = set(source) - {"id", "text", "role", "occurred_at"}
    if unknown:
        raise InvalidInput(f"source has unknown fields {sorted(unknown)}.", field="source")
    occurred = source.get("occurred_at")
    if isinstance(occurred, str):
        from remem.domain.timefmt import from_iso

        occurred = from_iso(occurred, field="source.occurred_at")
    return Source(id=source.get("id"), text=source.get("text"),
                  role=source.get("role") or "owner", occurred_at=occurred)


def derived_key(intent: str, cand: Candidate, config: dict) -> str | None:
    """Idempotency key from the source identity: one slot per (scope, key) for single keys,
    per (scope, key, value) for multi keys (one source may state several values)."""
    if not cand.source.id:
        return None
    card, _ = key_policy(config, cand.key)
    slot = [intent, str(cand.scope), cand.key, cand.source.id]
    if (card or default_cardinality(cand.key)).value == "multi":
        slot.append(json.dumps(normalize_value(cand.value), sort_keys=True))
    return "src:" + json.dumps(slot)
