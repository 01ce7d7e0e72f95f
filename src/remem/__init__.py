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

from typing import TYPE_CHECKING

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

if TYPE_CHECKING:
    from remem.domain.model import Authority, Cardinality, ItemStatus, Kind, Scope, Source
    from remem.service.memory import Memory
    from remem.service.recall_results import (
        ContextResult,
        ProfileResult,
        RecallResult,
        SourceReceipt,
    )
    from remem.service.results import Inspection, ItemView, Page, WriteResult
    from remem.service.store import RememStore
    from remem.settings import ProviderRegistry, Settings

#: Public names imported on first use (PEP 562), so ``import remem`` and the command line's
#: start-up do not load the engine (numpy, onnxruntime's wrapper, jsonschema, pydantic) until
#: something needs it.
_LAZY = {
    "Authority": "remem.domain.model", "Cardinality": "remem.domain.model",
    "ItemStatus": "remem.domain.model", "Kind": "remem.domain.model",
    "Scope": "remem.domain.model", "Source": "remem.domain.model",
    "Memory": "remem.service.memory",
    "ContextResult": "remem.service.recall_results",
    "ProfileResult": "remem.service.recall_results",
    "RecallResult": "remem.service.recall_results",
    "SourceReceipt": "remem.service.recall_results",
    "Inspection": "remem.service.results", "ItemView": "remem.service.results",
    "Page": "remem.service.results", "WriteResult": "remem.service.results",
    "RememStore": "remem.service.store",
    "ProviderRegistry": "remem.settings", "Settings": "remem.settings",
    "load_settings": "remem.settings",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'remem' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def open(url: str | Path | Settings, *, clock=None, derive: str = "inline",  # noqa: A001
         providers=None, **options) -> RememStore:
    """Opens a database: a SQLite file path (created if missing) or a ``postgresql://`` URL.

    Args:
        url: file path, ``sqlite:///path`` or ``postgresql://...``; or a :class:`Settings`
            carrying the URL and the provider registry.
        clock: injected clock (tests); the system clock by default.
        derive: ``inline`` runs derive jobs in-process right after observe (embedded default);
            ``worker`` leaves them to ``remem worker`` processes.
        providers: the operator's model providers, ``{name: {"type": "openai", "base_url":
            ..., "api_key_env" | "api_key_file": ..., "timeout_s": ..., "models": [...]}}``
            (or a ``ProviderRegistry`` / ``Settings``). Memory configs pick one by name;
            ``rules`` and ``local`` always exist.

    Raises:
        InvalidInput: unsupported URL. ConfigInvalid: a bad provider entry.
        StoreUnavailable: cannot open it.
    """
    from remem.service.store import RememStore
    from remem.settings import Settings, coerce_settings
    from remem.stores import open_store

    if isinstance(url, Settings):
        settings, url = url, url.database_url
        if providers is not None:
            settings = Settings(database_url=url, providers=coerce_settings(providers).providers)
        if url is None:
            raise InvalidInput("Settings.database_url is not set; pass the database URL.",
                               field="url")
    else:
        settings = coerce_settings(providers)
    blob_dir = options.pop("blob_dir", None)  # fact blobs (stores.blobs); default: data dir
    return RememStore(open_store(url, **options), clock=clock, derive=derive,
                      providers=settings.providers, blob_dir=blob_dir)


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
    "ProviderRegistry",
    "ProfileResult",
    "RecallResult",
    "RememError",
    "RememStore",
    "ResultLimitExceeded",
    "RevisionMismatch",
    "Scope",
    "Settings",
    "Source",
    "SourceReceipt",
    "UnsupportedCapability",
    "WriteResult",
    "load_settings",
    "open",
]
