"""Ports: the small protocols the service layer talks to (STYLE.md habit 2).

Adapters live in ``stores/`` (Store) and ``providers/`` (everything that talks to a model or a
tokenizer). Core code never branches on an adapter's name; ``providers.registry`` picks them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from remem.domain.ledger import ChainBreak
    from remem.domain.fold import ItemRecord, Projection


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors.

    An embedder may also have ``embed_queries(texts)`` (same contract), which recall uses for
    search queries instead of :meth:`embed_batch` (the bundled model runs queries faster that
    way, within cosine 0.998 of the stored texts' vectors).

    Attributes:
        model_id: stable identifier recorded per memory, e.g. ``"minilm-l6-v2-int8"``.
        dimensions: vector length.
    """

    model_id: str
    dimensions: int

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        """Returns an array of shape ``[len(texts), dimensions]``, dtype float32, rows of norm 1."""
        ...


@runtime_checkable
class Tokenizer(Protocol):
    """Counts tokens the way a named model family does (tiktoken encodings)."""

    name: str

    def count(self, text: str) -> int:
        """Number of tokens in ``text``."""
        ...


class Clock(Protocol):
    """Source of the current time (aware UTC). Injected so the domain never reads the clock."""

    def now(self) -> datetime: ...


class UnitOfWork(Protocol):
    """One write transaction on one memory (``Store.unit_of_work``): everything staged
    commits together when the context exits normally, and nothing stays on an exception.

    Writers of one memory are serialised (SQLite: BEGIN IMMEDIATE; PostgreSQL: FOR UPDATE on
    the memory row); the ledger key (memory_id, seq) is the backstop.
    """

    def head(self) -> tuple[int, str]:
        """(seq, hash) of the last ledger event; (0, zero hash) when the ledger is empty."""
        ...

    def insert_events(self, stored: Sequence[dict[str, Any]]) -> None:
        """Inserts events chained by ``domain.ledger.chain`` (seq, prev_hash and hash set);
        the store computes nothing. ``service.writer.append_events`` chains and calls it.

        Raises:
            HeadMoved: another writer already holds one of the seqs (retryable).
        """
        ...

    def projection_for(self, scope: str, key: str, claim_id: str | None = None) -> Projection:
        """The read model of one (scope, key): items, revision, cardinality, tombstones;
        ``claim_id``: only that claim's items (a partial projection)."""
        ...

    def defer_inserts(self) -> None:
        """Holds ledger, label and payload rows until ``flush`` (a batch of decisions)."""
        ...

    def flush(self) -> None:
        """Inserts the held rows. Raises HeadMoved when another writer took a seq."""
        ...

    def save(self, p: Projection) -> None:
        """Writes the read-model rows the fold touched."""
        ...

    def put_payload(self, payload_id: str, item_id: str, value: Any, quote: str | None,
                    salt: bytes, metadata: dict[str, Any] | None = None,
                    fact: dict[str, Any] | None = None,
                    tz_offset_min: int | None = None) -> None:
        """Stores an item revision's value, quote and metadata beside the ledger; ``fact``:
        its fact attributes (``domain.fact.FactAttrs.to_json``) or None; ``tz_offset_min``:
        the UTC offset (minutes) its statement's time gave, for rendering dates, or None."""
        ...

    def payload_metadata(self, item_id: str) -> dict[str, Any] | None:
        """The metadata of an item's payload (None: none, or erased)."""
        ...

    def erase(self, item_ids: list[str], scopes: Sequence[str] | None,
              at: str) -> dict[str, Any]:
        """Erases every surface holding the items' text, redacting sources of ``scopes``
        (None: every scope) that name or contain the items, and records the scrub owed in
        the same transaction (``at``: the erasure time, ISO-8601 UTC); returns counts per
        surface plus ``_source_ids`` (the sources redacted)."""
        ...

    def content_refs(self, item_ids: Sequence[str]) -> list[str]:
        """Blob references (``BlobStore``) held by the items' payloads, every revision."""
        ...

    def idempotency_get(self, idem_key: str) -> tuple[str, dict[str, Any]] | None:
        """(digest, original result) stored under the key, or None."""
        ...

    def idempotency_put(self, idem_key: str, digest: str, result: dict[str, Any],
                        item_id: str | None, at: str) -> None:
        """Records the result of a mutation under its idempotency key."""
        ...


class SearchIndex(Protocol):
    """Recall storage of a store (``store.search_index``): sources, full text, vectors and
    pinned profile renders. ``read`` yields a snapshot (one consistent view) with ``head_seq,
    embedding, fts, vectors, key_items, items, payloads, source_refs, source,
    source_event_seq, sources, run_windows, pinned_items, profile_render, embedding_docs,
    vector_hashes``; ``writer`` wraps a unit of work with ``index_text, embedding,
    record_embedding, put_vectors, switch_model, drop_vectors_except, source, run_head,
    insert_source, run_windows, put_profile_render`` (see ``stores/sqlite/search.py``, mirrored by
    ``stores/postgres/search.py``; only the search methods differ per backend)."""

    def read(self, memory_id: str) -> AbstractContextManager[Any]: ...

    def in_transaction(self, uow: UnitOfWork) -> Any: ...

    def writer(self, uow: UnitOfWork) -> Any: ...

    def rebuild_text(self, memory_id: str, digests: bool = True) -> int: ...

    def verify_sources(self, memory_id: str) -> dict[str, Any]: ...


class JobStore(Protocol):
    """Intake's durable side: jobs (claimed under a lease; PostgreSQL uses FOR UPDATE SKIP
    LOCKED), runs, receipts. Methods taking ``conn`` run in the caller's unit of work
    (``uow.conn``)."""

    def enqueue_job(self, memory_id: str, kind: str, payload: dict[str, Any], *, run_at: str,
                    now: str, conn: Any = None, job_id: str) -> str:
        """Queues a job under the id the service minted; returns it."""
        ...

    def claim_job(self, worker: str, now: str, lease_until: str, *,
                  memory_id: str | None = None,
                  kinds: list[str] | None = None) -> dict[str, Any] | None: ...

    def finish_job(self, job_id: str, *, state: str, now: str, error: str | None = None,
                   run_at: str | None = None) -> None: ...

    def job_scheduled(self, memory_id: str, kind: str) -> dict[str, Any] | None: ...

    def job_health(self, memory_id: str, now: str) -> dict[str, Any]:
        """Open and failed jobs per kind, the oldest due open job's run_at, the last error."""
        ...

    def receipt_phases(self, memory_id: str) -> dict[str, int]:
        """Receipts counted per phase."""
        ...

    def reschedule_job(self, job_id: str, run_at: str, now: str) -> None: ...

    def start_run(self, memory_id: str, job_id: str, kind: str, worker: str, now: str, *,
                  run_id: str) -> str:
        """Records a running run under the id the service minted; returns it."""
        ...

    def finish_run(self, run_id: str, *, status: str, now: str, reason: str | None = None,
                   stats: dict[str, Any] | None = None) -> None: ...

    def receipt_by_key(self, memory_id: str, idem_key: str,
                       conn: Any = None) -> dict[str, Any] | None: ...

    def receipt(self, memory_id: str, receipt_id: str) -> dict[str, Any]: ...

    def insert_receipt(self, conn: Any, rec: dict[str, Any]) -> None: ...

    def advance_receipt(self, memory_id: str, receipt_id: str, *, phase: str, now: str,
                        resolved_seq: int | None = None, available_seq: int | None = None,
                        reason: str | None = None, disposition: str | None = None,
                        conn: Any = None) -> None: ...

    def source(self, memory_id: str, source_id: str) -> dict[str, Any] | None: ...

    def set_source_disposition(self, memory_id: str, source_id: str,
                               disposition: str) -> None: ...

    def live_keys(self, memory_id: str) -> list[tuple[str, str]]: ...

    def list_runs(self, memory_id: str, limit: int = 50) -> list[dict[str, Any]]: ...

    def insert_feedback(self, memory_id: str, rec: dict[str, Any]) -> None: ...

    def feedback_row(self, memory_id: str, feedback_id: str) -> dict[str, Any] | None: ...

    def erase_feedback(self, memory_id: str, scope: str, at: str) -> int:
        """Deletes the scope's feedback rows (forget of a whole scope); returns how many."""
        ...

    def items_from_source(self, memory_id: str, source_id: str) -> list[str]: ...

    def redact_source(self, memory_id: str, source_id: str, at: str) -> dict[str, int]:
        """Erases one source's text, salt, full-text row and vector (chain row kept); ``at``
        is the erasure time (ISO-8601 UTC)."""
        ...


class TokenStore(Protocol):
    """API bearer tokens (only a sha256 of each token is stored)."""

    def create_token(self, row: dict[str, Any]) -> None: ...

    def token(self, token_id: str) -> dict[str, Any] | None: ...

    def list_tokens(self, memory_id: str | None = None) -> list[dict[str, Any]]: ...

    def revoke_token(self, token_id: str, at: str) -> bool: ...


class Store(JobStore, TokenStore, Protocol):
    """Ledger, payloads and read model of many memories in one database (``SQLiteStore``,
    ``PostgresStore``; both pass ``tests/contract``). Times are ISO-8601 UTC strings
    (``domain.timefmt.to_iso``).

    Constructors never connect; the first call opens and migrates.
    """

    backend: str
    search_index: SearchIndex

    # memory admin
    def create_memory(self, memory_id: str, config: dict[str, Any], at: str, *,
                      claim_secret: bytes | None, tenant_id: str = "default") -> None:
        """Stores the memory (in ``tenant_id``) and its claim-id secret (None: none). Raises
        AlreadyExists."""
        ...

    def memory_tenant(self, memory_id: str) -> str | None:
        """The tenant a memory belongs to; None when there is no such memory."""
        ...

    def claim_secret(self, memory_id: str) -> bytes | None:
        """The memory's claim-id secret; None for a legacy memory (plain sha256 ids)."""
        ...

    def memory_config(self, memory_id: str) -> dict[str, Any]:
        """Raises NotFound."""
        ...

    def update_memory_config(self, memory_id: str, config: dict[str, Any], at: str) -> None:
        ...

    def list_memories(self) -> list[dict[str, Any]]:
        """[{memory_id, created_at, updated_at, tenant_id}] sorted by id."""
        ...

    def delete_memory(self, memory_id: str, at: str) -> dict[str, int]:
        """Purges every row of the memory; returns rows deleted per table."""
        ...

    # writes
    def unit_of_work(self, memory_id: str) -> AbstractContextManager[UnitOfWork]:
        """Raises NotFound (no such memory), StoreUnavailable."""
        ...

    # reads
    def item(self, memory_id: str, item_id: str) -> ItemRecord | None: ...

    def items(self, memory_id: str, *, scope: str | None = None, key: str | None = None,
              kind: str | None = None, statuses: list[str] | None = None,
              after: str | None = None, limit: int = 100,
              where: Any = None) -> list[ItemRecord]:
        """Ordered by item_id (bytewise); ``after`` is the last id of the previous page;
        ``where``: a ``domain.filters.ItemFilter`` (column conditions only)."""
        ...

    def count_items(self, memory_id: str, *, scope: str | None = None, key: str | None = None,
                    kind: str | None = None, statuses: list[str] | None = None,
                    where: Any = None) -> int:
        """How many items ``items`` lists over every page."""
        ...

    def item_metadata(self, memory_id: str, *, scope: str | None = None,
                      key: str | None = None, kind: str | None = None,
                      statuses: list[str] | None = None,
                      where: Any = None) -> list[tuple[str, Any]]:
        """(item_id, metadata) of every matching item, ordered by item_id (bytewise)."""
        ...

    def items_by_id(self, memory_id: str, item_ids: list[str]) -> list[ItemRecord]:
        """The existing items of ``item_ids``, in that order."""
        ...

    def key_items(self, memory_id: str, scope: str, key: str) -> list[ItemRecord]: ...

    def key_meta(self, memory_id: str, scope: str, key: str) -> dict[str, Any]:
        """{revision, cardinality, on_change, tombstones}."""
        ...

    def payloads(self, memory_id: str, payload_ids: list[str]) -> dict[str, dict[str, Any]]:
        """{payload_id: {"value", "quote"}} for the ids that still exist."""
        ...

    def provenance(self, memory_id: str, item_id: str) -> list[dict[str, Any]]: ...

    def events(self, memory_id: str, *, after_seq: int = 0) -> Iterator[dict[str, Any]]:
        """Ledger events in seq order (memory, seq, type, data, actor, at, prev_hash, hash)."""
        ...

    def head_seq(self, memory_id: str) -> int: ...

    def status_counts(self, memory_id: str) -> dict[str, int]: ...

    # erasure and retention
    def scrub_after_erasure(self, memory_id: str | None = None,
                            now: str | None = None) -> dict[str, Any]:
        """After an erasure commits: make erased bytes leave the database files and finish
        every owed scrub it can (``now``, ISO-8601 UTC, stamps the scrubs finished where the
        backend records them).

        Returns:
            {"state": "completed" | "pending", "reason": str | None, "pending": int}: state
            is about ``memory_id`` (None: every memory); pending counts owed scrubs.
        """
        ...

    def pending_erasures(self, memory_id: str | None = None) -> int:
        """Owed scrubs (erased bytes may still be in the files), of one memory or all."""
        ...

    def erasure_remaining(self, memory_id: str, item_ids: list[str],
                          source_ids: list[str]) -> dict[str, int]:
        """Per surface, what still holds erased content (all zero when complete)."""
        ...

    def retention_due(self, memory_id: str, now: str,
                      created_before: str | None) -> list[ItemRecord]: ...

    # integrity
    def ledger_rows(self, memory_id: str) -> Iterator[dict[str, Any]]:
        """Ledger rows as stored (``data`` unparsed JSON text) in seq order, for ``verify``."""
        ...

    def verify_ledger(self, memory_id: str) -> ChainBreak | None:
        """The first broken link (``domain.ledger.verify_chain``); never raises on damage."""
        ...

    def rebuild(self, memory_id: str) -> int:
        """Drops and refolds the memory's read model; returns events folded."""
        ...

    def verify_extras(self, memory_id: str) -> dict[str, Any]:
        """Source chains: ``{"sources_ok", "sources", "sources_broken", "sources_breaks"}``
        (the first broken link and every one); never raises on damaged rows."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class BlobStore(Protocol):
    """Bytes too large to keep inline in a fact (Log+Facts ``contentRef``).

    A reference has the form ``blob://<provider>/<bucket>/<key>``; ``provider`` names the
    adapter (``local`` for ``remem.stores.blobs.LocalBlobStore``). Implementations write
    atomically (a reader sees the whole blob or none) and delete for real (erasure).
    """

    provider: str

    def put(self, bucket: str, key: str, data: bytes) -> str:
        """Stores ``data`` under (bucket, key); returns its ``blob://`` reference.

        Raises:
            InvalidInput: a bucket or key that is not a plain name.
        """
        ...

    def get(self, ref: str) -> bytes:
        """The blob's bytes.

        Raises:
            NotFound: no such blob (never stored, or erased). InvalidInput: not a reference
                of this provider.
        """
        ...

    def delete(self, ref: str) -> bool:
        """Deletes the blob; True when it existed. Idempotent."""
        ...

    def exists(self, ref: str) -> bool:
        """Whether the blob's bytes are still stored (erasure checks)."""
# --- Kind-B cached facts (issue 16 point 4) ---------------------------------------------------
@dataclass(frozen=True)
class RefreshCheck:
    """What a refresh handler is asked: does the external source still hold the cached value?

    Attributes:
        kind: the Source block's kind (http-api | blob | mcp-tool | external-db | user-input).
        uri: the locator, interpreted per kind (None: the handler resolves the source).
        etag: the stored validator (HTTP handlers send it as ``If-None-Match``).
        source_version: the stored source-side version, if any.
        timeout_s: the most the handler may take, in seconds (the caller's deadline).
    """

    kind: str
    uri: str | None
    etag: str | None
    source_version: str | None
    timeout_s: float


@dataclass(frozen=True)
class RefreshAnswer:
    """A refresh handler's answer.

    Attributes:
        state: ``changed`` (``value`` is what the source holds now), ``unchanged`` (the
            cached value is confirmed: HTTP 304 or the same body) or ``failed``.
        value: the new JSON value (``changed`` only; the service compares it with the cached
            one, so a handler may return ``changed`` with the same value).
        etag, source_version: the source's validators now (None: not given).
        reason: why it failed, for a person, without hosts, paths or secrets.
    """

    state: str
    value: Any = None
    etag: str | None = None
    source_version: str | None = None
    reason: str | None = None


@runtime_checkable
class RefreshHandler(Protocol):
    """Fetches the current value of a cached fact's external source (registered by name in
    ``providers.registry``; ``http-api`` ships in ``providers.refresh_http``).

    A handler never raises for a source's failure (an error status, a timeout, a refused
    URL): it answers ``failed`` with a reason, and the fact stays, labelled stale.
    """

    name: str

    def check(self, req: RefreshCheck) -> RefreshAnswer:
        """Asks the source within ``req.timeout_s`` seconds; see :class:`RefreshAnswer`."""
        ...
