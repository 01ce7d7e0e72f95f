"""The unit of work both backends share: one transaction on one memory.

It stores what the service and the domain built - ledger rows chained by
:func:`remem.domain.ledger.chain`, payloads, folded read-model rows, idempotency results -
and reads the key state a decision needs. It computes no hash, assigns no sequence number,
reads no clock and mints no id. A unique violation on the ledger key (another writer took the
seq) becomes ``HeadMoved`` in one place, :meth:`SqlUnitOfWork.insert_events`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from remem.domain.filters import dump_metadata, load_metadata
from remem.domain.fold import KeyRecord, Projection
from remem.domain.labels import LabelKeys
from remem.domain.ledger import EMPTY, Head, encode_data
from remem.errors import HeadMoved
from remem.stores.sql.dialect import Dialect
from remem.stores.sql.rows import UPSERT_ITEM, item_to_row, row_to_item

_INSERT_EVENT = ("INSERT INTO ledger(memory_id, seq, type, data, actor, at, prev_hash, hash) "
                 "VALUES ")
#: A key's revision, cardinality and tombstones in one statement (by label refs).
_KEY_ROWS = ("SELECT 'r' AS t, revision AS a, NULL AS b FROM key_revisions WHERE memory_id=? "
             "AND scope=? AND key=? UNION ALL SELECT 'c', cardinality, on_change FROM keys "
             "WHERE memory_id=? AND key=? UNION ALL SELECT 't', claim_id, NULL FROM tombstones "
             "WHERE memory_id=? AND scope=? AND key=?")
#: Ledger rows per INSERT statement (8 parameters each: under SQLite's 32,766 and
#: PostgreSQL's 65,535 parameters).
_ROWS_PER_INSERT = 1000
_INSERT_PAYLOAD = ("INSERT INTO payloads(memory_id, payload_id, item_id, value, quote, salt, "
                   "metadata, fact, tz_offset_min) VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT DO "
                   "NOTHING")


@dataclass
class _Deferred:
    """Rows a batch holds back until ``SqlUnitOfWork.flush``."""

    events: list[tuple] = field(default_factory=list)
    labels: dict[str, Any] = field(default_factory=dict)
    payloads: list[tuple] = field(default_factory=list)
    #: Buffers of other writers in this transaction (``SqlUnitOfWork.held``), by name.
    others: dict[str, Any] = field(default_factory=dict)
    #: Read-model rows of the batch's decisions (``SqlUnitOfWork.save``).
    saves: _HeldSaves = field(default_factory=lambda: _HeldSaves())


@dataclass
class _HeldSaves:
    """The rows ``save_projection`` would write for each decision of a batch, merged: an item
    row or a key revision written again replaces the held one (every column of an item is
    upserted, so the last row is the row that stays), a key's cardinality and a tombstone
    keep the first (``ON CONFLICT DO NOTHING``), provenance rows append in order. Item,
    revision, cardinality and tombstone reads of a (scope, key) this holds rows of flush it
    first (``SqlUnitOfWork.settle``)."""

    items: dict[str, tuple] = field(default_factory=dict)
    item_keys: set[tuple[str, str]] = field(default_factory=set)
    revisions: dict[tuple[str, str], tuple] = field(default_factory=dict)
    cardinality: dict[str, tuple] = field(default_factory=dict)
    tombstones: dict[tuple[str, str, str], tuple] = field(default_factory=dict)
    tombstone_keys: set[tuple[str, str]] = field(default_factory=set)
    provenance: list[tuple] = field(default_factory=list)

    def add(self, memory_id: str, p: Projection, dialect: Dialect) -> None:
        """Holds the rows of ``p`` that ``save_projection`` writes (no deletes: a projection
        that deletes rows is saved at once, see ``SqlUnitOfWork.save``)."""
        for i in sorted(p.touched_items):
            rec = p.items[i]
            self.items.pop(i, None)
            self.items[i] = item_to_row(memory_id, rec, dialect)
            self.item_keys.add((rec.scope, rec.key))
        for s, k in sorted(p.touched_keys):
            self.revisions.pop((s, k), None)
            self.revisions[(s, k)] = (memory_id, s, k, p.keys[(s, k)].revision)
        for k in sorted(p.new_cardinality):
            self.cardinality.setdefault(k, (memory_id, k, *p.cardinality[k]))
        for t in sorted(p.new_tombstones):
            self.tombstones.setdefault(t, (memory_id, *t))
            self.tombstone_keys.add(t[:2])
        self.provenance += [(memory_id, pr.item_id, pr.seq, pr.source_id, pr.source_role,
                             pr.seen_at) for pr in p.new_provenance if pr.item_id in p.items]

    def touches(self, scope: str, key: str, refs: tuple[str, str]) -> bool:
        """Whether a read of (scope, key) (``refs``: its label refs) would miss held rows."""
        return ((scope, key) in self.item_keys or refs in self.revisions
                or refs[1] in self.cardinality or refs in self.tombstone_keys)

    def __bool__(self) -> bool:
        return bool(self.items or self.revisions or self.cardinality or self.tombstones
                    or self.provenance)


def load_label_keys(dialect: Dialect, conn: Any, memory_id: str) -> LabelKeys:
    """The memory's label keys: keyed with its claim secret when it was created with keyed
    labels (``memory_secrets.keyed_labels``), else raw labels (a memory older than issue 15)."""
    row = dialect.execute(conn, "SELECT claim_secret, keyed_labels FROM memory_secrets WHERE "
                                "memory_id=?", (memory_id,)).fetchone()
    keyed = row is not None and bool(row["keyed_labels"])
    return LabelKeys(memory_id, bytes(row["claim_secret"]) if keyed else None)


def load_label_names(dialect: Dialect, conn: Any, memory_id: str) -> dict[str, str]:
    """{ref: label} of every label the memory still holds (the labels table)."""
    return {r["ref"]: r["label"] for r in dialect.execute(
        conn, "SELECT ref, label FROM labels WHERE memory_id=?", (memory_id,)).fetchall()}


def is_unique_violation(exc: BaseException) -> bool:
    """Whether a driver error is a unique/primary-key violation (sqlite3 IntegrityError,
    psycopg ``UniqueViolation`` / SQLSTATE 23505)."""
    if getattr(exc, "sqlstate", None) == "23505":
        return True
    return type(exc).__name__ == "IntegrityError" and "UNIQUE" in str(exc).upper()


class SqlUnitOfWork:
    """Transaction-scoped access to one memory (``Store.unit_of_work``); a backend sets
    ``erasure`` to its erasure module.

    Attributes:
        conn: the transaction's driver connection.
        memory_id: the memory written to.
        dialect: how the backend spells the shared SQL.
    """

    erasure: Any = None

    def __init__(self, conn: Any, memory_id: str, dialect: Dialect,
                 head: tuple[int, str] | None = None) -> None:
        self.conn = conn
        self.memory_id = memory_id
        self.dialect = dialect
        self._head: Head | None = Head(*head) if head is not None else None
        self._label_keys: LabelKeys | None = None
        #: Rows held back by :meth:`defer_inserts` until :meth:`flush` (None: insert at once).
        self._deferred: _Deferred | None = None

    def _x(self, text: str, args: Sequence[Any] | dict[str, Any] = ()) -> Any:
        return self.dialect.execute(self.conn, text, args)

    @property
    def label_keys(self) -> LabelKeys:
        """How the memory names scopes and keys in its ledger (read once per transaction)."""
        if self._label_keys is None:
            self._label_keys = load_label_keys(self.dialect, self.conn, self.memory_id)
        return self._label_keys

    # --- ledger -------------------------------------------------------------------------
    def head(self) -> tuple[int, str]:
        """(seq, hash) of the last event; (0, zero hash) for an empty ledger. Writers of a
        memory are serialised, so it stays true until this transaction appends."""
        if self._head is None:
            row = self._x("SELECT seq, hash FROM ledger WHERE memory_id=? ORDER BY seq DESC "
                          "LIMIT 1", (self.memory_id,)).fetchone()
            self._head = Head(row["seq"], row["hash"]) if row else EMPTY
        return tuple(self._head)  # type: ignore[return-value]

    def insert_events(self, stored: Sequence[dict[str, Any]]) -> None:
        """Inserts chained events (``domain.ledger.chain``) in one statement.

        Raises:
            HeadMoved: another writer already holds one of the seqs (retryable; the
                transaction rolls back, so nothing staged stays behind).
        """
        if not stored:
            return
        rows = [(self.memory_id, r["seq"], r["type"], encode_data(r["data"]), r["actor"],
                 r["at"], r["prev_hash"], r["hash"]) for r in stored]
        named = {ref: fl for r in stored for ref, fl in (r.get("labels") or {}).items()}
        if self._deferred is not None:
            self._deferred.events += rows
            self._deferred.labels.update(named)
        else:
            self._insert_ledger_rows(rows)
            self._insert_labels(named)
        self._head = Head(stored[-1]["seq"], stored[-1]["hash"])

    def _insert_ledger_rows(self, rows: list[tuple]) -> None:
        """Inserts ledger rows in one statement; a taken seq becomes ``HeadMoved``."""
        try:
            for start in range(0, len(rows), _ROWS_PER_INSERT):
                part = rows[start:start + _ROWS_PER_INSERT]
                self._x(_INSERT_EVENT + ", ".join(["(?,?,?,?,?,?,?,?)"] * len(part)),
                        [v for r in part for v in r])
        except Exception as exc:
            if not is_unique_violation(exc):
                raise
            raise HeadMoved("Another writer appended at the same sequence; decide again.",
                            head_seq=rows[0][1] - 1) from exc

    def _insert_labels(self, named: dict[str, Any]) -> None:
        """The raw labels of sealed events, beside the ledger (erasable)."""
        if named:
            with _cursor(self.conn) as cur:
                cur.executemany(self.dialect.sql(
                    "INSERT INTO labels(memory_id, ref, field, label) VALUES (?,?,?,?) "
                    "ON CONFLICT DO NOTHING"),
                    [(self.memory_id, ref, f, label) for ref, (f, label) in sorted(named.items())])

    # --- batched inserts -----------------------------------------------------------------
    def defer_inserts(self) -> None:
        """Holds ledger, label and payload rows back until :meth:`flush`, which inserts each
        kind at once (a batch of decisions in one transaction). Payload reads in this
        transaction flush the payloads first; nothing in a write reads the others."""
        self._deferred = _Deferred()

    def flush(self) -> None:
        """Inserts the rows held back by :meth:`defer_inserts` (same rows) and stops holding.

        Raises:
            HeadMoved: another writer took one of the seqs (retryable; the transaction
                rolls back).
        """
        held = self._deferred
        if held is None:
            return
        self.settle()
        self._deferred = None
        if held.events:
            self._insert_ledger_rows(held.events)
        self._insert_labels(held.labels)
        self._insert_payloads(held.payloads)
        for other in held.others.values():
            other.flush()

    def held(self, name: str, make: Callable[[], Any]) -> Any:
        """The buffer another writer of this transaction (the search index) holds its rows in
        while inserts are deferred: made by ``make()`` on first use, and its ``flush()`` called
        by :meth:`flush` after the ledger, label and payload rows. None when not deferring
        (that writer inserts at once)."""
        if self._deferred is None:
            return None
        if name not in self._deferred.others:
            self._deferred.others[name] = make()
        return self._deferred.others[name]

    def _insert_payloads(self, rows: list[tuple]) -> None:
        if rows:
            with _cursor(self.conn) as cur:
                cur.executemany(self.dialect.sql(_INSERT_PAYLOAD), rows)

    def _flush_payloads(self) -> None:
        """Inserts held payload rows (and read-model rows: every payload read joins items or
        precedes an erasure) before a read of the payloads table."""
        self.settle()
        if self._deferred is not None and self._deferred.payloads:
            rows, self._deferred.payloads = self._deferred.payloads, []
            self._insert_payloads(rows)

    # --- state ---------------------------------------------------------------------------
    def projection_for(self, scope: str, key: str, claim_id: str | None = None) -> Projection:
        """The read model of one (scope, key): items, revision, cardinality, tombstones (the
        last three by label refs). ``claim_id``: only the items of that claim (a partial
        projection: what a decision on a multi key needs, ``Writer._projection``)."""
        self.settle(scope, key)
        p = Projection(label_keys=self.label_keys)
        m = self.memory_id
        sref, kref = p.refs(scope, key)
        p.names.update({sref: scope, kref: key})
        items = ("SELECT * FROM items WHERE memory_id=? AND scope=? AND key=?", (m, scope, key))
        if claim_id is not None:
            items = ("SELECT * FROM items WHERE memory_id=? AND claim_id=? AND scope=? AND "
                     "key=?", (m, claim_id, scope, key))
        for row in self._x(*items).fetchall():
            rec = row_to_item(row)
            p.items[rec.item_id] = rec
        for r in self._x(_KEY_ROWS, (m, sref, kref, m, kref, m, sref, kref)).fetchall():
            if r["t"] == "r":
                p.keys[(sref, kref)] = KeyRecord(sref, kref, r["a"])
            elif r["t"] == "c":
                p.cardinality[kref] = (r["a"], r["b"])
            else:
                p.tombstones.add((sref, kref, r["a"]))
        return p

    def item_key(self, item_id: str) -> tuple[str, str] | None:
        self.settle()
        row = self._x("SELECT scope, key FROM items WHERE memory_id=? AND item_id=?",
                      (self.memory_id, item_id)).fetchone()
        return (row["scope"], row["key"]) if row else None

    def save(self, p: Projection) -> None:
        """Writes the rows a fold touched (items, revisions, keys, tombstones, provenance);
        while inserts are deferred (a batch) they are held and written together, unless the
        fold deletes rows (a forget: saved at once, after what is held)."""
        held = self._deferred.saves if self._deferred is not None else None
        if held is None or p.forgotten or any(i not in p.items for i in p.touched_items):
            self.settle()
            save_projection(self.conn, self.dialect, self.memory_id, p)
            return
        held.add(self.memory_id, p, self.dialect)

    def _write_held_rows(self, *args: Any) -> None:
        """Writes held read-model rows (``write_rows``'s arguments); a backend may send them
        in fewer statements (PostgreSQL: ``stores/postgres/bulk_rows.py``)."""
        write_rows(*args)

    def settle(self, scope: str | None = None, key: str | None = None) -> None:
        """Writes the held read-model rows before a read that could miss them: any read, or
        with ``scope`` and ``key`` a read of that key's items, revision, cardinality and
        tombstones (only when rows of it are held)."""
        held = self._deferred.saves if self._deferred is not None else None
        if not held:
            return
        if scope is not None and key is not None and not held.touches(
                scope, key, (self.label_keys.ref("scope", scope),
                             self.label_keys.ref("key", key))):
            return
        self._deferred.saves = _HeldSaves()
        self._write_held_rows(self.conn, self.dialect, [], list(held.items.values()), [],
                   list(held.revisions.values()), list(held.cardinality.values()),
                   list(held.tombstones.values()), held.provenance)

    # --- payloads ------------------------------------------------------------------------
    def put_payload(self, payload_id: str, item_id: str, value: Any, quote: str | None,
                    salt: bytes, metadata: dict[str, Any] | None = None,
                    fact: dict[str, Any] | None = None,
                    tz_offset_min: int | None = None) -> None:
        """Inserts a payload row; ``fact``: the fact attributes (``domain.fact.FactAttrs``
        JSON: type, content_ref, size, content_hash) or None; ``tz_offset_min``: the UTC
        offset the statement's time gave (rendering only) or None."""
        row = (self.memory_id, payload_id, item_id, json.dumps(value, ensure_ascii=False),
               quote, salt, dump_metadata(metadata),
               json.dumps(fact, sort_keys=True) if fact else None, tz_offset_min)
        if self._deferred is not None:
            self._deferred.payloads.append(row)
        else:
            self._x(_INSERT_PAYLOAD, row)

    def content_refs(self, item_ids: Sequence[str]) -> list[str]:
        """Blob references of the items' payloads (read before an erasure deletes them)."""
        self._flush_payloads()
        refs: list[str] = []
        for item_id in item_ids:
            for r in self._x("SELECT fact FROM payloads WHERE memory_id=? AND item_id=? AND "
                             "fact IS NOT NULL", (self.memory_id, item_id)).fetchall():
                ref = json.loads(r["fact"]).get("content_ref")
                if ref:
                    refs.append(ref)
        return refs

    def payload_metadata(self, item_id: str) -> dict[str, Any] | None:
        """The metadata of an item's payload (None: none, or erased)."""
        self._flush_payloads()
        row = self._x("SELECT p.metadata FROM items i JOIN payloads p ON p.memory_id = "
                      "i.memory_id AND p.payload_id = i.payload_id WHERE i.memory_id=? AND "
                      "i.item_id=?", (self.memory_id, item_id)).fetchone()
        return load_metadata(row["metadata"]) if row else None

    # --- reads of one key in this transaction (per-slot bounds at the head) ---------------
    def key_payloads(self, scope: str, key: str) -> dict[str, dict[str, Any]]:
        """``{payload_id: {"value", "quote"}}`` of every item of (scope, key)."""
        self._flush_payloads()
        rows = self._x("SELECT p.payload_id, p.value, p.quote FROM items i JOIN payloads p ON "
                       "p.memory_id = i.memory_id AND p.payload_id = i.payload_id WHERE "
                       "i.memory_id=? AND i.scope=? AND i.key=?",
                       (self.memory_id, scope, key)).fetchall()
        return {r["payload_id"]: {"value": json.loads(r["value"]), "quote": r["quote"]}
                for r in rows}

    def key_provenance(self, scope: str, key: str) -> dict[str, list[dict[str, Any]]]:
        """``{item_id: [{seq, source_id, source_role, seen_at}]}`` of the items of (scope,
        key), each list in seq order (the rows ``Store.provenance`` returns)."""
        self.settle()
        rows = self._x("SELECT p.item_id, p.seq, p.source_id, p.source_role, p.seen_at FROM "
                       "provenance p JOIN items i ON i.memory_id = p.memory_id AND i.item_id = "
                       "p.item_id WHERE i.memory_id=? AND i.scope=? AND i.key=? ORDER BY p.seq",
                       (self.memory_id, scope, key)).fetchall()
        out: dict[str, list[dict[str, Any]]] = {}
        for r in rows:
            out.setdefault(r["item_id"], []).append(
                {k: r[k] for k in ("seq", "source_id", "source_role", "seen_at")})
        return out

    # --- erasure -------------------------------------------------------------------------
    def erase(self, item_ids: list[str], scopes: Sequence[str] | None,
              at: str) -> dict[str, Any]:
        """Erases every surface of the items (payloads, provenance, full text, vectors,
        sources of ``scopes`` (None: every scope) naming or containing them, pinned renders,
        idempotency digests) with the backend's ``erasure`` module, and records the scrub
        owed; ``at`` is the erasure time (ISO-8601 UTC, from the service).
        Returns counts per surface plus ``_source_ids``. The items' idempotency keys are
        re-keyed by label ref (they name the scope and key) and the raw labels no other live
        item uses are erased."""
        self._flush_payloads()
        keys = self.label_keys
        return self.erasure.erase_items(self.conn, self.memory_id, item_ids, scopes, at,
                                        rekey=lambda k: keys.ref("idem", k))

    # --- idempotency ---------------------------------------------------------------------
    def idempotency_get(self, idem_key: str) -> tuple[str, dict[str, Any]] | None:
        """(digest, result) stored under the key, or under its ref once its item was
        forgotten (a forgotten marker names neither scope nor key); None: not seen."""
        ref = self.label_keys.ref("idem", idem_key)
        row = self._x("SELECT digest, result FROM idempotency WHERE memory_id=? AND "
                      "idem_key IN (?, ?)", (self.memory_id, idem_key, ref)).fetchone()
        return (row["digest"], json.loads(row["result"])) if row else None

    def idempotency_put(self, idem_key: str, digest: str, result: dict[str, Any],
                        item_id: str | None, at: str) -> None:
        self._x("INSERT INTO idempotency(memory_id, idem_key, digest, result, item_id, "
                "created_at) VALUES (?,?,?,?,?,?)",
                (self.memory_id, idem_key, digest, json.dumps(result), item_id, at))


def save_projection(conn: Any, dialect: Dialect, memory_id: str, p: Projection) -> None:
    """Writes touched rows of a projection (the write path and rebuild); on PostgreSQL every
    statement goes in one pipeline."""
    write_rows(
        conn, dialect,
        [(memory_id, i) for i in sorted(p.touched_items) if i not in p.items],
        [item_to_row(memory_id, p.items[i], dialect)
         for i in sorted(p.touched_items) if i in p.items],
        [(memory_id, i) for i in sorted(p.forgotten)],
        [(memory_id, s, k, p.keys[(s, k)].revision) for s, k in sorted(p.touched_keys)],
        [(memory_id, k, *p.cardinality[k]) for k in sorted(p.new_cardinality)],
        [(memory_id, *t) for t in sorted(p.new_tombstones)],
        [(memory_id, pr.item_id, pr.seq, pr.source_id, pr.source_role, pr.seen_at)
         for pr in p.new_provenance if pr.item_id in p.items])


def write_rows(conn: Any, dialect: Dialect, deletes: list[tuple], upserts: list[tuple],
               forgotten: list[tuple], revisions: list[tuple], cardinality: list[tuple],
               tombstones: list[tuple], provenance: list[tuple]) -> None:
    """Writes read-model rows (one or many folds' worth), each kind with one statement."""
    q = dialect.sql
    with dialect.batch(conn), _cursor(conn) as cur:
        if deletes:
            cur.executemany(q("DELETE FROM items WHERE memory_id=? AND item_id=?"), deletes)
        if upserts:
            cur.executemany(q(UPSERT_ITEM), upserts)
        if forgotten:
            cur.executemany(q("DELETE FROM provenance WHERE memory_id=? AND item_id=?"),
                            forgotten)
        if revisions:
            cur.executemany(
                q("INSERT INTO key_revisions(memory_id, scope, key, revision) VALUES (?,?,?,?)"
                  " ON CONFLICT (memory_id, scope, key) DO UPDATE SET revision = "
                  "excluded.revision"), revisions)
        if cardinality:
            cur.executemany(
                q("INSERT INTO keys(memory_id, key, cardinality, on_change) VALUES (?,?,?,?) "
                  "ON CONFLICT DO NOTHING"), cardinality)
        if tombstones:
            cur.executemany(
                q("INSERT INTO tombstones(memory_id, scope, key, claim_id) VALUES (?,?,?,?) "
                  "ON CONFLICT DO NOTHING"), tombstones)
        if provenance:
            cur.executemany(q("INSERT INTO provenance(memory_id, item_id, seq, source_id, "
                              "source_role, seen_at) VALUES (?,?,?,?,?,?)"), provenance)


class _cursor:  # noqa: N801 - a context manager over a cursor on either driver
    """``conn.cursor()`` as a context manager (sqlite3 cursors are not one)."""

    def __init__(self, conn: Any) -> None:
        self.cur = conn.cursor()

    def __enter__(self) -> Any:
        return self.cur

    def __exit__(self, *exc: object) -> None:
        self.cur.close()
