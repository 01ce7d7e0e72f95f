"""A batch's full-text and vector rows, held until the unit of work flushes (bulk loads).

``Writer.write_many`` decides a batch in one transaction with ``uow.defer_inserts()``; the
search writer (``SearchWriter``) then hands its rows to a :class:`HeldIndex`
(``uow.held("search", ...)``) instead of running three to five statements per item, and
``uow.flush()`` inserts them with a few ``executemany`` calls. The rows are the ones the
per-item path writes, byte for byte (``tests/contract/test_bulk_write_identity.py``):

- search documents get the rowid an ``INSERT`` would have given them (``max(rowid) + 1`` in
  first-sighting order), and full-text rows go in in call order, each ending its FTS5 segment
  (``_fts_segment``), so FTS5 sees the same sequence of writes and flushes;
- a document indexed again (in the database before the batch, or earlier in it) has its
  full-text row replaced as the per-item path does, in its place in the sequence;
- vectors get the ``seq`` numbers the per-item ``UPDATE ... RETURNING vector_seq`` would have
  handed out, and ``vector_epoch`` is bumped once per ``put_vectors`` call that replaced a
  vector, as there.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

_CHUNK = 500  # ids per IN (...) list

_INSERT_DOC = ("INSERT INTO search_docs(rowid, memory_id, doc_id, doc_type, scope) "
               "VALUES (?,?,?,?,?)")
_INSERT_FTS = "INSERT INTO search_fts(rowid, terms, scope_key) VALUES (?,?,?)"
_INSERT_VEC = ("INSERT INTO vectors(memory_id, doc_id, doc_type, scope, model, content_hash, "
               "vec, seq) VALUES (?,?,?,?,?,?,?,?)")


def _in(ids: Sequence[Any]) -> str:
    return ",".join("?" * len(ids))


@dataclass
class HeldIndex:
    """Index rows of one memory held in a deferred unit of work.

    Attributes:
        texts: ``(doc_id, doc_type, scope, terms, scope_key)`` per ``index_text`` call, in
            call order (terms already rewritten by ``domain.textindex.index_terms``).
        vectors: ``{doc_id: row}`` of the vectors put, row = the ``vectors`` insert's values
            without its ``seq``; a document put again moves to the end, as its new ``seq`` does.
        vector_calls: the doc ids of each ``put_vectors`` call and whether one of them was
            already held (the rest of the epoch rule needs the database, read at flush).
        embedding: the memory's recorded (model, dims) once read.
    """

    conn: sqlite3.Connection
    memory_id: str
    texts: list[tuple[str, str, str, str, str]] = field(default_factory=list)
    vectors: dict[str, tuple] = field(default_factory=dict)
    vector_calls: list[tuple[list[str], bool]] = field(default_factory=list)
    embedding: tuple[str, int] | None = None

    def index_text(self, doc_id: str, doc_type: str, scope: str, terms: str,
                   scope_key: str) -> None:
        self.texts.append((doc_id, doc_type, scope, terms, scope_key))

    def put_vectors(self, model: str, rows: Sequence[tuple[str, str, str, str, np.ndarray]]
                    ) -> int:
        ids = [r[0] for r in rows]
        self.vector_calls.append((ids, any(d in self.vectors for d in ids)))
        for d, t, s, h, v in rows:
            self.vectors.pop(d, None)
            self.vectors[d] = (self.memory_id, d, t, s, model, h,
                               np.asarray(v, dtype="<f4").tobytes())
        return len(rows)

    # --- flush -----------------------------------------------------------------------------
    def flush(self) -> None:
        """Inserts the held rows (called by ``SqlUnitOfWork.flush``) and empties the buffer."""
        self._flush_texts()
        self._flush_vectors()
        self.texts, self.vectors, self.vector_calls = [], {}, []

    def _existing(self, table: str, column: str, ids: Sequence[str]) -> dict[str, Any]:
        """``{doc_id: column}`` of the ids that have a row in ``table`` now."""
        out: dict[str, Any] = {}
        for i in range(0, len(ids), _CHUNK):
            chunk = list(ids[i:i + _CHUNK])
            out.update(self.conn.execute(
                f"SELECT doc_id, {column} FROM {table} WHERE memory_id=? AND doc_id IN "
                f"({_in(chunk)})", (self.memory_id, *chunk)).fetchall())
        return out

    def _flush_texts(self) -> None:
        if not self.texts:
            return
        c = self.conn
        rowids = self._existing("search_docs", "rowid",
                                list(dict.fromkeys(t[0] for t in self.texts)))
        nxt = c.execute("SELECT COALESCE(MAX(rowid), 0) + 1 FROM search_docs").fetchone()[0]
        docs: list[tuple] = []
        fts: list[tuple] = []
        for doc_id, doc_type, scope, terms, scope_key in self.texts:
            rowid = rowids.get(doc_id)
            if rowid is None:  # a new document: the rowid an INSERT would give it
                rowid = rowids[doc_id] = nxt
                nxt += 1
                docs.append((rowid, self.memory_id, doc_id, doc_type, scope))
                fts.append((rowid, terms, scope_key))
                continue
            self._insert_runs(docs, fts)  # a document indexed again: replaced in its place
            docs, fts = [], []
            c.execute("DELETE FROM search_fts WHERE rowid=?", (rowid,))
            c.execute("UPDATE search_docs SET doc_type=?, scope=? WHERE rowid=?",
                      (doc_type, scope, rowid))
            c.execute(_INSERT_FTS, (rowid, terms, scope_key))
            self._fts_segment()
        self._insert_runs(docs, fts)

    def _insert_runs(self, docs: list[tuple], fts: list[tuple]) -> None:
        if docs:
            self.conn.executemany(_INSERT_DOC, docs)
            for row in fts:
                self.conn.execute(_INSERT_FTS, row)
                self._fts_segment()

    def _fts_segment(self) -> None:
        """Ends the FTS5 segment as the per-item path does: there the next statement that
        opens a statement savepoint (every decision runs one) makes FTS5 write its pending
        terms out as a segment, so each document's terms are a segment of their own and the
        index's bytes (segments, merges) are the same as writing one item at a time."""
        self.conn.execute("SAVEPOINT fts_segment")
        self.conn.execute("RELEASE fts_segment")

    def _flush_vectors(self) -> None:
        if not self.vectors:
            return
        c, m = self.conn, self.memory_id
        in_db = set(self._existing("vectors", "seq",
                                   list(dict.fromkeys(d for ids, _ in self.vector_calls
                                                      for d in ids))))
        bumps = sum(1 for ids, held_before in self.vector_calls
                    if held_before or any(d in in_db for d in ids))
        gone = sorted(in_db)
        for i in range(0, len(gone), _CHUNK):
            chunk = gone[i:i + _CHUNK]
            c.execute(f"DELETE FROM vectors WHERE memory_id=? AND doc_id IN ({_in(chunk)})",
                      (m, *chunk))
        put = sum(len(ids) for ids, _ in self.vector_calls)
        last = c.execute("UPDATE memories SET vector_seq = vector_seq + ?, vector_epoch = "
                         "vector_epoch + ? WHERE memory_id=? RETURNING vector_seq",
                         (put, bumps, m)).fetchone()[0]
        # each call numbered its rows after the previous call's; a row put again later took
        # the later number, so the held rows (in put order) end at ``last``
        first = last - put + 1
        seqs = _final_seqs(self.vector_calls, first)
        c.executemany(_INSERT_VEC, [(*row, seqs[d]) for d, row in self.vectors.items()])


def _final_seqs(calls: list[tuple[list[str], bool]], first: int) -> dict[str, int]:
    """``{doc_id: seq}`` the per-item path gives: every put takes the next number, and the
    last put of a document is the row that stays."""
    seqs: dict[str, int] = {}
    n = first
    for ids, _ in calls:
        for d in ids:
            seqs[d] = n
            n += 1
    return seqs
