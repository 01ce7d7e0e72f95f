"""The PostgreSQL unit of work: one transaction per decision, serialised per memory.

``PostgresStore.unit_of_work`` opens a transaction and takes ``SELECT ... FOR UPDATE`` on the
memory's row, so writers of one memory (in any process or host) take turns while writers of
other memories run in parallel; reads inside the transaction then see the latest committed
state (READ COMMITTED takes a snapshot per statement). The ledger's primary key
(memory_id, seq) is the backstop: a colliding append raises ``UniqueViolation``, translated to
``HeadMoved`` (in ``stores/sql/uow.py``) and the whole transaction rolls back, so nothing
staged stays behind.
"""

from __future__ import annotations

from typing import Any

import psycopg

from remem.domain.fold import KeyRecord, Projection
from remem.domain.ledger import EMPTY
from remem.errors import HeadMoved
from remem.stores.postgres import erasure
from remem.stores.sql.dialect import POSTGRES
from remem.stores.sql.rows import row_to_item
from remem.stores.sql.uow import SqlUnitOfWork

_PROJECTION = (
    "SELECT 'i' AS t, to_jsonb(i) AS r FROM items i WHERE memory_id=%(m)s AND scope=%(s)s "
    "AND key=%(k)s{claim} UNION ALL SELECT 'r', jsonb_build_object('revision', revision) FROM "
    "key_revisions WHERE memory_id=%(m)s AND scope=%(sr)s AND key=%(kr)s UNION ALL SELECT "
    "'c', jsonb_build_object('cardinality', cardinality, 'on_change', on_change) FROM keys "
    "WHERE memory_id=%(m)s AND key=%(kr)s UNION ALL SELECT 't', jsonb_build_object("
    "'claim_id', claim_id) FROM tombstones WHERE memory_id=%(m)s AND scope=%(sr)s AND "
    "key=%(kr)s")
_COPY_LEDGER = ("COPY ledger (memory_id, seq, type, data, actor, at, prev_hash, hash) FROM "
                "STDIN")
#: From how many rows ``COPY`` is used (one decision's few events take a plain INSERT).
_COPY_FROM = 16
_WHOLE_KEY = _PROJECTION.format(claim="")
_BY_CLAIM = _PROJECTION.format(claim=" AND claim_id=%(c)s")


class PostgresUnitOfWork(SqlUnitOfWork):
    """Transaction-scoped access to one memory. Created by ``PostgresStore.unit_of_work``.

    Attributes:
        conn: the transaction's connection (dict rows).
        memory_id: the memory written to.
        mno: the memory's number (names its partitions).
        memory: the locked ``memories`` row's ``embedding_model``, ``dimensions`` and
            ``vector_seq``; only holders of the row lock change them, so the copy stays true
            for the transaction (the search writer keeps it up to date).
    """

    #: Erasure also records the physical scrub owed (``PostgresStore.scrub_after_erasure``).
    erasure = erasure

    def __init__(self, conn: psycopg.Connection, memory_id: str, locked: dict[str, Any]) -> None:
        head = (locked["seq"], locked["hash"]) if locked["seq"] else tuple(EMPTY)
        super().__init__(conn, memory_id, POSTGRES, head)  # type: ignore[arg-type]
        self.mno: int = locked["mno"]
        self.memory = {k: locked[k] for k in ("embedding_model", "dimensions", "vector_seq")}

    def _insert_ledger_rows(self, rows: list[tuple]) -> None:
        """Ledger rows by ``COPY`` (a batch's rows in one stream); a taken seq becomes
        ``HeadMoved`` as for a plain insert (``SqlUnitOfWork._insert_ledger_rows``)."""
        if len(rows) < _COPY_FROM:
            super()._insert_ledger_rows(rows)
            return
        try:
            with self.conn.cursor() as cur, cur.copy(_COPY_LEDGER) as copy:
                for row in rows:
                    copy.write_row(row)
        except psycopg.errors.UniqueViolation as exc:
            raise HeadMoved("Another writer appended at the same sequence; decide again.",
                            head_seq=rows[0][1] - 1) from exc

    def projection_for(self, scope: str, key: str, claim_id: str | None = None) -> Projection:
        """The read model of one (scope, key): items, revision, cardinality, tombstones
        (one round trip after the label keys); the last three by label refs. ``claim_id``:
        only the items of that claim (a partial projection, ``Writer._projection``)."""
        self.settle(scope, key)
        p = Projection(label_keys=self.label_keys)
        sref, kref = p.refs(scope, key)
        p.names.update({sref: scope, kref: key})
        query = _BY_CLAIM if claim_id is not None else _WHOLE_KEY
        for row in self.conn.execute(query, {"m": self.memory_id, "s": scope, "k": key,
                                             "sr": sref, "kr": kref, "c": claim_id}):
            r = row["r"]
            if row["t"] == "i":
                rec = row_to_item(r)
                p.items[rec.item_id] = rec
            elif row["t"] == "r":
                p.keys[(sref, kref)] = KeyRecord(sref, kref, r["revision"])
            elif row["t"] == "c":
                p.cardinality[kref] = (r["cardinality"], r["on_change"])
            else:
                p.tombstones.add((sref, kref, r["claim_id"]))
        return p

