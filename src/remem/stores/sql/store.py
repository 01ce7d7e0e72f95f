"""What both stores share above the unit of work: memory admin, reads, rebuild and the raw
ledger rows ``verify`` walks.

A backend subclasses :class:`SqlStore` and provides ``dialect``, ``_write()`` (a transaction),
``_read()`` (a connection for one read) and the hooks named below; only search, erasure and
partitioning stay in the backend packages.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager
from typing import Any

from remem.domain.events import upcast
from remem.domain.filters import ItemFilter, load_metadata
from remem.domain.fold import ItemRecord, Projection
from remem.domain.labels import LabelKeys, resolve
from remem.domain.ledger import ChainBreak, verify_chain
from remem.errors import AlreadyExists, IntegrityError, NotFound
from remem.stores import names_a_row
from remem.stores.sql.dialect import Dialect, as_dict
from remem.stores.sql.rows import row_to_item
from remem.stores.sql.uow import load_label_keys, load_label_names, save_projection

#: The read-model tables ``rebuild`` drops and refolds.
READ_MODEL_TABLES = ("items", "keys", "key_revisions", "tombstones", "provenance")
EVENT_PAGE = 2000
_CHUNK = 500


def not_found(memory_id: str) -> NotFound:
    return NotFound(f"No memory {memory_id!r}; create it with `remem memory create "
                    f"{memory_id}`.", memory=memory_id)


def stored_event(memory_id: str, r: Any) -> dict[str, Any]:
    """A ledger row as the event dict the fold and ``history`` read (data parsed, upcast).

    Raises:
        IntegrityError: the row's data no longer parses (the file was altered).
    """
    try:
        data = json.loads(r["data"])
    except (TypeError, ValueError) as exc:
        raise IntegrityError(
            f"Ledger event seq {r['seq']!r} of memory {memory_id!r} cannot be read: its data "
            "was altered. Run `remem verify` to list every broken link, then restore the "
            "database from a backup.", memory=memory_id, seq=r["seq"]) from exc
    return {"memory": memory_id, "seq": r["seq"], "type": r["type"],
            "data": upcast(r["type"], data), "actor": r["actor"],
            "at": r["at"], "prev_hash": r["prev_hash"], "hash": r["hash"]}


class SqlStore:
    """Shared SQL of ``SQLiteStore`` and ``PostgresStore`` (see the module docstring)."""

    dialect: Dialect
    #: The backend's erasure module (``erase_docs``, ``redact_sources``, ``remaining``).
    erasure: Any

    def _write(self) -> AbstractContextManager[Any]:
        """One transaction: committed on normal exit, rolled back on any exception."""
        raise NotImplementedError

    def _read(self) -> AbstractContextManager[Any]:
        """A connection for reads outside a transaction."""
        raise NotImplementedError

    def _x(self, conn: Any, text: str, args: Any = ()) -> Any:
        return self.dialect.execute(conn, text, args)

    def _all(self, text: str, args: Any = ()) -> list[dict[str, Any]]:
        with self._read() as c:
            return [dict(r) for r in self._x(c, text, args).fetchall()]

    def _one(self, text: str, args: Any = ()) -> dict[str, Any] | None:
        with self._read() as c:
            return as_dict(self._x(c, text, args).fetchone())

    # --- hooks -----------------------------------------------------------------------------
    def _memory_created(self, conn: Any, memory_id: str, row: dict[str, Any]) -> None:
        """Called in the creating transaction (PostgreSQL adds the memory's partitions)."""

    def _lock_memory(self, conn: Any, memory_id: str) -> dict[str, Any]:
        """Locks the memory's row for the transaction (its writers take turns); returns it.

        Raises:
            NotFound: no such memory.
        """
        row = self._x(conn, "SELECT * FROM memories WHERE memory_id=?" + self.dialect.lock_rows,
                      (memory_id,)).fetchone()
        if row is None:
            raise not_found(memory_id)
        return dict(row)

    def _ledger_rows(self, conn: Any, memory_id: str) -> Iterable[Any]:
        """Every ledger row of the memory in seq order, streamed where the driver can."""
        return self._x(conn, "SELECT * FROM ledger WHERE memory_id=? ORDER BY seq",
                       (memory_id,))

    def _scrub_owed(self, conn: Any, memory_id: str, tables: list[str], at: str) -> None:
        """Records, in the erasing transaction, a physical scrub still owed (PostgreSQL)."""

    def _snapshot(self) -> AbstractContextManager[Any]:
        """A connection with one consistent view for a long read (default: ``_read``)."""
        return self._read()

    # --- memory admin ----------------------------------------------------------------------
    def create_memory(self, memory_id: str, config: dict[str, Any], at: str, *,
                      claim_secret: bytes | None = None, tenant_id: str = "default") -> None:
        """Creates the memory row (in ``tenant_id``) and, unless None, its claim-id secret
        (one transaction).

        Raises:
            AlreadyExists: the id is taken.
        """
        with self._write() as c:
            rows = self._x(c, "INSERT INTO memories(memory_id, config, created_at, updated_at, "
                              "tenant_id) VALUES (?,?,?,?,?) ON CONFLICT (memory_id) DO NOTHING "
                              "RETURNING *",
                           (memory_id, json.dumps(config), at, at, tenant_id)).fetchall()
            if not rows:
                raise AlreadyExists(f"Memory {memory_id!r} already exists.", memory=memory_id)
            self._memory_created(c, memory_id, dict(rows[0]))
            if claim_secret is not None:  # keyed claim ids and keyed labels (issue 15)
                self._x(c, "INSERT INTO memory_secrets(memory_id, claim_secret, keyed_labels) "
                           "VALUES (?,?,?)", (memory_id, claim_secret, self.dialect.flag(True)))

    def held_item_ids(self, memory_id: str) -> list[str]:
        """Ids of the memory's items under legal hold (any status), bytewise order."""
        rows = self._all("SELECT item_id FROM items WHERE memory_id=? AND legal_hold=? "
                         "ORDER BY " + self.dialect.bytewise("item_id"),
                         (memory_id, self.dialect.flag(True)))
        return [r["item_id"] for r in rows]

    def claim_secret(self, memory_id: str) -> bytes | None:
        """The memory's claim-id secret; None for a memory created before keyed claim ids."""
        row = self._one("SELECT claim_secret FROM memory_secrets WHERE memory_id=?",
                        (memory_id,))
        return bytes(row["claim_secret"]) if row else None

    def label_keys(self, memory_id: str) -> LabelKeys:
        """How the memory names scopes and keys outside its live items (``domain.labels``)."""
        with self._read() as c:
            return load_label_keys(self.dialect, c, memory_id)

    def memory_config(self, memory_id: str) -> dict[str, Any]:
        """Raises NotFound."""
        row = self._one("SELECT config FROM memories WHERE memory_id=?", (memory_id,))
        if row is None:
            raise not_found(memory_id)
        return self.dialect.load_json(row["config"])

    def memory_tenant(self, memory_id: str) -> str | None:
        """The tenant a memory belongs to; None when there is no such memory."""
        row = self._one("SELECT tenant_id FROM memories WHERE memory_id=?", (memory_id,))
        return row["tenant_id"] if row else None

    def update_memory_config(self, memory_id: str, config: dict[str, Any], at: str) -> None:
        with self._write() as c:
            cur = self._x(c, "UPDATE memories SET config=?, updated_at=? WHERE memory_id=?",
                          (json.dumps(config), at, memory_id))
            if cur.rowcount == 0:
                raise NotFound(f"No memory {memory_id!r}.", memory=memory_id)

    def list_memories(self) -> list[dict[str, Any]]:
        """[{memory_id, created_at, updated_at, tenant_id}] sorted by id (bytewise)."""
        return self._all("SELECT memory_id, created_at, updated_at, tenant_id FROM memories "
                         "ORDER BY "
                         + self.dialect.bytewise("memory_id"))

    # --- reads ---------------------------------------------------------------------------
    def item(self, memory_id: str, item_id: str) -> ItemRecord | None:
        if not names_a_row(item_id):
            return None
        row = self._one("SELECT * FROM items WHERE memory_id=? AND item_id=?",
                        (memory_id, item_id))
        return row_to_item(row) if row else None

    def items(self, memory_id: str, *, scope: str | None = None, key: str | None = None,
              kind: str | None = None, statuses: list[str] | None = None,
              after: str | None = None, limit: int = 100,
              where: ItemFilter | None = None) -> list[ItemRecord]:
        """Items ordered by item_id (bytewise), filtered; ``after`` is the last id of the
        previous page. ``where`` adds the column conditions of a ``domain.filters`` filter
        (its metadata tests are the caller's: see :meth:`item_metadata`)."""
        d = self.dialect
        q, args = self._item_conditions(memory_id, scope, key, kind, statuses, where)
        if after:
            q.append(f"AND {d.bytewise('item_id')} > ?")
            args.append(after)
        q.append(f"ORDER BY {d.bytewise('item_id')} LIMIT ?")
        args.append(limit)
        return [row_to_item(r) for r in self._all("SELECT * FROM items WHERE "
                                                  + " ".join(q), args)]

    def count_items(self, memory_id: str, *, scope: str | None = None, key: str | None = None,
                    kind: str | None = None, statuses: list[str] | None = None,
                    where: ItemFilter | None = None) -> int:
        """How many items :meth:`items` would list over every page (same conditions)."""
        q, args = self._item_conditions(memory_id, scope, key, kind, statuses, where)
        row = self._one("SELECT count(*) AS n FROM items WHERE " + " ".join(q), args)
        return int((row or {}).get("n") or 0)

    def item_metadata(self, memory_id: str, *, scope: str | None = None,
                      key: str | None = None, kind: str | None = None,
                      statuses: list[str] | None = None,
                      where: ItemFilter | None = None) -> list[tuple[str, Any]]:
        """``(item_id, metadata or None)`` of every item matching the column conditions,
        ordered by item_id (bytewise): what a metadata-filtered listing evaluates."""
        d = self.dialect
        q, args = self._item_conditions(memory_id, scope, key, kind, statuses, where,
                                        prefix="i.")
        rows = self._all("SELECT i.item_id AS item_id, p.metadata AS metadata FROM items i "
                         "LEFT JOIN payloads p ON p.memory_id = i.memory_id AND "
                         "p.payload_id = i.payload_id WHERE " + " ".join(q)
                         + f" ORDER BY {d.bytewise('i.item_id')}", args)
        return [(r["item_id"], load_metadata(r["metadata"])) for r in rows]

    def items_by_id(self, memory_id: str, item_ids: list[str]) -> list[ItemRecord]:
        """The items of ``item_ids`` that exist, in the order given."""
        found: dict[str, ItemRecord] = {}
        for i in range(0, len(item_ids), _CHUNK):
            test, args = self.dialect.any_of("item_id", item_ids[i:i + _CHUNK])
            for r in self._all(f"SELECT * FROM items WHERE memory_id=? AND {test}",
                               (memory_id, *args)):
                found[r["item_id"]] = row_to_item(r)
        return [found[i] for i in item_ids if i in found]

    def _item_conditions(self, memory_id: str, scope: str | None, key: str | None,
                         kind: str | None, statuses: list[str] | None,
                         where: ItemFilter | None, prefix: str = "",
                         ) -> tuple[list[str], list[Any]]:
        """SQL conditions (``?`` placeholders) and arguments of an items listing."""
        d = self.dialect
        q = [f"{prefix}memory_id=?"]
        args: list[Any] = [memory_id]
        for col, val in (("scope", scope), ("key", key), ("kind", kind)):
            if val is not None:
                q.append(f"AND {prefix}{col}=?")
                args.append(val)
        if statuses:
            test, more = d.any_of(prefix + "status", statuses)
            q.append("AND " + test)
            args.extend(more)
        if where is None:
            return q, args
        for col, one in (("kind", where.kind), ("key", where.key), ("status", where.status)):
            if one is None:
                continue
            if one.allowed is not None:
                test, more = d.any_of(prefix + col, sorted(one.allowed) or [""])
                q.append("AND " + test)
                args.extend(more)
            if one.refused:
                test, more = d.any_of(prefix + col, sorted(one.refused))
                q.append(f"AND NOT ({test})")
                args.extend(more)
        for col, win in (("valid_at", where.valid_at), ("created_at", where.recorded_at)):
            if win is None:
                continue
            for op, sql in (("gte", ">="), ("gt", ">"), ("lte", "<="), ("lt", "<")):
                bound = getattr(win, op)
                if bound is not None:
                    q.append(f"AND {prefix}{col} {sql} ?")
                    args.append(bound)
        return q, args

    def key_items(self, memory_id: str, scope: str, key: str) -> list[ItemRecord]:
        rows = self._all("SELECT * FROM items WHERE memory_id=? AND scope=? AND key=? "
                         "ORDER BY revision, created_seq", (memory_id, scope, key))
        return [row_to_item(r) for r in rows]

    def key_meta(self, memory_id: str, scope: str, key: str) -> dict[str, Any]:
        """{revision, cardinality, on_change, tombstones} (one statement after the label
        keys: these rows are keyed by label refs)."""
        keys = self.label_keys(memory_id)
        scope, key = keys.ref("scope", scope), keys.ref("key", key)
        row = self._one(
            "SELECT (SELECT revision FROM key_revisions WHERE memory_id=? AND scope=? AND "
            "key=?) AS revision, (SELECT cardinality FROM keys WHERE memory_id=? AND key=?) AS "
            "cardinality, (SELECT on_change FROM keys WHERE memory_id=? AND key=?) AS "
            "on_change, (SELECT count(*) FROM tombstones WHERE memory_id=? AND scope=? AND "
            "key=?) AS tombstones",
            (memory_id, scope, key, memory_id, key, memory_id, key, memory_id, scope, key))
        assert row is not None
        return {"revision": row["revision"] or 0, "cardinality": row["cardinality"],
                "on_change": row["on_change"], "tombstones": row["tombstones"]}

    def payloads(self, memory_id: str, payload_ids: list[str]) -> dict[str, dict[str, Any]]:
        """Payload rows by id: {payload_id: {"value": JSON, "quote": str | None, "metadata",
        "tz_offset_min": int | None}}."""
        out: dict[str, dict[str, Any]] = {}
        for i in range(0, len(payload_ids), _CHUNK):
            test, args = self.dialect.any_of("payload_id", payload_ids[i:i + _CHUNK])
            for r in self._all(f"SELECT payload_id, value, quote, metadata, tz_offset_min FROM "
                               f"payloads WHERE memory_id=? AND {test}", (memory_id, *args)):
                out[r["payload_id"]] = {"value": json.loads(r["value"]), "quote": r["quote"],
                                        "metadata": load_metadata(r["metadata"]),
                                        "tz_offset_min": r["tz_offset_min"]}
        return out

    def provenance(self, memory_id: str, item_id: str) -> list[dict[str, Any]]:
        return self._all("SELECT seq, source_id, source_role, seen_at FROM provenance "
                         "WHERE memory_id=? AND item_id=? ORDER BY seq", (memory_id, item_id))

    def events(self, memory_id: str, *, after_seq: int = 0) -> Iterator[dict[str, Any]]:
        """Ledger events in seq order as dicts (memory, seq, type, data, actor, at, hashes),
        read in pages (no connection is held between pages). Label refs whose labels are
        still held read as ``scope``/``key`` (``domain.labels.resolve``); erased ones stay
        refs."""
        last = after_seq
        with self._read() as c:
            names = load_label_names(self.dialect, c, memory_id)
        while True:
            rows = self._all("SELECT * FROM ledger WHERE memory_id=? AND seq>? ORDER BY seq "
                             "LIMIT ?", (memory_id, last, EVENT_PAGE))
            for r in rows:
                ev = stored_event(memory_id, r)
                yield {**ev, "data": resolve(ev["data"], names)}
            if len(rows) < EVENT_PAGE:
                return
            last = rows[-1]["seq"]

    def ledger_rows(self, memory_id: str) -> Iterator[dict[str, Any]]:
        """The memory's ledger rows as stored (``data`` is the JSON text, unparsed), in seq
        order: what ``verify`` walks, damaged or not."""
        with self._snapshot() as c:
            for r in self._ledger_rows(c, memory_id):
                yield {**dict(r), "memory": memory_id}

    def head_seq(self, memory_id: str) -> int:
        row = self._one("SELECT max(seq) AS seq FROM ledger WHERE memory_id=?", (memory_id,))
        return (row or {}).get("seq") or 0

    def status_counts(self, memory_id: str) -> dict[str, int]:
        rows = self._all("SELECT status, count(*) AS n FROM items WHERE memory_id=? "
                         "GROUP BY status", (memory_id,))
        return {r["status"]: r["n"] for r in rows}

    def retention_due(self, memory_id: str, now: str,
                      created_before: str | None) -> list[ItemRecord]:
        """Items whose keep_until has passed, or (without keep_until) created at or before
        ``created_before`` (the memory's keep_days cutoff, computed by the service)."""
        rows = self._all("SELECT * FROM items WHERE memory_id=? AND ((keep_until IS NOT NULL "
                         "AND keep_until <= ?) OR (keep_until IS NULL AND created_at <= ?)) "
                         "ORDER BY " + self.dialect.bytewise("item_id"),
                         (memory_id, now, created_before or ""))
        return [row_to_item(r) for r in rows]

    # --- erasure (the backend's ``erasure`` module does the SQL) ----------------------------
    def erasure_remaining(self, memory_id: str, item_ids: list[str],
                          source_ids: list[str]) -> dict[str, int]:
        """Per surface, what still holds erased content (all zero when complete)."""
        with self._read() as c:
            return self.erasure.remaining(c, memory_id, item_ids, source_ids)

    def redact_source(self, memory_id: str, source_id: str, at: str) -> dict[str, int]:
        """Removes a source's text and salt, its full-text row and vector and the digests
        holding its text (the chain row stays); ``at`` is the erasure time (ISO-8601 UTC,
        from the service's clock). Returns counts per surface plus ``_digest_docs`` (the
        digests erased, for the service to derive again without the turn). A source an item
        under legal hold cites is left as it is: ``{"held": 1}``."""
        with self._write() as c:
            if source_id in self.erasure.held_sources(c, memory_id):
                return {"held": 1}
            fts, vec = self.erasure.erase_docs(c, memory_id, [source_id])
            digests, docs = self.erasure.erase_digests(c, memory_id, [source_id])
            n = self.erasure.redact_sources(c, memory_id, [source_id], at)
            owed = (("sources", n), ("receipts", n), ("search_docs", fts + digests),
                    ("vectors", vec + digests))
            self._scrub_owed(c, memory_id, [t for t, k in owed if k], at)
        return {"sources": n, "full_text": fts, "vectors": vec, "digests": digests,
                "_digest_docs": docs}

    # --- integrity ---------------------------------------------------------------------------
    def verify_ledger(self, memory_id: str) -> ChainBreak | None:
        """The first broken link of the memory's ledger (never raises on damaged rows)."""
        return verify_chain(self.ledger_rows(memory_id))

    def verify_extras(self, memory_id: str) -> dict[str, Any]:
        """Source chains: ``{"sources_ok", "sources", "sources_broken", "sources_breaks"}``
        (first broken link, every one; never raises on damaged rows)."""
        from remem.stores.sql import sources

        with self._snapshot() as c:
            return sources.verify(c, memory_id)

    def rebuild(self, memory_id: str) -> int:
        """Drops the memory's read model and refolds it from the ledger, in one transaction
        holding the memory's writer lock; returns events folded."""
        with self._write() as c:
            self._lock_memory(c, memory_id)
            for table in READ_MODEL_TABLES:
                self._x(c, f"DELETE FROM {table} WHERE memory_id=?", (memory_id,))
            p = Projection(label_keys=load_label_keys(self.dialect, c, memory_id),
                           names=load_label_names(self.dialect, c, memory_id))
            n = 0
            for r in self._ledger_rows(c, memory_id):
                p.apply(stored_event(memory_id, r))
                n += 1
            p.mark_all_new()
            save_projection(c, self.dialect, memory_id, p)
        self.rebuild_extras(memory_id)
        return n

    def rebuild_extras(self, memory_id: str) -> None:
        """Rebuilds the full-text rows from payloads and sources (vectors stay)."""
        from remem.domain.digests import digests_enabled

        self.search_index.rebuild_text(  # type: ignore[attr-defined]
            memory_id, digests=digests_enabled(self.memory_config(memory_id)))
