"""A batch's full-text and vector rows on PostgreSQL, held until the unit of work flushes.

The per-item search writer (``search.SearchWriter``) spends four round trips on every item
(the full-text upsert, the vector delete, insert and the counter update); a bulk load of a
few thousand items per second is then bound by round trips, not by work. While a unit of work
defers inserts (``Writer.write_many``: ``uow.held("search", ...)``), :class:`HeldSearchWriter`
holds the rows and :meth:`HeldIndex.flush` writes them with two pipelined ``executemany``
calls, one ``DELETE`` and one ``UPDATE``. The rows are the per-item path's
(``tests/contract/test_bulk_write_identity.py``, ``test_bulk_search_identity.py``):

- full-text rows are upserted in call order, so a document indexed twice keeps its last row;
- vectors get the ``seq`` the per-item path hands out (numbered at the put, from the locked
  ``memories`` row the unit of work keeps); a document put again keeps its last row and seq;
- ``vector_epoch`` is bumped once per ``put_vectors`` call that replaced a vector (one in the
  database before the batch, or put earlier in it), as there.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from remem.domain.textindex import scope_term
from remem.stores.postgres import vector_index
from remem.stores.postgres.search import SearchWriter, tsvector_literal


class HeldIndex:
    """Index rows of one memory held in a deferred unit of work (``uow.held("search")``).

    Attributes:
        docs: ``search_docs`` rows per ``index_text`` call, in call order.
        vectors: ``{doc_id: row}`` of the vectors put (the insert's values, seq included).
        vector_calls: the doc ids of each ``put_vectors`` call and whether one of them was
            already held (the rest of the epoch rule needs the database, read at flush).
        deferred: the memory is in a bulk load (``PostgresStore.bulk_load``): its HNSW index
            is built when the load ends, never here.
    """

    def __init__(self, uow: Any, deferred: bool = False) -> None:
        self.uow, self.deferred = uow, deferred
        self.docs: list[tuple] = []
        self.vectors: dict[str, tuple] = {}
        self.vector_calls: list[tuple[list[str], bool]] = []

    def index_text(self, doc_id: str, doc_type: str, scope: str, tsv: str) -> None:
        self.docs.append((self.uow.memory_id, doc_id, doc_type, scope, tsv))

    def put_vectors(self, model: str, rows: Sequence[tuple[str, str, str, str, np.ndarray]]
                    ) -> None:
        ids = [r[0] for r in rows]
        self.vector_calls.append((ids, any(d in self.vectors for d in ids)))
        first = self.uow.memory["vector_seq"] + 1
        for i, (d, t, s, h, v) in enumerate(rows):
            self.vectors.pop(d, None)
            self.vectors[d] = (self.uow.memory_id, d, t, s, model, h,
                               np.asarray(v, dtype=np.float32), first + i)
        self.uow.memory["vector_seq"] = first + len(rows) - 1

    def flush(self) -> None:
        """Writes the held rows (called by ``SqlUnitOfWork.flush``) and empties the buffer."""
        c, m = self.uow.conn, self.uow.memory_id
        if self.docs:
            vector_index.copy_docs(c, m, self.docs)
        if self.vector_calls:
            ids = list(dict.fromkeys(d for call, _ in self.vector_calls for d in call))
            in_db = {r["doc_id"] for r in c.execute(
                "DELETE FROM vectors WHERE memory_id=%s AND doc_id = ANY(%s) "
                "RETURNING doc_id", (m, ids)).fetchall()}
            bumps = sum(1 for call, held_before in self.vector_calls
                        if held_before or any(d in in_db for d in call))
            rows = list(self.vectors.values())
            with vector_index.built_after(c, self.uow.mno, len(rows), self.deferred):
                vector_index.copy_vectors(c, rows)
            c.execute("UPDATE memories SET vector_seq = %s, vector_epoch = vector_epoch "
                      "+ %s WHERE memory_id=%s", (self.uow.memory["vector_seq"], bumps, m))
        self.docs, self.vectors, self.vector_calls = [], {}, []


class HeldSearchWriter(SearchWriter):
    """The search writer of a batch: full-text and vector rows go to a :class:`HeldIndex`;
    every other write (the source log) stays immediate."""

    def __init__(self, uow: Any, known_indexes: set[str], held: HeldIndex,
                 deferred: bool = False) -> None:
        super().__init__(uow, known_indexes, deferred)
        self.held = held

    def index_text(self, doc_id: str, doc_type: str, scope: str, text: str) -> None:
        self.held.index_text(doc_id, doc_type, scope,
                             tsvector_literal(text, scope_term(self.memory_id, scope)))

    def put_vectors(self, model: str, rows: Sequence[tuple[str, str, str, str, np.ndarray]]
                    ) -> int:
        if not rows:
            return 0
        self._ensure_hnsw(model, len(rows[0][4]))
        self.held.put_vectors(model, rows)
        return len(rows)
