"""The remem error tree: every failure a caller can see, with a stable code.

Each class carries ``code`` (a stable snake_case string used by the CLI ``--json`` output and the
HTTP API), ``retryable`` (whether the same call may succeed later unchanged) and ``http_status``.
Messages say what happened and what to do.

::

    RememError
    ├── InvalidInput                 bad input; nothing was written (instantKV limits)
    │   ├── ConfigInvalid            memory config fails its JSON Schema
    │   └── RequestTooLarge          an HTTP request body over the size limit (413)
    ├── NotFound                     no such memory / item / conflict / receipt
    │   └── NotFoundOrNotVisible     existence-neutral (KIP): missing or not visible to the caller
    ├── AlreadyExists                create of an existing memory
    ├── Conflict-like (409)
    │   ├── RevisionMismatch         expected_revision differs from the current revision
    │   ├── IdempotencyConflict      same idempotency key, different meaning
    │   ├── ClaimForgotten           an automatic path tried to learn a tombstoned claim
    │   └── PreconditionFailed       a read precondition cannot hold (KIP)
    ├── HeadMoved                    ledger head moved under an append (retryable)
    ├── Unauthenticated              missing, malformed, unknown or revoked bearer token (401)
    ├── PermissionDenied             authority check failed (e.g. ForgetMemory on a rule)
    ├── LegalHoldActive              erasure blocked by a legal hold
    ├── UnsupportedCapability        unknown tokenizer, embedder, requires bundle
    ├── ResultLimitExceeded          required output cannot fit the budget
    ├── SlotFull                     an instantKV slot's history/conflicts/receipts/bytes bound
    ├── EmbeddingMismatch            memory's embedding model differs from the configured one
    ├── IntegrityError               a hash chain is broken
    ├── ExtractionFailed             a model reply did not parse or validate
    ├── ArtifactUnavailable          a model file or optional package is missing
    └── StoreUnavailable             the database cannot be opened or reached
"""

from __future__ import annotations

from typing import Any


class RememError(Exception):
    """Base of every remem error.

    Attributes:
        code: stable machine-readable code.
        retryable: whether retrying the identical call later may succeed.
        http_status: HTTP status code the API maps this error to.
        details: JSON-serialisable context (field names, revisions, ids); never memory text
            beyond what the caller sent.
    """

    code = "remem_error"
    retryable = False
    http_status = 500

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def to_dict(self) -> dict[str, Any]:
        """The one JSON error shape: ``{"code", "message", "retryable", "details"}``."""
        return {
            "code": self.code,
            "message": self.message,
            "retryable": self.retryable,
            "details": self.details,
        }


class InvalidInput(RememError):
    code = "invalid_input"
    http_status = 400


class ConfigInvalid(InvalidInput):
    code = "config_invalid"


class NotFound(RememError):
    code = "not_found"
    http_status = 404


class NotFoundOrNotVisible(NotFound):
    code = "not_found_or_not_visible"


class AlreadyExists(RememError):
    code = "already_exists"
    http_status = 409


class RevisionMismatch(RememError):
    code = "revision_mismatch"
    http_status = 409


class IdempotencyConflict(RememError):
    code = "idempotency_conflict"
    http_status = 409


class ClaimForgotten(RememError):
    code = "claim_forgotten"
    http_status = 409


class PreconditionFailed(RememError):
    code = "precondition_failed"
    http_status = 412


class CursorMismatch(RememError):
    code = "cursor_mismatch"
    http_status = 400


class HeadMoved(RememError):
    code = "head_moved"
    retryable = True
    http_status = 503


class Unauthenticated(RememError):
    code = "unauthenticated"
    http_status = 401


class RequestTooLarge(InvalidInput):
    code = "request_too_large"
    http_status = 413


class PermissionDenied(RememError):
    code = "permission_denied"
    http_status = 403


class LegalHoldActive(RememError):
    code = "legal_hold_active"
    http_status = 409


class UnsupportedCapability(RememError):
    code = "unsupported_capability"
    http_status = 422


class ResultLimitExceeded(RememError):
    code = "result_limit_exceeded"
    http_status = 413


class SlotFull(RememError):
    """A slot (scope, key) is at an instantKV bound (history, conflicts, replay receipts,
    metadata or content bytes); nothing was written."""

    code = "slot_full"
    http_status = 409


class EmbeddingMismatch(RememError):
    code = "embedding_mismatch"
    http_status = 409


class IntegrityError(RememError):
    code = "integrity_error"
    http_status = 500


class ExtractionFailed(RememError):
    code = "extraction_failed"
    http_status = 502


class ArtifactUnavailable(RememError):
    code = "artifact_unavailable"
    http_status = 503


class StoreUnavailable(RememError):
    code = "store_unavailable"
    retryable = True
    http_status = 503
