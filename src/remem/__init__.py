"""remem: long-term memory for LLM agents.

Typed, versioned, scoped claims on a hash-chained, text-free ledger; one pure decision for
every write; hybrid recall under a token budget; forgetting that erases every copy.

    import remem
    store = remem.open("memory.db")
    mem = store.create_memory("m1")
    mem.remember("user:alice", "home_city", "Paris", kind="profile_slot")
"""

from __future__ import annotations

from pathlib import Path

from remem.domain.model import Authority, Cardinality, ItemStatus, Kind, Scope, Source
from remem.errors import (
    AlreadyExists,
    ClaimForgotten,
    ConfigInvalid,
    EmbeddingMismatch,
    HeadMoved,
    IdempotencyConflict,
    InvalidInput,
    LegalHoldActive,
    NotFound,
    PermissionDenied,
    RememError,
    ResultLimitExceeded,
    RevisionMismatch,
    UnsupportedCapability,
)
from remem.service.memory import Memory
from remem.service.recall_results import (
    ContextResult,
    ProfileResult,
    RecallResult,
    SourceReceipt,
)
from remem.service.results import Inspection, ItemView, Page, WriteResult
from remem.service.store import RememStore


def open(url: str | Path, *, clock=None, derive: str = "inline", **options) -> RememStore:  # noqa: A001
    """Opens a database: a SQLite file path (created if missing) or a ``postgresql://`` URL.

    Args:
        url: file path, ``sqlite:///path`` or ``postgresql://...``.
        clock: injected clock (tests); the system clock by default.
        derive: ``inline`` runs derive jobs in-process right after observe (embedded default);
            ``worker`` leaves them to ``remem worker`` processes.

    Raises:
        InvalidInput: unsupported URL. StoreUnavailable: cannot open it.
    """
    from remem.stores import open_store

    return RememStore(open_store(url, **options), clock=clock, derive=derive)


__all__ = [
    "AlreadyExists",
    "Authority",
    "Cardinality",
    "ClaimForgotten",
    "ConfigInvalid",
    "ContextResult",
    "EmbeddingMismatch",
    "HeadMoved",
    "IdempotencyConflict",
    "Inspection",
    "InvalidInput",
    "ItemStatus",
    "ItemView",
    "Kind",
    "LegalHoldActive",
    "Memory",
    "NotFound",
    "Page",
    "PermissionDenied",
    "ProfileResult",
    "RecallResult",
    "RememError",
    "RememStore",
    "ResultLimitExceeded",
    "RevisionMismatch",
    "Scope",
    "Source",
    "SourceReceipt",
    "UnsupportedCapability",
    "WriteResult",
    "open",
]
