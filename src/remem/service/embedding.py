"""A memory's embedder: the model check, indexing on write, and ``reembed``.

- The embedder comes from the memory config's ``embedding`` section and the operator's provider
  registry (``providers.registry.memory_embedder``: one instance per spec per process); no
  section means the bundled local model. A section the registry cannot serve (an endpoint or
  key stored by an older version, an unregistered name) makes writes raise ConfigInvalid;
  recall then searches full text and keys only, and sends nothing anywhere.
- A memory records its model id and dimensions with its first vector. Any later operation
  that embeds (remember, observe, recall) under a different configured model raises
  :class:`~remem.errors.EmbeddingMismatch` naming both, before anything is written. Opening
  the memory still works, so ``reembed`` (and reads that need no vectors) can run.
- Indexing: ``Writer.before_write`` embeds the candidate's text (key words + value + quote)
  *before* the write transaction opens, so the write lock is never held while a model runs;
  ``Writer.on_commit`` then stores the full-text row and that vector in the same transaction
  as the write. A hook that finds no precomputed vector (another writer path) embeds inline.
- ``reembed`` embeds every document whose (model, content hash) differs from the target,
  batched, outside any transaction, then switches in one transaction: new vectors, the
  memory's model and dimensions, a ``memory.configured`` ledger event, ``vector_epoch`` bumped.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from remem.domain.digests import digests_enabled

from remem.domain.events import Event, EventType
from remem.domain.textindex import content_hash as _content_hash
from remem.domain.textindex import item_text
from remem.domain.timefmt import to_iso
from remem.errors import ConfigInvalid, EmbeddingMismatch, UnsupportedCapability
from remem.providers.registry import memory_embedder
from remem.service.writer import append_events

Progress = Callable[[int, int], None]
_PENDING_MAX = 4096


class EmbeddingService:
    """Embedding and indexing for one ``Memory``.

    Args:
        ctx: the MemoryContext (its store, id, config and clock are used).
    """

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self.spec = ctx.config.get("embedding")
        self._pending: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    # --- plumbing ----------------------------------------------------------------------------
    @property
    def index(self) -> Any:
        """The store's search index (``SQLiteSearchIndex``).

        Raises:
            UnsupportedCapability: the backend has no recall index yet.
        """
        idx = getattr(self.ctx.store, "search_index", None)
        if idx is None:
            raise UnsupportedCapability(
                f"The {getattr(self.ctx.store, 'backend', 'configured')} backend has no "
                "recall index yet; use SQLite.", backend=getattr(self.ctx.store, "backend",
                                                                 None))
        return idx

    @property
    def embedder(self) -> Any:
        return memory_embedder(self.spec, getattr(self.ctx, "providers", None))

    def attach(self, writer: Any) -> None:
        """Registers the indexing hooks on a Writer."""
        if getattr(self.ctx.store, "search_index", None) is None:
            return
        writer.before_write.append(self.before_write)
        writer.on_commit.append(self.on_commit)

    def recorded(self) -> tuple[str | None, int | None]:
        """(model id, dimensions) recorded by the memory, or (None, None) before first use."""
        with self.index.read(self.ctx.id) as snap:
            return snap.embedding()

    def check(self, recorded: tuple[str | None, int | None] | None = None,
              embedder: Any = None) -> None:
        """Raises EmbeddingMismatch when the memory was embedded with another model
        (``embedder``: the configured one, when the caller resolved it already)."""
        model, dims = recorded if recorded is not None else self.recorded()
        e = embedder if embedder is not None else self.embedder
        if model is not None and (model != e.model_id or dims != e.dimensions):
            raise EmbeddingMismatch(
                f"Memory {self.ctx.id!r} was embedded with {model!r} ({dims} dimensions), "
                f"but the configured embedder is {e.model_id!r} ({e.dimensions} dimensions). "
                f"Run `remem --memory {self.ctx.id} reembed` to switch the memory to the "
                f"configured model, or configure {model!r} again.",
                memory=self.ctx.id, recorded_model=model, recorded_dimensions=dims,
                configured_model=e.model_id, configured_dimensions=e.dimensions)

    def embed(self, texts: Sequence[str], *, checked: bool = False) -> np.ndarray:
        """float32 ``[n, dims]`` vectors of ``texts`` after the model check."""
        if not checked:
            self.check()
        return self.embedder.embed_batch(list(texts))

    def query_vector(self, text: str, recorded: tuple[str | None, int | None]
                     ) -> np.ndarray | None:
        """The query's vector, or None when the memory has no vectors yet."""
        if recorded[0] is None:
            return None
        try:
            self.embedder  # noqa: B018 - resolves the configured provider
        except ConfigInvalid:
            return None  # an unusable embedding section: recall by full text and keys
        self.check(recorded)
        embed = getattr(self.embedder, "embed_queries", None) or self.embedder.embed_batch
        return embed([text])[0]

    # --- write hooks -------------------------------------------------------------------------
    def before_write(self, req: Any) -> None:
        c = req.candidate
        text = item_text(c.key, c.value, c.source.text)
        h = _content_hash(text)
        if h in self._pending:
            return
        vec = self.embed([text])[0]
        with self._lock:
            if len(self._pending) >= _PENDING_MAX:
                self._pending.pop(next(iter(self._pending)))
            self._pending[h] = vec

    def prime(self, texts: Sequence[str]) -> None:
        """Embeds texts in one batch ahead of the writes that will index them (bulk loads)."""
        todo = [t for t in dict.fromkeys(texts) if _content_hash(t) not in self._pending]
        if not todo:
            return
        vecs = self.embed(todo)
        with self._lock:
            for t, v in zip(todo, vecs, strict=True):
                self._pending[_content_hash(t)] = v
            while len(self._pending) > max(_PENDING_MAX, len(todo)):
                self._pending.pop(next(iter(self._pending)))

    def preload(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Hands over vectors already computed for ``texts`` with the configured model (a bulk
        load that embeds each distinct text once); the writes that index them use these."""
        with self._lock:
            for t, v in zip(texts, vectors, strict=True):
                self._pending[_content_hash(t)] = v
            while len(self._pending) > max(_PENDING_MAX, len(texts)):
                self._pending.pop(next(iter(self._pending)))

    def on_commit(self, uow: Any, proj: Any, new_payloads: Sequence[tuple]) -> None:
        if not new_payloads:
            return
        w = self.index.writer(uow)
        rows = []
        for item_id, _payload_id, payload in new_payloads:
            rec = proj.items.get(item_id)
            if rec is None:
                continue
            text = item_text(rec.key, payload["value"], payload.get("quote"))
            w.index_text(item_id, "item", rec.scope, text)
            h = _content_hash(text)
            with self._lock:
                vec = self._pending.pop(h, None)
            if vec is None:
                vec = self.embed([text], checked=True)[0]
            rows.append((item_id, "item", rec.scope, h, vec))
        self.store_vectors(w, rows)

    def store_vectors(self, w: Any, rows: list[tuple]) -> None:
        """Records the model on first use (else re-checks it) and stores the vectors."""
        if not rows:
            return
        e = self.embedder
        recorded = w.record_embedding(e.model_id, e.dimensions)
        self.check(recorded, e)
        w.put_vectors(e.model_id, rows)

    # --- reembed -----------------------------------------------------------------------------
    def reembed(self, *, batch_size: int = 64, progress: Progress | None = None,
                actor: str = "owner", force: bool = False) -> dict[str, Any]:
        """Recomputes vectors with the configured model and switches the memory to it.

        Args:
            batch_size: texts per embedding call.
            progress: called as ``progress(done, total)`` after each batch.
            force: recompute every document's vector, even one already current.

        Returns:
            ``{"model", "dimensions", "previous_model", "previous_dimensions", "documents",
            "embedded", "skipped", "switched"}``.
        """
        e = self.embedder
        with self.index.read(self.ctx.id) as snap:
            todo = _stale(snap.embedding_docs(digests_enabled(self.ctx.config)),
                          {} if force else snap.vector_hashes(),
                          e.model_id)
        texts = list(dict.fromkeys(todo.values()))
        computed: dict[str, np.ndarray] = {}
        if progress:
            progress(0, len(texts))
        for start in range(0, len(texts), max(1, batch_size)):
            chunk = texts[start:start + batch_size]
            for t, v in zip(chunk, e.embed_batch(chunk), strict=True):
                computed[_content_hash(t)] = v
            if progress:
                progress(min(start + batch_size, len(texts)), len(texts))
        return self._switch(computed, actor, force)

    def _switch(self, computed: dict[str, np.ndarray], actor: str,
                force: bool = False) -> dict[str, Any]:
        """One transaction: store the new vectors (embedding any document written meanwhile),
        drop other models' vectors, set the model, bump the epoch, record the switch."""
        e = self.embedder
        model, dims = e.model_id, e.dimensions
        with self.ctx.store.unit_of_work(self.ctx.id) as uow:
            snap = self.index.in_transaction(uow)
            before = snap.embedding()
            docs = snap.embedding_docs(digests_enabled(self.ctx.config))
            stale = _stale(docs, {} if force else snap.vector_hashes(), model)
            late = [t for t in stale.values() if _content_hash(t) not in computed]
            if late:
                for t, v in zip(late, e.embed_batch(late), strict=True):
                    computed[_content_hash(t)] = v
            rows = [(d, typ, scope, _content_hash(t), computed[_content_hash(t)])
                    for d, typ, scope, t in docs if d in stale]
            w = self.index.writer(uow)
            w.put_vectors(model, rows)
            dropped = w.drop_vectors_except(model)
            switched = before != (model, dims)
            if switched or rows or dropped:
                w.switch_model(model, dims)
            if switched:
                head, _ = uow.head()
                append_events(uow, [Event(EventType.MEMORY_CONFIGURED,
                                          {"embedding_model": model, "dimensions": dims})],
                              actor=actor, at=to_iso(self.ctx.clock.now()),
                              expected_seq=head)
        return {"model": model, "dimensions": dims, "previous_model": before[0],
                "previous_dimensions": before[1], "documents": len(docs),
                "embedded": len(rows), "skipped": len(docs) - len(rows), "switched": switched}


def _stale(docs: list[tuple[str, str, str, str]], have: dict[str, tuple[str, str]],
           model: str) -> dict[str, str]:
    """doc id -> text of documents whose stored vector is missing, of another model, or of
    other content."""
    return {d: t for d, _typ, _scope, t in docs if have.get(d) != (model, _content_hash(t))}
