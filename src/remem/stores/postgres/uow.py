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

import json
from collections.abc import Sequence
from typing import Any

import psycopg

from remem.domain.filters import load_metadata
from remem.domain.fold import KeyRecord, Projection
from remem.domain.ledger import EMPTY
from remem.errors import HeadMoved
from remem.stores.postgres import bulk_rows, erasure
from remem.stores.sql.dialect import POSTGRES
from remem.stores.sql.rows import ITEM_COLUMNS, row_to_item
from remem.stores.sql.uow import SqlUnitOfWork

_PROJECTION = (
    "SELECT 'i' AS t, to_jsonb(i) AS r FROM items i WHERE memory_id=%(m)s AND scope=%(s)s "
    "AND key=%(k)s{claim} UNION ALL SELECT 'r', jsonb_build_object('revision', revision) FROM "
    "key_revisions WHERE memory_id=%(m)s AND scope=%(sr)s AND key=%(kr)s UNION ALL SELECT "
    "'c', jsonb_build_object('cardinality', cardinality, 'on_change', on_change) FROM keys "
    "WHERE memory_id=%(m)s AND key=%(kr)s UNION ALL SELECT 't', jsonb_build_object("
    "'claim_id', claim_id) FROM tombstones WHERE memory_id=%(m)s AND scope=%(sr)s AND "
    "key=%(kr)s")
#: The claim projections of a batch's candidates in one statement (``prefetch_claims``):
#: ``_BY_CLAIM``'s four parts, each joined to the list of (scope, key, claim, refs) asked;
#: a fifth reads every item of the asked keys declared single (claim NULL): the decision on
#: a single key reads the whole key after its claim (``Writer._projection``).
_PREFETCH = (
    "WITH q AS (SELECT DISTINCT * FROM unnest(%(s)s::text[], %(k)s::text[], %(c)s::text[], "
    "%(sr)s::text[], %(kr)s::text[]) AS q(scope, key, claim_id, sref, kref)) "
    "SELECT q.scope AS s, q.key AS k, q.claim_id AS c, 'i' AS t, to_jsonb(i) AS r FROM q JOIN "
    "items i ON i.memory_id=%(m)s AND i.scope=q.scope AND i.key=q.key AND "
    "i.claim_id=q.claim_id UNION ALL SELECT q.scope, q.key, q.claim_id, 'r', "
    "jsonb_build_object('revision', v.revision) FROM q JOIN key_revisions v ON "
    "v.memory_id=%(m)s AND v.scope=q.sref AND v.key=q.kref UNION ALL SELECT q.scope, q.key, "
    "q.claim_id, 'c', jsonb_build_object('cardinality', c.cardinality, 'on_change', "
    "c.on_change) FROM q JOIN keys c ON c.memory_id=%(m)s AND c.key=q.kref UNION ALL SELECT "
    "q.scope, q.key, q.claim_id, 't', jsonb_build_object('claim_id', t.claim_id) FROM q JOIN "
    "tombstones t ON t.memory_id=%(m)s AND t.scope=q.sref AND t.key=q.kref UNION ALL SELECT "
    "w.scope, w.key, NULL, 'i', to_jsonb(i) FROM (SELECT DISTINCT scope, key, kref FROM q) w "
    "JOIN keys c ON c.memory_id=%(m)s AND c.key=w.kref AND c.cardinality <> 'multi' JOIN "
    "items i ON i.memory_id=%(m)s AND i.scope=w.scope AND i.key=w.key")
_COPY_LEDGER = ("COPY ledger (memory_id, seq, type, data, actor, at, prev_hash, hash) FROM "
                "STDIN")
#: From how many rows ``COPY`` is used (one decision's few events take a plain INSERT).
_COPY_FROM = 16
#: The payload id's place in a held item row (``item_to_row``: memory_id first).
_ITEM_PAYLOAD_ID = 1 + ITEM_COLUMNS.index("payload_id")
#: A payload row's id and metadata places (``SqlUnitOfWork.put_payload``'s row).
_PAYLOAD_ID, _PAYLOAD_METADATA = 1, 6
_ITEM_METADATA = ("SELECT i.payload_id, p.payload_id IS NOT NULL AS stored, p.metadata FROM "
                  "items i LEFT JOIN payloads p ON p.memory_id = i.memory_id AND p.payload_id = "
                  "i.payload_id WHERE i.memory_id=%s AND i.item_id=%s")
_KEY_PAYLOADS = ("SELECT i.payload_id, p.payload_id IS NOT NULL AS stored, p.value, p.quote "
                 "FROM items i LEFT JOIN payloads p ON p.memory_id = i.memory_id AND "
                 "p.payload_id = i.payload_id WHERE i.memory_id=%s AND i.scope=%s AND i.key=%s")
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
        #: ``{(scope, key): {claim_id: [(t, r)]}}`` read by ``prefetch_claims`` (claim None:
        #: the whole key), each used once and dropped when this transaction saves a
        #: projection of its key.
        self._prefetched: dict[tuple[str, str], dict[str, list[tuple[str, Any]]]] = {}

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

    def _write_held_rows(self, *args: Any) -> None:
        """A batch's held read-model rows, one statement per large table (``bulk_rows``)."""
        bulk_rows.write_rows_bulk(*args)

    def _insert_payloads(self, rows: list[tuple]) -> None:
        """Payload rows; a batch's in one statement (``bulk_rows.insert_payloads``)."""
        if len(rows) < bulk_rows.BULK_FROM:
            super()._insert_payloads(rows)
        else:
            bulk_rows.insert_payloads(self.conn, rows)

    def prefetch_claims(self, wanted: list[tuple[str, str, str]]) -> None:
        """Reads the claim projections ``projection_for(scope, key, claim_id)`` of a batch's
        candidates in one statement (at the batch's start: nothing of it written yet); each
        is served once, unless this transaction saves a projection of its key first."""
        self.settle()
        if not wanted:
            return
        p = Projection(label_keys=self.label_keys)
        refs = [p.refs(s, k) for s, k, _ in wanted]
        cols = list(zip(*wanted, strict=True))
        self._prefetched = {}
        for s, k, c in wanted:
            self._prefetched.setdefault((s, k), {})[c] = []
        whole: dict[tuple[str, str], list[tuple[str, Any]]] = {}
        for row in self.conn.execute(_PREFETCH, {
                "m": self.memory_id, "s": list(cols[0]), "k": list(cols[1]),
                "c": list(cols[2]), "sr": [r[0] for r in refs], "kr": [r[1] for r in refs]}):
            if row["c"] is None:  # an item of a single key, whatever its claim
                whole.setdefault((row["s"], row["k"]), []).append((row["t"], row["r"]))
            else:
                self._prefetched[(row["s"], row["k"])][row["c"]].append((row["t"], row["r"]))
        for pair, claims in self._prefetched.items():  # the key's rows: the same for each claim
            keyed = [(t, r) for t, r in next(iter(claims.values())) if t != "i"]
            if any(t == "c" and r["cardinality"] != "multi" for t, r in keyed):
                claims[None] = whole.get(pair, []) + keyed

    def save(self, p: Projection) -> None:
        """Saves as the SQL unit of work does, and keeps the prefetched projections of the
        keys saved here true: a claim whose items this save writes, a whole key and a key
        whose cardinality changes are dropped (read again if asked); the other claims of a
        saved key keep their items (only their claim's items are in them) and take the
        key's new revision and tombstones. A forget drops everything."""
        if self._prefetched:
            self._patch_prefetched(p)
        super().save(p)

    def _patch_prefetched(self, p: Projection) -> None:
        n = p.names.get
        if p.forgotten or any(i not in p.items for i in p.touched_items):
            self._prefetched = {}
            return
        pairs = {(r.scope, r.key) for r in p.items.values()}
        pairs |= {(n(s, s), n(k, k)) for s, k in p.touched_keys}
        pairs |= {(n(s, s), n(k, k)) for s, k, _ in p.new_tombstones}
        written: dict[tuple[str, str], set[str]] = {}
        for i in p.touched_items:
            r = p.items[i]
            written.setdefault((r.scope, r.key), set()).add(r.claim_id)
        revisions = {(n(s, s), n(k, k)): p.keys[(s, k)].revision
                     for s, k in p.touched_keys if (s, k) in p.keys}
        tombstones: dict[tuple[str, str], list[str]] = {}
        for s, k, c in p.new_tombstones:
            tombstones.setdefault((n(s, s), n(k, k)), []).append(c)
        for pair in pairs:
            claims = self._prefetched.get(pair)
            if not claims:
                continue
            for c in (None, *written.get(pair, ())):
                claims.pop(c, None)
            for rows in claims.values():
                if pair in revisions:
                    rows[:] = [x for x in rows if x[0] != "r"]
                    rows.append(("r", {"revision": revisions[pair]}))
                rows.extend(("t", {"claim_id": c}) for c in tombstones.get(pair, ())
                            if ("t", {"claim_id": c}) not in rows)
        keys = {n(k, k) for k in p.new_cardinality}  # a key's cardinality: every scope
        if keys:
            self._prefetched = {w: v for w, v in self._prefetched.items() if w[1] not in keys}

    def payload_metadata(self, item_id: str) -> dict[str, Any] | None:
        """The metadata of an item's payload (None: none, or erased), as the SQL unit of work
        reads it, without first writing a batch's held rows (a superseding item inherits its
        predecessor's metadata: the flush split a batch's statements ~9 ways): the item's
        payload id comes from its held row if any, else from the table; its payload from the
        held payloads if there, else from the table."""
        held = self._deferred
        if held is None:
            return super().payload_metadata(item_id)
        row = held.saves.items.get(item_id)
        if row is not None:
            pid, stored, metadata = row[_ITEM_PAYLOAD_ID], None, None
        else:
            found = self.conn.execute(_ITEM_METADATA, (self.memory_id, item_id)).fetchone()
            if found is None:
                return None
            pid, stored, metadata = found["payload_id"], found["stored"], found["metadata"]
        for p in reversed(held.payloads):
            if p[_PAYLOAD_ID] == pid:
                return load_metadata(p[_PAYLOAD_METADATA])
        if stored is None:
            found = self.conn.execute("SELECT metadata FROM payloads WHERE memory_id=%s AND "
                                      "payload_id=%s", (self.memory_id, pid)).fetchone()
            stored, metadata = found is not None, found and found["metadata"]
        return load_metadata(metadata) if stored else None

    def key_payloads(self, scope: str, key: str) -> dict[str, dict[str, Any]]:
        """``{payload_id: {"value", "quote"}}`` of every item of (scope, key), as the SQL unit
        of work reads it, writing only held rows of that key first (an owner restating a
        claim compares its quote: the full flush split a batch's statements); payloads still
        held come from the held rows."""
        held = self._deferred
        if held is None:
            return super().key_payloads(scope, key)
        self.settle(scope, key)
        waiting = {p[_PAYLOAD_ID]: p for p in held.payloads}
        out: dict[str, dict[str, Any]] = {}
        for r in self.conn.execute(_KEY_PAYLOADS, (self.memory_id, scope, key)):
            pid = r["payload_id"]
            if r["stored"]:
                out[pid] = {"value": json.loads(r["value"]), "quote": r["quote"]}
            elif pid in waiting:
                out[pid] = {"value": json.loads(waiting[pid][3]), "quote": waiting[pid][4]}
        return out

    def erase(self, item_ids: list[str], scopes: Sequence[str] | None,
              at: str) -> dict[str, Any]:
        """Erases as the SQL unit of work does; every prefetched projection is dropped."""
        self._prefetched = {}
        return super().erase(item_ids, scopes, at)

    def projection_for(self, scope: str, key: str, claim_id: str | None = None) -> Projection:
        """The read model of one (scope, key): items, revision, cardinality, tombstones
        (one round trip after the label keys); the last three by label refs. ``claim_id``:
        only the items of that claim (a partial projection, ``Writer._projection``), from
        ``prefetch_claims`` when it read it (the whole key too, when it is declared
        single). A prefetched one is served without writing the key's held rows first
        (``save`` keeps it true); a read from the table writes them."""
        p = Projection(label_keys=self.label_keys)
        sref, kref = p.refs(scope, key)
        p.names.update({sref: scope, kref: key})
        rows = (self._prefetched.get((scope, key), {}).pop(claim_id, None)
                if self._prefetched else None)
        if rows is None:
            self.settle(scope, key)
            query = _BY_CLAIM if claim_id is not None else _WHOLE_KEY
            rows = [(row["t"], row["r"]) for row in self.conn.execute(query, {
                "m": self.memory_id, "s": scope, "k": key, "sr": sref, "kr": kref,
                "c": claim_id})]
        for t, r in rows:
            if t == "i":
                rec = row_to_item(r)
                p.items[rec.item_id] = rec
            elif t == "r":
                p.keys[(sref, kref)] = KeyRecord(sref, kref, r["revision"])
            elif t == "c":
                p.cardinality[kref] = (r["cardinality"], r["on_change"])
            else:
                p.tombstones.add((sref, kref, r["claim_id"]))
        return p

