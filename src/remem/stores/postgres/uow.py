"""The PostgreSQL unit of work: one transaction per decision, serialised per memory.

``PostgresStore.unit_of_work`` opens a transaction and takes ``SELECT ... FOR UPDATE`` on the
memory's row, so writers of one memory (in any process or host) take turns while writers of
other memories run in parallel; reads inside the transaction then see the latest committed
state (READ COMMITTED takes a snapshot per statement). The ledger's primary key
(memory_id, seq) is the backstop: a colliding append raises ``UniqueViolation``, translated to
``HeadMoved`` and the whole transaction rolls back, so nothing staged stays behind.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg import errors as pgerr

from remem.domain.canonical import ZERO_HASH, event_hash
from remem.domain.events import Event
from remem.domain.fold import ItemRecord, KeyRecord, Projection
from remem.errors import HeadMoved
from remem.stores.sqlite.rows import ITEM_COLUMNS, row_to_item

_UPSERT_ITEM = (
    f"INSERT INTO items(memory_id, {', '.join(ITEM_COLUMNS)}) "
    f"VALUES ({', '.join(['%s'] * (len(ITEM_COLUMNS) + 1))}) "
    f"ON CONFLICT (memory_id, item_id) DO UPDATE SET "
    + ", ".join(f"{c} = EXCLUDED.{c}" for c in ITEM_COLUMNS if c != "item_id"))


_PROJECTION = (
    "SELECT 'i' AS t, to_jsonb(i) AS r FROM items i WHERE memory_id=%(m)s AND scope=%(s)s "
    "AND key=%(k)s UNION ALL SELECT 'r', jsonb_build_object('revision', revision) FROM "
    "key_revisions WHERE memory_id=%(m)s AND scope=%(s)s AND key=%(k)s UNION ALL SELECT 'c', "
    "jsonb_build_object('cardinality', cardinality, 'on_change', on_change) FROM keys WHERE "
    "memory_id=%(m)s AND key=%(k)s UNION ALL SELECT 't', jsonb_build_object('claim_id', "
    "claim_id) FROM tombstones WHERE memory_id=%(m)s AND scope=%(s)s AND key=%(k)s")


def item_params(memory_id: str, rec: ItemRecord) -> tuple:
    """Row parameters of an item (booleans stay booleans on PostgreSQL)."""
    return (memory_id, *(getattr(rec, c) for c in ITEM_COLUMNS))


class PostgresUnitOfWork:
    """Transaction-scoped access to one memory. Created by ``PostgresStore.unit_of_work``.

    Attributes:
        conn: the transaction's connection (dict rows).
        memory_id: the memory written to.
        mno: the memory's number (names its partitions).
        memory: the locked ``memories`` row's ``embedding_model``, ``dimensions`` and
            ``vector_seq``; only holders of the row lock change them, so the copy stays true
            for the transaction (the search writer keeps it up to date).
    """

    def __init__(self, conn: psycopg.Connection, memory_id: str, locked: dict[str, Any]) -> None:
        self.conn = conn
        self.memory_id = memory_id
        self.mno: int = locked["mno"]
        self.memory = {k: locked[k] for k in ("embedding_model", "dimensions", "vector_seq")}
        self._head = (locked["seq"], locked["hash"]) if locked["seq"] else (0, ZERO_HASH)

    # --- ledger -------------------------------------------------------------------------
    def head(self) -> tuple[int, str]:
        """(seq, hash) of the last event; (0, zero hash) for an empty ledger. Read with the
        memory's lock: only this transaction appends until it ends."""
        return self._head

    def append(self, events: Sequence[Event], *, actor: str, at: str,
               expected_seq: int) -> list[dict[str, Any]]:
        """Appends events after ``expected_seq``.

        Raises:
            HeadMoved: the ledger head is no longer ``expected_seq``, or another writer
                appended the same seq first (retryable; the transaction is rolled back).
        """
        seq, prev = self.head()
        if seq != expected_seq:
            raise HeadMoved(f"Ledger head moved from {expected_seq} to {seq}; decide again.",
                            expected_seq=expected_seq, head_seq=seq)
        stored, params = [], []
        for ev in events:
            seq += 1
            rec = {"memory": self.memory_id, "seq": seq, "type": ev.type.value,
                   "data": ev.wire_data(), "actor": actor, "at": at, "prev_hash": prev}
            rec["hash"] = prev = event_hash(prev, rec)
            params.append((self.memory_id, seq, rec["type"],
                           json.dumps(rec["data"], sort_keys=True), actor, at,
                           rec["prev_hash"], rec["hash"]))
            stored.append(rec)
        if not params:
            return stored
        rows = ", ".join(["(%s,%s,%s,%s,%s,%s,%s,%s)"] * len(params))
        try:  # one multi-row statement: one round trip, and no pipeline left aborted
            self.conn.execute("INSERT INTO ledger(memory_id, seq, type, data, actor, at, "
                              f"prev_hash, hash) VALUES {rows}",
                              [v for row in params for v in row])
        except pgerr.UniqueViolation as exc:
            raise HeadMoved("Another writer appended at the same sequence; decide again.",
                            expected_seq=expected_seq) from exc
        if stored:
            self._head = (stored[-1]["seq"], stored[-1]["hash"])
        return stored

    # --- state ---------------------------------------------------------------------------
    def projection_for(self, scope: str, key: str) -> Projection:
        """The read model of one (scope, key): items, revision, cardinality, tombstones
        (one round trip)."""
        p = Projection()
        for row in self.conn.execute(_PROJECTION, {"m": self.memory_id, "s": scope, "k": key}):
            r = row["r"]
            if row["t"] == "i":
                rec = row_to_item(r)
                p.items[rec.item_id] = rec
            elif row["t"] == "r":
                p.keys[(scope, key)] = KeyRecord(scope, key, r["revision"])
            elif row["t"] == "c":
                p.cardinality[key] = (r["cardinality"], r["on_change"])
            else:
                p.tombstones.add((scope, key, r["claim_id"]))
        return p

    def item_key(self, item_id: str) -> tuple[str, str] | None:
        row = self.conn.execute("SELECT scope, key FROM items WHERE memory_id=%s AND "
                                "item_id=%s", (self.memory_id, item_id)).fetchone()
        return (row["scope"], row["key"]) if row else None

    def save(self, p: Projection) -> None:
        """Writes the rows a fold touched (items, revisions, keys, tombstones, provenance)."""
        save_projection(self.conn, self.memory_id, p)

    # --- payloads ------------------------------------------------------------------------
    def put_payload(self, payload_id: str, item_id: str, value: Any, quote: str | None,
                    salt: bytes) -> None:
        self.conn.execute(
            "INSERT INTO payloads(memory_id, payload_id, item_id, value, quote, salt) "
            "VALUES (%s,%s,%s,%s,%s,%s) ON CONFLICT DO NOTHING",
            (self.memory_id, payload_id, item_id, json.dumps(value, ensure_ascii=False), quote,
             salt))

    # --- erasure -------------------------------------------------------------------------
    def erase(self, item_ids: list[str], scopes: Sequence[str] | None) -> dict[str, Any]:
        """Erases every surface of the items (payloads, provenance, full text, vectors,
        sources of ``scopes`` (None: every scope) naming or containing them, pinned renders,
        idempotency digests) and records the physical scrub owed
        (``PostgresStore.scrub_after_erasure``); returns counts."""
        from remem.stores.postgres.erasure import erase_items

        return erase_items(self.conn, self.memory_id, item_ids, scopes, _now_iso())

    # --- idempotency ---------------------------------------------------------------------
    def idempotency_get(self, idem_key: str) -> tuple[str, dict[str, Any]] | None:
        row = self.conn.execute("SELECT digest, result FROM idempotency WHERE memory_id=%s AND "
                                "idem_key=%s", (self.memory_id, idem_key)).fetchone()
        return (row["digest"], json.loads(row["result"])) if row else None

    def idempotency_put(self, idem_key: str, digest: str, result: dict[str, Any],
                        item_id: str | None, at: str) -> None:
        self.conn.execute(
            "INSERT INTO idempotency(memory_id, idem_key, digest, result, item_id, created_at) "
            "VALUES (%s,%s,%s,%s,%s,%s)",
            (self.memory_id, idem_key, digest, json.dumps(result), item_id, at))


def _now_iso() -> str:
    from datetime import UTC, datetime

    from remem.domain.timefmt import to_iso

    return to_iso(datetime.now(UTC))


def save_projection(conn: psycopg.Connection, memory_id: str, p: Projection) -> None:
    """Writes touched rows of a projection (shared by the write path and rebuild): every
    statement is sent in one pipeline and synchronised once."""
    upserts, deletes = [], []
    for item_id in sorted(p.touched_items):
        rec = p.items.get(item_id)
        if rec is None:
            deletes.append((memory_id, item_id))
        else:
            upserts.append(item_params(memory_id, rec))
    with conn.pipeline(), conn.cursor() as cur:  # one round trip for every statement
        if deletes:
            cur.executemany("DELETE FROM items WHERE memory_id=%s AND item_id=%s", deletes)
        if upserts:
            cur.executemany(_UPSERT_ITEM, upserts)
        if p.forgotten:
            cur.execute("DELETE FROM provenance WHERE memory_id=%s AND item_id = ANY(%s)",
                        (memory_id, sorted(p.forgotten)))
        if p.touched_keys:
            cur.executemany(
                "INSERT INTO key_revisions(memory_id, scope, key, revision) VALUES (%s,%s,%s,%s)"
                " ON CONFLICT (memory_id, scope, key) DO UPDATE SET revision = EXCLUDED.revision",
                [(memory_id, s, k, p.keys[(s, k)].revision) for s, k in sorted(p.touched_keys)])
        if p.new_cardinality:
            cur.executemany(
                "INSERT INTO keys(memory_id, key, cardinality, on_change) VALUES (%s,%s,%s,%s) "
                "ON CONFLICT DO NOTHING",
                [(memory_id, k, *p.cardinality[k]) for k in sorted(p.new_cardinality)])
        if p.new_tombstones:
            cur.executemany(
                "INSERT INTO tombstones(memory_id, scope, key, claim_id) VALUES (%s,%s,%s,%s) "
                "ON CONFLICT DO NOTHING",
                [(memory_id, *t) for t in sorted(p.new_tombstones)])
        prov = [(memory_id, pr.item_id, pr.seq, pr.source_id, pr.source_role, pr.seen_at)
                for pr in p.new_provenance if pr.item_id in p.items]
        if prov:
            cur.executemany("INSERT INTO provenance(memory_id, item_id, seq, source_id, "
                            "source_role, seen_at) VALUES (%s,%s,%s,%s,%s,%s)", prov)
