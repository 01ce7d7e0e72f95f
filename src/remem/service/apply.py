"""instantKV proposals: parse, validate all, then apply each through the one decision.

A proposal (instantKV controller seed) is
``{entity, attribute, value, kind, operation: assert|correct, source: {id, text, role,
occurred_at_ms}, valid_until_ms, expected_revision}``; a file holds one proposal or the strict
envelope ``{"proposals": [...], "applied": false}`` with at most eight.

Mapping onto remem: ``attribute`` is the key. ``entity`` is the scope: a scope handle such as
``user:alice`` is used as is; the bare words ``user`` and ``self`` mean the caller's default
scope (``--scope``). ``assert`` writes with ASSERT authority (a different value of a single key
records a conflict, instantKV); ``correct`` is a correction with ``expected_revision``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from remem.domain.filters import parse_metadata
from remem.domain.jsondoc import (MAX_DOCUMENT_DEPTH, UnrepresentableNumber, check_text_depth,
                                  parse_float)
from remem.domain.limits import MAX_APPLY_BYTES, MAX_PROPOSALS, parse_kind
from remem.domain.model import Authority, Scope, Source, parse_key
from remem.domain.timefmt import from_ms
from remem.errors import InvalidInput, RememError

PROPOSAL_FIELDS = {"entity", "attribute", "value", "kind", "operation", "source",
                   "valid_until_ms", "expected_revision", "metadata"}
REQUIRED = {"entity", "attribute", "value", "kind", "operation"}


@dataclass(frozen=True)
class Proposal:
    scope: str
    key: str
    value: Any
    kind: str
    operation: str
    source: Source
    valid_until: datetime | None
    expected_revision: int | None
    raw: dict[str, Any]
    metadata: dict[str, Any] | None = None


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for k, v in pairs:
        if k in seen:
            raise InvalidInput(f"duplicate JSON field {k!r}; each field may appear once.",
                               field=k)
        seen[k] = v
    return seen


def _bad_constant(name: str) -> Any:
    raise InvalidInput(f"non-finite number {name} is not valid JSON here.", field="value")


def parse_document(text: str | bytes) -> list[dict[str, Any]]:
    """Parses a proposal file: one proposal or ``{"proposals": [...], "applied": false}``.

    Raises:
        InvalidInput: over 65,536 bytes, not UTF-8, invalid JSON, nested over 64 deep,
            duplicate fields, non-finite numbers, a bare array, ``applied: true``, or more
            than eight proposals.
    """
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    if len(data) > MAX_APPLY_BYTES:
        raise InvalidInput(f"input is {len(data)} bytes; apply accepts at most "
                           f"{MAX_APPLY_BYTES}.", field="input")
    try:
        decoded = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput("input is not valid UTF-8; send UTF-8 encoded JSON.",
                           field="input") from None
    check_text_depth(decoded, MAX_DOCUMENT_DEPTH, "input")  # before the recursive parser
    try:
        doc = json.loads(decoded, object_pairs_hook=_no_duplicates,
                         parse_constant=_bad_constant, parse_float=parse_float)
    except UnrepresentableNumber as exc:  # 1e-400 would be stored as 0
        from remem.domain.jsondoc import number_path

        raise exc.refusal("input", number_path(decoded, exc.digits)) from None
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"input is not valid JSON ({exc.msg} at line {exc.lineno} column "
                           f"{exc.colno}).", field="input") from None
    except ValueError:  # an integer over 4,300 digits
        raise InvalidInput("input holds a number with too many digits.",
                           field="input") from None
    if isinstance(doc, list):
        raise InvalidInput('a bare array is not accepted; wrap it as {"proposals": [...], '
                           '"applied": false}.', field="input")
    if not isinstance(doc, dict):
        raise InvalidInput("input must be a proposal object or the proposals envelope.",
                           field="input")
    if "proposals" in doc:
        if set(doc) != {"proposals", "applied"} or doc["applied"] is not False:
            why = ("an outcomes payload (applied: true) is not input"
                   if doc.get("applied") is True else
                   f"found fields {sorted(doc)}" if "applied" in doc else
                   '"applied": false is missing')
            raise InvalidInput('the envelope must be exactly {"proposals": [...], "applied": '
                               f"false}}; {why}.", field="applied")
        props = doc["proposals"]
        if not isinstance(props, list) or not props:
            raise InvalidInput("proposals must be a non-empty list.", field="proposals")
        if len(props) > MAX_PROPOSALS:
            raise InvalidInput(f"{len(props)} proposals; at most {MAX_PROPOSALS} per apply.",
                               field="proposals")
        return props
    return [doc]


def validate_proposal(p: Any, index: int, default_scope: str | None) -> Proposal:
    """Checks one proposal's shape and maps it to remem terms.

    Raises:
        InvalidInput: with ``details.index`` naming the proposal.
    """
    try:
        if not isinstance(p, dict):
            raise InvalidInput("a proposal must be an object.", field="proposal")
        unknown = set(p) - PROPOSAL_FIELDS
        if unknown:
            raise InvalidInput(f"unknown fields {sorted(unknown)}.", field=sorted(unknown)[0])
        missing = REQUIRED - set(p)
        if missing:
            raise InvalidInput(f"missing fields {sorted(missing)}.", field=sorted(missing)[0])
        scope = _scope(p["entity"], default_scope)
        key = parse_key(p["attribute"])
        kind = parse_kind(p["kind"]).value
        op = p["operation"]
        if op not in ("assert", "correct"):
            raise InvalidInput(f"operation {op!r} must be 'assert' or 'correct'.",
                               field="operation")
        rev = p.get("expected_revision")
        if op == "correct" and not (isinstance(rev, int) and not isinstance(rev, bool)):
            raise InvalidInput("operation 'correct' needs an integer expected_revision; inspect "
                               "the key to read it. Never retry by removing it.",
                               field="expected_revision")
        src = _source(p.get("source"))
        vu = p.get("valid_until_ms")
        if vu is not None and (not isinstance(vu, int) or isinstance(vu, bool)):
            raise InvalidInput("valid_until_ms must be an integer (Unix ms) or null.",
                               field="valid_until_ms")
        until = from_ms(vu, "valid_until_ms") if vu else None
        return Proposal(scope, key, p["value"], kind, op, src, until,
                        rev if op == "correct" else None, p,
                        parse_metadata(p.get("metadata")))
    except InvalidInput as exc:
        raise _at_index(exc, index) from exc.__cause__


def _at_index(exc: InvalidInput, index: int) -> InvalidInput:
    """Names the proposal an error belongs to (``details.index`` and a message prefix)."""
    exc.details["index"] = index
    exc.message = f"proposal {index}: {exc.message}"
    exc.args = (exc.message,)
    return exc


def _scope(entity: Any, default_scope: str | None) -> str:
    if not isinstance(entity, str):
        raise InvalidInput("entity must be a string.", field="entity")
    if ":" in entity:
        return str(Scope.parse(entity))
    if entity in ("user", "self"):
        if not default_scope:
            raise InvalidInput(f"entity {entity!r} needs a default scope, and this caller has "
                               "none of its own: name one (command line: --scope user:<id>; "
                               "HTTP: the scope parameter or field) or use a scope handle "
                               "such as 'user:alice' as entity.", field="entity")
        return str(Scope.parse(default_scope))
    raise InvalidInput(f"entity {entity!r} is not a scope; use a handle like 'user:{entity}'.",
                       field="entity")


def _source(s: Any) -> Source:
    if s is None:
        return Source(role="user")
    if not isinstance(s, dict):
        raise InvalidInput("source must be an object {id, text, role, occurred_at_ms}.",
                           field="source")
    unknown = set(s) - {"id", "text", "role", "occurred_at_ms"}
    if unknown:
        raise InvalidInput(f"source has unknown fields {sorted(unknown)}.", field="source")
    ms = s.get("occurred_at_ms")
    if ms is not None and (not isinstance(ms, int) or isinstance(ms, bool)):
        raise InvalidInput("source.occurred_at_ms must be an integer (Unix ms).",
                           field="source.occurred_at_ms")
    for f in ("id", "text", "role"):
        if s.get(f) is not None and not isinstance(s[f], str):
            raise InvalidInput(f"source.{f} must be a string.", field=f"source.{f}")
    return Source(id=s.get("id"), text=s.get("text"), role=s.get("role") or "user",
                  occurred_at=from_ms(ms, "source.occurred_at_ms") if ms is not None else None)


def apply_document(memory: Any, text: str | bytes, *, default_scope: str | None = None,
                   actor: str | None = None) -> dict[str, Any]:
    """Validates every proposal, then applies each (each commits independently).

    Returns:
        ``{"applied": true, "results": [{index, receipt | error, next_action}], "ok": bool}``
        where a receipt is ``{scope, key, revision, status, replayed, item_id}``; ``ok`` is
        False when any proposal failed or recorded a conflict.

    Raises:
        InvalidInput: the document or any proposal is invalid (nothing is written).
        PermissionDenied: a proposal names a scope the caller may not write (nothing is
            written).
    """
    from remem.service.candidates import candidate

    default_scope = (memory.principal.scope if default_scope is None
                     else memory.guard.write(default_scope))
    proposals = [validate_proposal(p, i, default_scope) for i, p in enumerate(parse_document(text))]
    for i, p in enumerate(proposals):  # validate values/limits/scopes of all before any write
        try:
            memory.guard.write(p.scope)
            candidate(memory.ctx, p.scope, p.key, p.value, p.kind, None, p.source, p.valid_until)
        except InvalidInput as exc:
            raise _at_index(exc, i) from exc.__cause__
    results, ok = [], True
    for i, p in enumerate(proposals):
        try:
            idem = None  # derived by Memory from the source id: one slot per (scope, key[, value])
            # per-slot bounds are checked inside the write, at the head it commits against
            if p.operation == "correct":
                r = memory.correct(p.scope, p.key, p.value, expected_revision=p.expected_revision,
                                   kind=p.kind, source=p.source, idempotency_key=idem,
                                   actor=actor, metadata=p.metadata, slot_bounds=True)
            else:
                r = memory.remember(p.scope, p.key, p.value, kind=p.kind, source=p.source,
                                    valid_until=p.valid_until, idempotency_key=idem,
                                    actor=actor, authority=Authority.ASSERT,
                                    metadata=p.metadata, slot_bounds=True)
            receipt = {"scope": r.scope, "key": r.key, "revision": r.revision,
                       "status": r.outcome, "replayed": r.replayed, "item_id": r.item_id,
                       "conflict_group": r.conflict_group}
            action = _next_action(r.outcome)
            ok = ok and r.outcome not in ("conflict", "forgotten")
            results.append({"index": i, "receipt": receipt, "next_action": action})
        except RememError as exc:
            ok = False
            results.append({"index": i, "error": exc.to_dict(),
                            "next_action": _error_action(exc)})
    return {"applied": True, "ok": ok, "results": results}


def _error_action(exc: RememError) -> str:
    """The fixed next action for a failed proposal (instantKV failure table)."""
    return {
        "slot_full": "inspect provenance and bounds; do not erase retry protection to force "
                     "a write",
        "revision_mismatch": "inspect, review and use the new revision for an intentional "
                             "correction",
        "idempotency_conflict": "retry the original JSON; use a new source id only for a new "
                                "observation",
        "permission_denied": "check the credential file and the token's grants",
    }.get(exc.code, "inspect the key, review, then retry")


def _next_action(outcome: str) -> str:
    return {
        "conflict": "review the conflict; resolve it or correct with expected_revision",
        "stale": "none: an older statement was kept as history",
        "forgotten": "none: the claim was forgotten and is not learned again",
    }.get(outcome, "none")
