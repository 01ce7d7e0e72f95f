"""The SQLite unit of work: one BEGIN IMMEDIATE transaction per decision.

Reads the key's state at the ledger head, appends the decision's events at that head,
stores payloads and writes the folded read-model rows; all commit together or not at all.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from remem.domain.canonical import ZERO_HASH, event_hash
from remem.domain.events import Event
from remem.domain.fold import ItemRecord, KeyRecord, Projection, ProvenanceRecord
from remem.errors import HeadMoved
from remem.stores.sqlite.rows import ITEM_COLUMNS, item_to_row, row_to_item

_INSERT_ITEM = (f"INSERT OR REPLACE INTO items(memory_id, {', '.join(ITEM_COLUMNS)}) "
                f"VALUES ({', '.join('?' * (len(ITEM_COLUMNS) + 1))})")


class SQLiteUnitOfWork:
    """Transaction-scoped access to one memory. Created by ``SQLiteStore.unit_of_work``."""

    def __init__(self, conn: sqlite3.Connection, memory_id: str) -> None:
        self.conn = conn
        self.memory_id = memory_id

    # --- ledger -------------------------------------------------------------------------
    def head(self) -> tuple[int, str]:
        """(seq, hash) of the last event; (0, zero hash) for an empty ledger."""
        row = self.conn.execute(
            "SELECT seq, hash FROM ledger WHERE memory_id=? ORDER BY seq DESC LIMIT 1",
            (self.memory_id,)).fetchone()
        return (row[0], row[1]) if row else (0, ZERO_HASH)

    def append(self, events: Sequence[Event], *, actor: str, at: str,
               expected_seq: int) -> list[dict[str, Any]]:
        """Appends events after ``expected_seq``.

        Raises:
            HeadMoved: the ledger head is no longer ``expected_seq`` (retryable).
        """
        seq, prev = self.head()
        if seq != expected_seq:
            raise HeadMoved(f"Ledger head moved from {expected_seq} to {seq}; decide again.",
                            expected_seq=expected_seq, head_seq=seq)
        stored = []
        for ev in events:
            seq += 1
            rec = {"memory": self.memory_id, "seq": seq, "type": ev.type.value,
                   "data": ev.wire_data(), "actor": actor, "at": at}
            rec["prev_hash"] = prev
            rec["hash"] = prev = event_hash(prev, rec)
            try:
                self.conn.execute(
                    "INSERT INTO ledger(memory_id, seq, type, data, actor, at, prev_hash, hash)"
                    " VALUES (?,?,?,?,?,?,?,?)",
                    (self.memory_id, seq, rec["type"], json.dumps(rec["data"], sort_keys=True),
                     actor, at, rec["prev_hash"], rec["hash"]))
            except sqlite3.IntegrityError as exc:
                raise HeadMoved("Another writer appended at the same sequence; decide again.",
                                expected_seq=expected_seq) from exc
            stored.append(rec)
        return stored

    # --- state ---------------------------------------------------------------------------
    def projection_for(self, scope: str, key: str) -> Projection:
        """The read model of one (scope, key): items, revision, cardinality, tombstones."""
        p = Projection()
        m = self.memory_id
        for row in self.conn.execute("SELECT * FROM items WHERE memory_id=? AND scope=? AND key=?",
                                     (m, scope, key)):
            rec = row_to_item(row)
            p.items[rec.item_id] = rec
        row = self.conn.execute("SELECT revision FROM key_revisions WHERE memory_id=? AND "
                                "scope=? AND key=?", (m, scope, key)).fetchone()
        if row:
            p.keys[(scope, key)] = KeyRecord(scope, key, row[0])
        row = self.conn.execute("SELECT cardinality, on_change FROM keys WHERE memory_id=? AND "
                                "key=?", (m, key)).fetchone()
        if row:
            p.cardinality[key] = (row[0], row[1])
        for (claim,) in self.conn.execute("SELECT claim_id FROM tombstones WHERE memory_id=? AND "
                                          "scope=? AND key=?", (m, scope, key)):
            p.tombstones.add((scope, key, claim))
        return p

    def item_key(self, item_id: str) -> tuple[str, str] | None:
        row = self.conn.execute("SELECT scope, key FROM items WHERE memory_id=? AND item_id=?",
                                (self.memory_id, item_id)).fetchone()
        return (row[0], row[1]) if row else None

    def save(self, p: Projection) -> None:
        """Writes the rows a fold touched (items, revisions, keys, tombstones, provenance)."""
        save_projection(self.conn, self.memory_id, p)

    # --- payloads ------------------------------------------------------------------------
    def put_payload(self, payload_id: str, item_id: str, value: Any, quote: str | None,
                    salt: bytes) -> None:
        self.conn.execute(
            "INSERT OR IGNORE INTO payloads(memory_id, payload_id, item_id, value, quote, salt)"
            " VALUES (?,?,?,?,?,?)",
            (self.memory_id, payload_id, item_id, json.dumps(value, ensure_ascii=False), quote,
             salt))

    # --- erasure -------------------------------------------------------------------------
    def erase(self, item_ids: list[str], scopes: Sequence[str] | None) -> dict[str, Any]:
        """Erases every surface of the items (payloads, provenance, full text, vectors,
        sources of ``scopes`` (None: every scope) naming or containing them, pinned renders,
        idempotency digests) and records the scrub owed; returns counts."""
        from remem.stores.sqlite.erasure import erase_items

        return erase_items(self.conn, self.memory_id, item_ids, scopes, _now_iso())

    # --- idempotency ---------------------------------------------------------------------
    def idempotency_get(self, idem_key: str) -> tuple[str, dict[str, Any]] | None:
        row = self.conn.execute("SELECT digest, result FROM idempotency WHERE memory_id=? AND "
                                "idem_key=?", (self.memory_id, idem_key)).fetchone()
        return (row[0], json.loads(row[1])) if row else None

    def idempotency_put(self, idem_key: str, digest: str, result: dict[str, Any],
                        item_id: str | None, at: str) -> None:
        self.conn.execute(
            "INSERT INTO idempotency(memory_id, idem_key, digest, result, item_id, created_at) "
            "VALUES (?,?,?,?,?,?)",
            (self.memory_id, idem_key, digest, json.dumps(result), item_id, at))


def _now_iso() -> str:
    from datetime import UTC, datetime

    from remem.domain.timefmt import to_iso

    return to_iso(datetime.now(UTC))


def save_projection(conn: sqlite3.Connection, memory_id: str, p: Projection) -> None:
    """Writes touched rows of a projection (shared by the write path and rebuild)."""
    for item_id in sorted(p.touched_items):
        rec: ItemRecord | None = p.items.get(item_id)
        if rec is None:
            conn.execute("DELETE FROM items WHERE memory_id=? AND item_id=?", (memory_id, item_id))
        else:
            conn.execute(_INSERT_ITEM, item_to_row(memory_id, rec))
    for item_id in sorted(p.forgotten):
        conn.execute("DELETE FROM provenance WHERE memory_id=? AND item_id=?",
                     (memory_id, item_id))
    for scope, key in sorted(p.touched_keys):
        conn.execute("INSERT OR REPLACE INTO key_revisions(memory_id, scope, key, revision) "
                     "VALUES (?,?,?,?)", (memory_id, scope, key, p.keys[(scope, key)].revision))
    for key in sorted(p.new_cardinality):
        card, on_change = p.cardinality[key]
        conn.execute("INSERT OR IGNORE INTO keys(memory_id, key, cardinality, on_change) "
                     "VALUES (?,?,?,?)", (memory_id, key, card, on_change))
    for scope, key, claim in sorted(p.new_tombstones):
        conn.execute("INSERT OR IGNORE INTO tombstones(memory_id, scope, key, claim_id) "
                     "VALUES (?,?,?,?)", (memory_id, scope, key, claim))
    pr: ProvenanceRecord
    for pr in p.new_provenance:
        if pr.item_id in p.items:
            conn.execute("INSERT INTO provenance(memory_id, item_id, seq, source_id, "
                         "source_role, seen_at) VALUES (?,?,?,?,?,?)",
                         (memory_id, pr.item_id, pr.seq, pr.source_id, pr.source_role,
                          pr.seen_at))
