"""Wire models of the HTTP API (pydantic 2): request bodies and response shapes.

Request models forbid unknown fields; the service still validates every limit (instantKV)
before writing. Response models mirror the service result dataclasses' ``to_dict``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, AwareDatetime, BaseModel, ConfigDict, Field, StrictInt

from remem.domain.limits import MAX_QUOTE_BYTES, MAX_SOURCE_ID_BYTES
from remem.service.cached_source import CachedSource

#: Documented (not enforced here): the service checks scopes and keys and answers 400 with a
#: message naming the field, the problem and the fix. A scope handle's id has no whitespace,
#: control characters, '/' or '*' (never a wildcard) and is in Unicode NFC.
SCOPE_PATTERN = r"^(agent|user|org|project|thread|session):[^\s:*/][^\s*/]{0,126}$"
KEY_PATTERN = r"^[a-z][a-z0-9_]{0,127}$"
ScopeStr = Field(min_length=3, max_length=128, examples=["user:alice"],
                 json_schema_extra={"pattern": SCOPE_PATTERN},
                 description="Scope handle '<kind>:<id>': agent, user, org, project, thread, "
                             "session.")
KeyStr = Field(min_length=1, max_length=128, examples=["home_city"],
               json_schema_extra={"pattern": KEY_PATTERN},
               description="snake_case topic name.")
MetadataField = Field(default=None, examples=[{"app": "crm", "priority": 2}],
                      description="Item metadata: a JSON object of at most 32 keys "
                      "([A-Za-z_][A-Za-z0-9_.-]{0,63}) and 2,048 bytes; values are strings, "
                      "numbers, booleans, null or lists of those. Omitted on a correction: "
                      "the corrected item's metadata is kept.")
FiltersField = Field(default=None, examples=[{"kind": "fact", "metadata": {
    "app": "crm", "priority": {"gte": 2}}, "valid_at": "last 7 days"}],
    description="Conditions that must all hold: kind, key, status (a value or {eq|ne|in|nin}), "
    "valid_at and recorded_at windows ('last N days' or {gte|gt|lte|lt: ISO 8601 | 'now' | "
    "'N days ago'}) and metadata (field: value or {eq|ne|in|nin|gt|gte|lt|lte|exists}). "
    "Unknown fields or operators give 400 invalid_input.")
ModeField = Field(default="hybrid", max_length=16, examples=["hybrid"],
                  description="hybrid (full text + vectors + key), lexical (full text + key) "
                  "or vector (vectors only); anything else gives 400 invalid_input.")
NowField = Field(default=None, description="The time relative filter times resolve against "
                 "(default: the server clock).")
IdemStr = Field(default=None, min_length=1, max_length=256,
                description="Same key + same request -> the original result (replayed=true); "
                            "same key + different request -> 409 idempotency_conflict.")


def _in_utc(value: datetime) -> datetime:
    try:
        return value.astimezone(UTC)
    except OverflowError as exc:
        raise ValueError("time is outside the years 1-9999 in UTC") from exc


#: An ISO-8601 time with a zone, converted to UTC (422 without a zone or out of range).
UtcDatetime = Annotated[AwareDatetime, AfterValidator(_in_utc)]


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Out(BaseModel):
    model_config = ConfigDict(extra="allow")


# --- errors -------------------------------------------------------------------------------
class ErrorBody(BaseModel):
    code: str = Field(examples=["revision_mismatch"])
    message: str
    retryable: bool
    details: dict[str, Any]


class ErrorOut(BaseModel):
    """The one error shape of every non-2xx response."""

    error: ErrorBody


# --- requests -----------------------------------------------------------------------------
class SourceIn(_In):
    id: str | None = Field(default=None, max_length=MAX_SOURCE_ID_BYTES)
    text: str | None = Field(default=None, max_length=MAX_QUOTE_BYTES,
                             description="The grounded quote.")
    role: str | None = Field(default=None, max_length=32, examples=["user"])
    occurred_at: UtcDatetime | None = None


class RememberIn(_In):
    scope: str = ScopeStr
    key: str = KeyStr
    value: Any = Field(description="JSON value, at most 1,024 bytes.", examples=["Paris"])
    kind: str | None = Field(default=None, max_length=32, examples=["profile_slot"])
    valid_at: UtcDatetime | None = None
    valid_until: UtcDatetime | None = None
    source: SourceIn | None = None
    idempotency_key: str | None = IdemStr
    metadata: dict[str, Any] | None = MetadataField
    priority: StrictInt | None = Field(default=None, ge=0, le=100, description="Higher is more "
                                 "important; the same claim with another priority revises "
                                 "the item (item.revised).")
    cached_source: CachedSource | None = Field(
        default=None, description="Makes the item a Kind-B cached fact: the Log+Facts Source "
        "block {kind, uri, freshness {ttlSeconds, lastVerifiedAt, etag, sourceVersion}, "
        "refresh {strategy, handler, priority}} (docs/cached-facts.md).")


class RefreshOut(_Out):
    """What a refresh of a cached fact did."""

    item_id: str
    state: str = Field(examples=["changed"], description="unchanged | changed | failed | "
                       "skipped (not a current cached fact)")
    new_item_id: str | None = None
    stale: bool | None = None
    reason: str | None = None


MAX_REVISION = 2**53 - 1
"""The largest revision a request may name (the largest integer JSON carries exactly)."""


class CorrectIn(_In):
    value: Any = Field(description="The corrected JSON value.")
    expected_revision: StrictInt = Field(ge=0, le=MAX_REVISION, description="The key's "
                                         "revision as last read; a "
                                   "different current revision gives 409 revision_mismatch.")
    kind: str | None = Field(default=None, max_length=32)
    source: SourceIn | None = None
    idempotency_key: str | None = IdemStr
    metadata: dict[str, Any] | None = MetadataField


class HoldIn(_In):
    hold: bool = Field(default=True, description="false releases the hold.")


class ForgetScopeIn(_In):
    """Forget a whole scope: the scope is required (there is no memory-wide form)."""

    scope: str = ScopeStr


class RetentionIn(_In):
    keep_until: UtcDatetime | None = None
    keep_days: int | None = Field(default=None, ge=1, le=365_000)


class ResolveIn(_In):
    keep: str = Field(min_length=1, max_length=128, description="Item id to keep current.")


class MemoryCreateIn(_In):
    memory_id: str = Field(min_length=1, max_length=128, examples=["m1"])
    config: dict[str, Any] | None = None
    tenant_id: str | None = Field(
        default=None, min_length=1, max_length=128, examples=["acme"],
        description="The tenant the memory belongs to (Log+Facts tenantId); default: the "
                    "token's tenant. A token creates memories in its own tenant only.")


class TokenCreateIn(_In):
    role: Literal["reader", "writer", "admin"]
    subject: str = Field(min_length=1, max_length=128, examples=["user:alice"],
                         json_schema_extra={"pattern": f"^admin$|{SCOPE_PATTERN}"},
                         description="'admin' or a scope handle.")
    label: str | None = Field(default=None, max_length=256)


# --- responses ----------------------------------------------------------------------------
class ItemOut(_Out):
    item_id: str
    scope: str
    key: str
    value: Any
    kind: str
    status: str
    revision: int
    valid_at: str
    invalid_at: str | None
    valid_until: str | None
    quote: str | None
    source_id: str | None
    source_role: str | None
    claim_id: str
    superseded_by: str | None
    conflict_group: str | None
    created_at: str
    last_confirmed_at: str
    seen_count: int
    legal_hold: bool
    keep_until: str | None
    metadata: dict[str, Any] | None = None
    priority: int | None = None


class PageOut(BaseModel):
    items: list[ItemOut]
    next_cursor: str | None = Field(description="None only when nothing more matches.")
    total: int = Field(description="How many items match the filters over every page.")


class WriteResultOut(_Out):
    outcome: str = Field(examples=["created"])
    scope: str
    key: str
    revision: int
    item_id: str | None = None
    claim_id: str | None = None
    status: str | None = None
    conflict_group: str | None = None
    replayed: bool = False


class InspectionOut(_Out):
    scope: str
    key: str
    state: str
    revision: int
    cardinality: str | None
    value: Any
    current: list[ItemOut]
    history: list[ItemOut]
    conflicts: list[ItemOut]
    kind: str | None = None
    source: dict[str, Any] | None = None
    valid_until: str | None = None


class HistoryOut(_Out):
    item: ItemOut
    versions: list[ItemOut]
    provenance: list[dict[str, Any]]
    events: list[dict[str, Any]]


class SurfaceOut(_Out):
    erased: int
    state: str


class ErasureReportOut(_Out):
    state: str = Field(examples=["completed"])
    mode: str
    items: list[str]
    tombstones: int
    surfaces: dict[str, SurfaceOut]
    actor: str


class ItemStateOut(_Out):
    item_id: str
    status: str | None = None
    revision: int | None = None


class HoldOut(_Out):
    item_id: str
    legal_hold: bool


class RetentionOut(_Out):
    item_id: str
    keep_until: str | None


class ConflictGroupOut(_Out):
    group_id: str
    scope: str
    key: str
    items: list[ItemOut]


class ResolveOut(_Out):
    group_id: str
    kept: str
    revision: int


class JobErrorOut(_Out):
    job_id: str
    kind: str
    state: str
    at: str
    error: str | None = Field(description="One line, no SQL, hosts, paths or stacks.")


class IndexHealthOut(_Out):
    """Derive/index jobs of the memory (issue 13.5)."""

    state: str = Field(description="healthy | pending | failing")
    pending: int = Field(description="Due queued and running jobs.")
    failed: int = Field(description="Jobs closed as failed.")
    jobs: dict[str, dict[str, int]] = Field(
        description="Per job kind: pending, running, scheduled, failed.")
    oldest_pending_age_s: float | None = None
    last_error: JobErrorOut | None = None
    receipts: dict[str, int] = Field(description="Receipts per phase.")
class RunOut(_Out):
    """A job run: derive, consolidate or retention; ``reason`` says why a failed run failed."""

    run_id: str
    kind: str
    status: str
    started_at: str
    finished_at: str | None = None
    reason: str | None = None


class ScheduledJobOut(_Out):
    """A slot job brought forward (resummarize)."""

    job_id: str
    kind: str
    run_at: str


class StatusOut(_Out):
    memory: str
    tenant: str | None = None
    head_seq: int
    items: dict[str, int]
    index_health: IndexHealthOut | None = None
    runs: list[RunOut] = []
    failed_runs: list[RunOut] = []


class ApplyResultOut(_Out):
    index: int
    receipt: dict[str, Any] | None = None
    error: ErrorBody | None = None
    next_action: str


class ApplyOut(_Out):
    applied: bool
    ok: bool
    results: list[ApplyResultOut]


class MemoryOut(_Out):
    memory_id: str
    config: dict[str, Any]
    tenant_id: str | None = None


class MemoryDeletedOut(_Out):
    memory_id: str
    deleted: bool
    rows: dict[str, int]


class TokenOut(_Out):
    token_id: str
    memory_id: str
    role: str
    subject: str
    label: str | None
    created_at: str
    revoked_at: str | None
    tenant_id: str | None = None


class TokenCreatedOut(TokenOut):
    token: str = Field(description="The bearer token; shown once, store it now.")


class HealthOut(BaseModel):
    ok: bool


# --- instantKV apply (documented here, parsed strictly by service.apply) -----------------
def _apply_body_schema() -> dict[str, Any]:
    from remem.domain.limits import MAX_PROPOSALS
    from remem.domain.model import Kind

    source = {"type": "object", "additionalProperties": False, "properties": {
        "id": {"type": "string", "maxLength": MAX_SOURCE_ID_BYTES},
        "text": {"type": "string", "maxLength": MAX_QUOTE_BYTES},
        "role": {"type": "string"}, "occurred_at_ms": {"type": "integer"}}}
    proposal = {
        "type": "object", "additionalProperties": False,
        "required": ["entity", "attribute", "value", "kind", "operation"],
        "properties": {
            "entity": {"type": "string", "pattern": f"^(user|self)$|{SCOPE_PATTERN}",
                       "description": "A scope handle, or 'user'/'self' for the default scope."},
            "attribute": {"type": "string", "pattern": KEY_PATTERN},
            "value": {"description": "JSON value, at most 1,024 bytes."},
            "kind": {"enum": [k.value for k in Kind]},
            "operation": {"enum": ["assert", "correct"]},
            "source": source,
            "valid_until_ms": {"type": ["integer", "null"]},
            "expected_revision": {"type": "integer", "minimum": 0,
                                  "description": "Required for operation 'correct'."}}}
    envelope = {
        "type": "object", "additionalProperties": False, "required": ["proposals", "applied"],
        "properties": {"proposals": {"type": "array", "minItems": 1, "maxItems": MAX_PROPOSALS,
                                     "items": proposal},
                       "applied": {"const": False}}}
    return {"description": "One instantKV proposal, or the envelope {\"proposals\": [...], "
                           "\"applied\": false}. Duplicate JSON fields are refused.",
            "anyOf": [proposal, envelope]}


APPLY_BODY_SCHEMA = _apply_body_schema()


# --- observe, recall, context, profile ----------------------------------------------------
#: The schema LogEntry fields every observe-like request takes (observe, a batch turn, KIP
#: staging); the service checks them (``domain.logentry``).
LogKindField = Field(default=None, max_length=64, description=(
    "Log entry kind, one of: user-message, agent-message, system-message, tool-call, "
    "tool-result, internal-thought, retrieval, artifact-produced, event-emitted, "
    "event-received, guardrail-triggered, wait-suspended, wait-resumed (default: from the "
    "role)."))
PayloadField = Field(default=None, description=(
    "The kind-specific payload object (<= 65,536 bytes as canonical JSON); unknown fields "
    "are kept; the text goes in as 'text'."))
CausedByField = Field(default=None, min_length=1, max_length=512,
                      description="The source (log entry) that caused it.")
Scopes = Field(min_length=1, max_length=16, examples=[["user:alice", "agent:bot"]],
               description="Every scope to read, each visible to the token; nothing is "
                           "widened.")


class ObserveIn(_In):
    scope: str = ScopeStr
    text: str | None = Field(default=None, min_length=1, max_length=16_384,
                             description="The captured input (<= 16,384 UTF-8 bytes); "
                             "optional when a payload is given.")
    role: str | None = Field(default=None, max_length=32,
                             description="Speaker role (default: from the kind, else user).")
    source_id: str | None = Field(default=None, max_length=MAX_SOURCE_ID_BYTES)
    run_id: str | None = Field(default=None, max_length=256)
    occurred_at: UtcDatetime | None = None
    kind: str | None = LogKindField
    payload: dict[str, Any] | None = PayloadField
    caused_by_log_id: str | None = CausedByField
    idempotency_key: str | None = IdemStr
    metadata: dict[str, Any] | None = Field(
        default=None, description="Metadata kept with the source and inherited by the facts "
        "derived from it (same limits as an item's).")
    priority: StrictInt | None = Field(default=None, ge=0, le=100, description="Priority of the "
                                 "facts derived from this source (higher is more important).")


class ObserveTurnIn(_In):
    """One turn of an ``observe_many`` batch (``observe``'s fields; ``id`` is the source id)."""

    text: str = Field(min_length=1, max_length=16_384, description="The captured input "
                      "(<= 16,384 UTF-8 bytes).")
    id: str | None = Field(default=None, max_length=MAX_SOURCE_ID_BYTES)
    role: str | None = Field(default=None, max_length=32, description="Default: from the "
                             "kind (user for user-message).")
    actor: str | None = Field(default=None, max_length=256)
    occurred_at: UtcDatetime | None = None
    kind: str | None = LogKindField
    idempotency_key: str | None = IdemStr
    metadata: dict[str, Any] | None = None
    payload: dict[str, Any] | None = PayloadField
    caused_by_log_id: str | None = CausedByField


#: Most turns one HTTP ``observe_many`` request takes (one transaction).
MAX_HTTP_OBSERVE_MANY = 256


class ObserveManyIn(_In):
    scope: str = ScopeStr
    turns: list[ObserveTurnIn] = Field(min_length=1, max_length=MAX_HTTP_OBSERVE_MANY)
    run_id: str | None = Field(default=None, max_length=256)


class RecallIn(_In):
    scopes: list[str] = Scopes
    query: str = Field(min_length=1, max_length=16_384)
    budget_tokens: int = Field(ge=1, le=1_000_000)
    tokenizer: str = Field(default="o200k_base", max_length=64)
    valid_at: UtcDatetime | None = None
    kinds: list[str] | None = Field(default=None, max_length=16)
    include_history: bool = False
    limit: int = Field(default=30, ge=1, le=1000)
    after: list[str] = Field(default_factory=list, max_length=128,
                             description="Receipts that must be available first (barrier).")
    deadline_ms: int = Field(default=0, ge=0, le=60_000)
    mode: str = ModeField
    filters: dict[str, Any] | None = FiltersField
    now: UtcDatetime | None = NowField


class ContextIn(_In):
    scopes: list[str] = Scopes
    query: str = Field(min_length=1, max_length=16_384)
    max_bytes: int = Field(default=8192, ge=1, le=1_000_000)
    kinds: list[str] | None = Field(default=None, max_length=16)
    valid_at: UtcDatetime | None = None
    mode: str = ModeField
    filters: dict[str, Any] | None = FiltersField
    now: UtcDatetime | None = NowField


class ReceiptOut(_Out):
    receipt_id: str
    source_id: str
    phase: str = Field(examples=["recorded"])
    accepted_seq: int
    resolved_seq: int | None = None
    available_seq: int | None = None
    disposition: str | None = None
    reason: str | None = None
    replayed: bool = False


class ObserveManyOut(_Out):
    receipts: list[ReceiptOut]


class RecallOut(_Out):
    """The measured document: its serialisation is at most ``budget_tokens`` tokens."""

    status: str = Field(examples=["succeeded"])
    action_eligible: bool
    basis_seq: int
    truncated: bool
    coverage: dict[str, str]
    items: list[dict[str, Any]]
    sources: list[dict[str, Any]]
    text: str


class ContextOut(_Out):
    max_bytes: int
    items: list[dict[str, Any]]
    truncated: bool


class ProfileOut(_Out):
    """Byte-identical for the same activation id until the next activation."""

    activation_id: str | None
    basis_seq: int
    truncated: bool
    items: list[dict[str, Any]]
    text: str


class StageSourceIn(_In):
    """A host-captured source staged for KIP ``{source_ref}`` requests."""

    scope: str = ScopeStr
    source_ref: str = Field(min_length=1, max_length=MAX_SOURCE_ID_BYTES,
                            description="The host's identity of the source.")
    text: str = Field(min_length=1, max_length=16_384, description="The exact captured text "
                      "(<= 16,384 UTF-8 bytes).")
    digest: str | None = Field(default=None, pattern="^sha256:[0-9a-f]{64}$",
                               description="sha256 of the text's UTF-8 bytes; checked.")
    role: str = Field(default="user", max_length=32)
    actor: str | None = Field(default=None, max_length=256)
    occurred_at: UtcDatetime | None = None
    run_id: str | None = Field(default=None, max_length=256)
    kind: str | None = LogKindField
    payload: dict[str, Any] | None = PayloadField
    caused_by_log_id: str | None = CausedByField
