"""Log entries as the Log+Facts schema states them (``specs/kindgi/memory.schema.json``,
``$defs/LogEntry``, schema version 1.3.0): pure functions, no I/O.

A stored source row becomes one schema-exact record with :func:`log_entry_record`, and a
record becomes a row with :func:`log_entry_from_record`. Fields:

- ``kind``: one of :class:`LogKind` (13 values); remem's role words map onto it
  (:func:`parse_log_kind`).
- ``scope``: the schema's Scope object (:func:`scope_object`); remem's ``agent:<id>`` scope has
  no field there (``additionalProperties: false``), so it travels as ``userId: "agent:<id>"``.
- ``sequence`` from 0 per run; ``prevHash`` of the first entry is :data:`ZERO_LOG_HASH`.
- ``contentHash`` = ``sha256:`` + hex sha256 of the canonical (RFC 8785) payload alone.
- ``entryHash`` = ``sha256:`` + hex sha256 of the canonical JSON object of exactly the
  schema's fields (id, kind, scope, runId, actor, timestamp, sequence, payload, prevHash) with
  **one deliberate deviation**: in place of ``payload`` it holds ``payloadDigest`` =
  ``sha256:`` + sha256(salt || canonical payload), a per-entry random salt. Erasing a payload
  deletes the payload, its salt and its contentHash; the digest stays, so the chain still
  verifies and nothing erased can be confirmed by guessing (docs/log-facts.md).

Row formats (``log_format``): :data:`LEGACY_FORMAT` (1) rows were written before this schema
(sequence from 1, bare-hex hashes, a body with remem's own fields; ``sourcelog.entry_hash``);
they verify as they were written and are never rewritten, because the ledger's
``source.recorded`` events commit to their hashes. :data:`SCHEMA_FORMAT` (2) rows are written
now. :data:`IMPORTED_FORMAT` (3) rows came from a record whose salt is not known (an import):
their hashes are kept as given and verify by link and contentHash only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from remem.domain.canonical import canonical_json, salted_digest, sha256_hex
from remem.domain.model import Scope, ScopeKind
from remem.errors import InvalidInput

LEGACY_FORMAT, SCHEMA_FORMAT, IMPORTED_FORMAT = 1, 2, 3
DEFAULT_TENANT = "default"
"""The tenant of a memory created without one (embedded use)."""
ZERO_LOG_HASH = "sha256:" + "0" * 64
MAX_PAYLOAD_BYTES = 65_536
"""Canonical JSON bytes of one payload (the text inside it keeps its own 16,384-byte cap)."""
HASHED_FIELDS = ("id", "kind", "scope", "runId", "actor", "timestamp", "sequence",
                 "payloadDigest", "prevHash")
"""What ``entryHash`` covers: the schema's list with ``payloadDigest`` in place of
``payload`` (the one deviation); ``actor`` is left out when the entry has none."""


class LogKind(StrEnum):
    USER_MESSAGE = "user-message"
    AGENT_MESSAGE = "agent-message"
    SYSTEM_MESSAGE = "system-message"
    TOOL_CALL = "tool-call"
    TOOL_RESULT = "tool-result"
    INTERNAL_THOUGHT = "internal-thought"
    RETRIEVAL = "retrieval"
    ARTIFACT_PRODUCED = "artifact-produced"
    EVENT_EMITTED = "event-emitted"
    EVENT_RECEIVED = "event-received"
    GUARDRAIL_TRIGGERED = "guardrail-triggered"
    WAIT_SUSPENDED = "wait-suspended"
    WAIT_RESUMED = "wait-resumed"


ROLE_KINDS: dict[str, LogKind] = {
    "user": LogKind.USER_MESSAGE, "owner": LogKind.USER_MESSAGE,
    "assistant": LogKind.AGENT_MESSAGE, "agent": LogKind.AGENT_MESSAGE,
    "system": LogKind.SYSTEM_MESSAGE, "tool": LogKind.TOOL_RESULT}
"""The kind a source gets from its role when the caller names none (a remem tool turn is the
tool's result)."""
_OLD_WORDS: dict[str, LogKind] = {
    "user": LogKind.USER_MESSAGE, "assistant": LogKind.AGENT_MESSAGE,
    "agent": LogKind.AGENT_MESSAGE, "system": LogKind.SYSTEM_MESSAGE}
"""remem's old role words accepted as a kind: only those that name one kind ('tool' could be
a call or a result, 'owner' a user or system message: refused)."""
_SCOPE_FIELDS = {ScopeKind.USER: "userId", ScopeKind.ORG: "orgId",
                 ScopeKind.PROJECT: "projectId", ScopeKind.THREAD: "threadId",
                 ScopeKind.SESSION: "sessionId"}
AGENT_USER_PREFIX = "agent:"


def parse_log_kind(kind: str | None, role: str = "user") -> LogKind:
    """The schema kind of a source.

    Args:
        kind: one of the 13 kinds, an old word that maps to one kind (``user``, ``assistant``,
            ``agent``, ``system``; ``_`` for ``-`` is accepted), or None (from ``role``).
        role: the speaker's role, used when ``kind`` is None.

    Raises:
        InvalidInput: any other kind; the message names the allowed ones.
    """
    if kind is None:
        return ROLE_KINDS.get(role, LogKind.USER_MESSAGE)
    if isinstance(kind, str):
        word = kind.strip().lower().replace("_", "-")
        if word in LogKind.__members__.values():
            return LogKind(word)
        if word in _OLD_WORDS:
            return _OLD_WORDS[word]
    allowed = ", ".join(k.value for k in LogKind)
    raise InvalidInput(f"kind {kind!r} is not a log entry kind; use one of: {allowed} (or "
                       "omit it to take the kind from the role).", field="kind",
                       allowed=[k.value for k in LogKind])


def kind_and_role(kind: str | None, role: str | None) -> tuple[LogKind, str]:
    """(log kind, speaker role) of an observation: either may be left out and follows from the
    other (neither: a user message). Raises InvalidInput for an unknown kind."""
    if role is None:
        log_kind = parse_log_kind(kind)
        return log_kind, kind_role(log_kind)
    return parse_log_kind(kind, role), role


def kind_role(kind: LogKind) -> str:
    """The role a source of ``kind`` speaks with when the caller names none (derive learns
    about the user only from role ``user``)."""
    return {LogKind.USER_MESSAGE: "user", LogKind.AGENT_MESSAGE: "assistant",
            LogKind.SYSTEM_MESSAGE: "system", LogKind.TOOL_CALL: "tool",
            LogKind.TOOL_RESULT: "tool"}.get(kind, "agent")


KIND_ROLES: dict[LogKind, frozenset[str]] = {
    LogKind.USER_MESSAGE: frozenset({"user", "owner"}),
    LogKind.AGENT_MESSAGE: frozenset({"assistant", "agent"}),
    LogKind.SYSTEM_MESSAGE: frozenset({"system", "owner"})}
"""The speakers a message kind allows (the schema: a user-message is the user's words, an
agent-message the agent's, a system-message the system's). Any other kind takes any role but
``user``: only a user-message is the user's own words, which derive learns facts from."""


def check_kind_role(kind: str, role: str) -> None:
    """Refuses a role that contradicts the kind (``agent-message`` spoken by ``user`` would make
    the agent's words facts about the user).

    Raises:
        InvalidInput: ``field`` ``role``; the message names the roles the kind allows.
    """
    if kind not in LogKind.__members__.values():
        return  # an unknown kind is refused by its own check
    log_kind = LogKind(kind)
    allowed = KIND_ROLES.get(log_kind)
    if allowed is None and role != "user" or allowed is not None and role in allowed:
        return
    hint = (f"use role {' or '.join(sorted(allowed))}" if allowed is not None
            else "a user's words are a user-message")
    raise InvalidInput(f"role {role!r} contradicts kind {log_kind.value!r} ({hint}); give "
                       "the kind that says who spoke, or leave one of them out.", field="role",
                       reason="role contradicts kind")


def with_role(payload: dict[str, Any], kind: LogKind, role: str) -> dict[str, Any]:
    """The payload carrying ``role`` when it is not the kind's own (:func:`kind_role`), so the
    role is covered by the entry's hash (an owner's user-message gets ``"role": "owner"``).

    Raises:
        InvalidInput: the payload has a ``role`` other than ``role``.
    """
    if "role" in payload:
        if payload["role"] != role:
            raise InvalidInput(f"payload.role {payload['role']!r} differs from role {role!r}; "
                               "give the role once.", field="payload")
        return payload
    return payload if role == kind_role(kind) else {**payload, "role": role}


def payload_role(payload: Mapping[str, Any], kind: str) -> Any:
    """The role an entry's payload commits to (its ``role``, else the kind's own)."""
    if "role" in payload:
        return payload["role"]
    return kind_role(LogKind(kind)) if kind in LogKind.__members__.values() else None


def legacy_kind(stored_kind: str | None, role: str | None) -> LogKind:
    """The schema kind of a stored row, old free-form kinds included (falls back to role)."""
    try:
        return parse_log_kind(stored_kind, role or "user")
    except InvalidInput:
        return ROLE_KINDS.get(role or "user", LogKind.USER_MESSAGE)


def scope_object(tenant_id: str, scope: str) -> dict[str, str]:
    """The schema's Scope object of a remem scope handle in a tenant.

    ``agent:<id>`` (a remem extension; the object allows no other field) becomes
    ``userId: "agent:<id>"``.
    """
    s = Scope.parse(scope)
    if s.kind is ScopeKind.AGENT:
        return {"tenantId": tenant_id, "userId": AGENT_USER_PREFIX + s.id}
    return {"tenantId": tenant_id, _SCOPE_FIELDS[s.kind]: s.id}


def scope_from_object(obj: Any) -> tuple[str, str]:
    """(tenant id, remem scope handle) of a Scope object with a tenant and exactly one more
    field.

    Raises:
        InvalidInput: not an object, no tenantId, unknown field, or not exactly one scope field.
    """
    if not isinstance(obj, Mapping) or not isinstance(obj.get("tenantId"), str) \
            or not obj["tenantId"]:
        raise InvalidInput("scope must be an object with a non-empty tenantId.", field="scope")
    names = {v: k for k, v in _SCOPE_FIELDS.items()}
    rest = {k: v for k, v in obj.items() if k != "tenantId"}
    unknown = sorted(set(rest) - set(names))
    if unknown or len(rest) != 1:
        raise InvalidInput("scope must name exactly one of userId, orgId, projectId, threadId, "
                           f"sessionId besides tenantId (got {sorted(rest)}).", field="scope")
    field, value = next(iter(rest.items()))
    kind = names[field]
    if kind is ScopeKind.USER and isinstance(value, str) and value.startswith(AGENT_USER_PREFIX):
        kind, value = ScopeKind.AGENT, value[len(AGENT_USER_PREFIX):]
    return obj["tenantId"], str(Scope.parse(f"{kind.value}:{value}"))


def check_payload(payload: Any) -> dict[str, Any]:
    """A payload object as given (unknown fields kept).

    Raises:
        InvalidInput: not a JSON object, not canonical JSON, or over 65,536 canonical bytes.
    """
    if not isinstance(payload, dict):
        raise InvalidInput("payload must be a JSON object (kind-specific fields, e.g. "
                           '{"text": ...} for a message).', field="payload")
    size = len(canonical_json(payload))
    if size > MAX_PAYLOAD_BYTES:
        raise InvalidInput(f"payload is {size} bytes as canonical JSON; at most "
                           f"{MAX_PAYLOAD_BYTES} are allowed.", field="payload")
    return payload


def payload_text(payload: Mapping[str, Any]) -> str:
    """The searchable text of a payload: its ``text`` when a string (messages), else its
    canonical JSON (a tool call's name and arguments, an event's fields)."""
    text = payload.get("text")
    return text if isinstance(text, str) else canonical_json(dict(payload)).decode("utf-8")


def entry_payload(text: Any, payload: Any) -> tuple[dict[str, Any], Any]:
    """(payload, searchable text) of an observation given as text, payload or both.

    Text alone becomes ``{"text": text}``; a payload without ``text`` gets the given text
    under ``text``; a payload alone keeps its fields and yields :func:`payload_text`.

    Raises:
        InvalidInput: neither given, a payload that is not an object (see
            :func:`check_payload`), or a payload ``text`` that differs from ``text``.
    """
    if payload is None:
        if not isinstance(text, str) or not text.strip():
            raise InvalidInput("text is empty; give the captured input to record (or a "
                               "payload object).", field="text")
        return {"text": text}, text
    payload = check_payload(payload)
    if text is None:
        return payload, payload_text(payload)
    if "text" in payload and payload["text"] != text:
        raise InvalidInput("payload.text differs from text; give the text once.",
                           field="payload")
    return check_payload({**payload, "text": text}), text


def content_hash(payload: Any) -> str:
    """``sha256:`` + hex sha256 of the canonical payload alone (the schema's contentHash)."""
    return "sha256:" + sha256_hex(canonical_json(payload))


def payload_digest(salt: bytes, payload: Any) -> str:
    """``sha256:`` + sha256(salt || canonical payload): what entryHash commits to."""
    return "sha256:" + salted_digest(salt, payload)


def hashed_body(row: Mapping[str, Any]) -> dict[str, Any]:
    """The object entryHash is computed over, from a schema-format row."""
    body = {"id": row["source_id"], "kind": row["kind"],
            "scope": scope_object(row["tenant_id"], row["scope"]), "runId": row["run_id"],
            "actor": row.get("actor"), "timestamp": row["occurred_at"],
            "sequence": row["sequence"], "payloadDigest": row["digest"],
            "prevHash": row["prev_hash"]}
    if body["actor"] is None:
        del body["actor"]
    return body


def log_entry_hash(row: Mapping[str, Any]) -> str:
    """``sha256:`` + hex sha256 of the canonical :func:`hashed_body` of a row."""
    return "sha256:" + sha256_hex(canonical_json(hashed_body(row)))


def prefixed(hash_hex: str) -> str:
    """A legacy bare-hex hash in the schema's ``sha256:`` form (already prefixed: as is)."""
    return hash_hex if hash_hex.startswith("sha256:") else "sha256:" + hash_hex


def stored_payload(row: Mapping[str, Any]) -> dict[str, Any] | None:
    """The row's payload (None when erased); a legacy row's text as ``{"text": ...}``."""
    raw = row.get("payload")
    if raw is not None:
        return json.loads(raw) if isinstance(raw, (str, bytes, bytearray)) else dict(raw)
    text = row.get("text")
    return {"text": text} if text is not None else None


def log_entry_record(row: Mapping[str, Any]) -> dict[str, Any]:
    """The exact schema JSON (``$defs/LogEntry``) of a stored source row.

    Args:
        row: a ``sources`` row (``stores.sql.sources``) with ``tenant_id`` (a legacy row
            without one takes :data:`DEFAULT_TENANT`).

    Returns:
        A dict with exactly the schema's fields: payload and contentHash are left out once the
        payload was erased; actor and causedByLogId when the entry has none. A legacy row's
        hashes get the ``sha256:`` prefix (they still verify by the legacy rule only).
    """
    fmt = row.get("log_format") or LEGACY_FORMAT
    kind = row["kind"] if fmt != LEGACY_FORMAT else legacy_kind(row.get("kind"), row.get("role"))
    rec: dict[str, Any] = {
        "id": row["source_id"], "kind": str(kind),
        "scope": scope_object(row.get("tenant_id") or DEFAULT_TENANT, row["scope"]),
        "runId": row["run_id"], "timestamp": row["occurred_at"], "sequence": row["sequence"],
        "prevHash": prefixed(row["prev_hash"]), "entryHash": prefixed(row["entry_hash"])}
    if row.get("actor") is not None:
        rec["actor"] = row["actor"]
    payload = stored_payload(row)
    if payload is not None:
        rec["payload"] = payload
        rec["contentHash"] = row.get("content_hash") or content_hash(payload)
    if row.get("caused_by") is not None:
        rec["causedByLogId"] = row["caused_by"]
    return rec


def log_entry_from_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """A source row from a schema record (an import). The salt behind a record's entryHash
    never leaves remem, so the row is :data:`IMPORTED_FORMAT`: its hashes are kept as given,
    and ``verify`` checks its links, sequence and contentHash.

    Returns:
        Row fields: source_id, tenant_id, scope, run_id, sequence, kind, role, actor,
        occurred_at, payload (canonical JSON text or None), text (``payload_text``),
        content_hash, caused_by, prev_hash, entry_hash, digest (``""``: unknown), salt
        (None), log_format (3).

    Raises:
        InvalidInput: a field the schema requires is missing or of the wrong type, an unknown
            field, a kind outside the 13, a contentHash that does not match the payload.
    """
    if not isinstance(record, Mapping):
        raise InvalidInput("a log entry must be a JSON object.", field="record")
    allowed = {"id", "kind", "scope", "runId", "actor", "timestamp", "sequence", "payload",
               "contentHash", "prevHash", "entryHash", "causedByLogId"}
    unknown = sorted(set(record) - allowed)
    if unknown:
        raise InvalidInput(f"log entry has unknown fields {unknown}.", field=unknown[0])
    for name, typ in (("id", str), ("runId", str), ("timestamp", str), ("prevHash", str),
                      ("entryHash", str), ("sequence", int)):
        v = record.get(name)
        if not isinstance(v, typ) or isinstance(v, bool) or v == "":
            raise InvalidInput(f"log entry field {name!r} is missing or not a "
                               f"{typ.__name__}.", field=name)
    if record["sequence"] < 0:
        raise InvalidInput("sequence must be 0 or more.", field="sequence")
    kind = LogKind(parse_log_kind(record.get("kind")))
    if record.get("kind") != kind.value:
        raise InvalidInput(f"kind {record.get('kind')!r} is not one of the 13 kinds.",
                           field="kind")
    tenant_id, scope = scope_from_object(record.get("scope"))
    payload = record.get("payload")
    chash = None
    if payload is not None:
        chash = content_hash(check_payload(payload))
        if record.get("contentHash") not in (None, chash):
            raise InvalidInput("contentHash does not match the payload.", field="contentHash")
    return {"source_id": record["id"], "tenant_id": tenant_id, "scope": scope,
            "run_id": record["runId"], "sequence": record["sequence"], "kind": kind.value,
            "role": payload.get("role", kind_role(kind)) if isinstance(payload, dict)
            and isinstance(payload.get("role"), str) else kind_role(kind),
            "actor": record.get("actor"),
            "occurred_at": record["timestamp"],
            "payload": canonical_json(payload).decode() if payload is not None else None,
            "text": payload_text(payload) if payload is not None else None,
            "content_hash": chash,
            "caused_by": record.get("causedByLogId"), "prev_hash": record["prevHash"],
            "entry_hash": record["entryHash"], "digest": "", "salt": None,
            "log_format": IMPORTED_FORMAT}

