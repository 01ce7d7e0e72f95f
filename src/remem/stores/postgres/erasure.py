"""Erasure SQL for forget, retention and memory deletion (PostgreSQL).

Inside the forget transaction (``erase_items``): deletes payloads (every revision), marks
idempotency records forgotten (no digest of the value survives), redacts source texts (text
and salt removed, chain row kept), drops full-text rows, vectors and pinned profile renders,
and records the physical scrub owed in ``erasure_scrubs``.

After commit (``scrub``): a deleted or updated row stays in the table file as a dead tuple, and
plain VACUUM only marks its space free without overwriting it (measured: the text is still in
the file). So once no snapshot older than the forget transaction remains, the memory's
partitions that held the text are rewritten with ``VACUUM FULL`` (new files; the old ones are
removed, indexes rebuilt). Until that has run, ``remaining`` reports the surfaces as pending.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import tuple_row

from remem.domain.canonical import REDACTED_DIGEST, erasure_needles, normalize_text
from remem.domain.limits import KEPT_PROFILE_RENDERS, MAX_PROFILE_RENDERS
from remem.domain.textindex import content_hash, scope_term
from remem.stores.sql.digest_erasure import derived_digests, holding_docs

FORGOTTEN_DIGEST = "forgotten"
#: Tables whose rows held erased content, rewritten by the scrub, and the report surface of
#: each. ``vectors``: a dead tuple keeps the erased text's embedding, from which text can be
#: largely reconstructed. ``items``: the dead tuple and the key indexes keep the raw scope and
#: key labels that forget replaced by keyed refs (the probe found both in the files).
SCRUB_SURFACES = {"payloads": "payloads", "idempotency": "payloads", "sources": "sources",
                  "search_docs": "full_text", "profile_renders": "pinned_profiles",
                  "labels": "payloads", "vectors": "vectors", "items": "payloads",
                  "feedback": "feedback"}
#: Tables whose rewrite grows with the data, not with what was erased: the memory's vectors
#: (VACUUM FULL rebuilds its HNSW index: 0.7 s for 2,000 rows, 8 MB; ~12 s at 10k random
#: vectors, on this machine under load; the store's default limit is 32 MiB) and
#: the items table of every memory. Right after a forget they are rewritten only while at
#: most ``inline_max_bytes``; larger ones stay pending for the worker's catch-up scrub.
LARGE_TABLES = frozenset({"vectors", "items"})


def _scalar(conn: psycopg.Connection, query: str, args: Sequence[Any]) -> Any:
    return conn.cursor(row_factory=tuple_row).execute(query, args).fetchone()[0]


def provenance_sources(conn: psycopg.Connection, memory_id: str,
                       item_ids: Sequence[str]) -> list[str]:
    """Source ids named by the items' provenance (read before the rows are erased)."""
    if not item_ids:
        return []
    rows = conn.execute(
        "SELECT source_id FROM provenance WHERE memory_id=%(m)s AND item_id = ANY(%(ids)s) "
        "AND source_id IS NOT NULL UNION SELECT source_id FROM items WHERE memory_id=%(m)s "
        "AND item_id = ANY(%(ids)s) AND source_id IS NOT NULL",
        {"m": memory_id, "ids": list(item_ids)}).fetchall()
    return sorted(r["source_id"] for r in rows)


def payload_values(conn: psycopg.Connection, memory_id: str,
                   item_ids: Sequence[str]) -> list[Any]:
    if not item_ids:
        return []
    rows = conn.execute("SELECT value FROM payloads WHERE memory_id=%s AND item_id = ANY(%s)",
                        (memory_id, list(item_ids)))
    return [json.loads(r["value"]) for r in rows]


def sources_containing(conn: psycopg.Connection, memory_id: str,
                       scopes: Sequence[str] | None, values: Sequence[Any]) -> list[str]:
    """Unredacted sources of the scopes (None: every scope of the memory) whose text
    contains one of the values (strings and numbers, nested ones too), normalised like SQLite
    (NFKC, casefold, collapsed whitespace)."""
    needles = erasure_needles(values)
    if not needles or scopes == []:
        return []
    out = []
    for r in conn.execute("SELECT source_id, text FROM sources WHERE memory_id=%s AND "
                          "text IS NOT NULL AND (%s::text[] IS NULL OR scope = ANY(%s))",
                          (memory_id, _list(scopes), _list(scopes))):
        norm = normalize_text(r["text"])
        if any(n in norm for n in needles):
            out.append(r["source_id"])
    return out


def _list(scopes: Sequence[str] | None) -> list[str] | None:
    return None if scopes is None else list(scopes)


def forget_idempotency(conn: psycopg.Connection, memory_id: str,
                       item_ids: Sequence[str],
                       rekey: Callable[[str], str] | None = None) -> int:
    """Replaces idempotency records of erased items by a text-free 'forgotten' marker; with
    ``rekey`` (keyed labels) the marker names neither scope nor key and is stored under
    ``rekey(idem_key)`` (the key names them), as on SQLite."""
    if not item_ids:
        return 0
    rows = conn.execute("SELECT idem_key, result FROM idempotency WHERE memory_id=%s AND "
                        "item_id = ANY(%s)", (memory_id, list(item_ids))).fetchall()
    for r in rows:
        old = json.loads(r["result"])
        marker = {"outcome": "forgotten", "scope": old.get("scope"), "key": old.get("key"),
                  "revision": old.get("revision", 0), "item_id": None}
        new_key = rekey(r["idem_key"]) if rekey is not None else r["idem_key"]
        if new_key != r["idem_key"]:
            marker = {k: v for k, v in marker.items() if k not in ("scope", "key")}
        conn.execute("UPDATE idempotency SET idem_key=%s, digest=%s, result=%s, item_id=NULL "
                     "WHERE memory_id=%s AND idem_key=%s",
                     (new_key, FORGOTTEN_DIGEST, json.dumps(marker), memory_id, r["idem_key"]))
    return len(rows)


def erase_labels(conn: psycopg.Connection, memory_id: str, item_ids: Sequence[str]) -> int:
    """Erases the raw labels (scope, key) of the items that no other item of the memory
    still uses (run before the items' rows are deleted); returns labels erased."""
    if not item_ids:
        return 0
    n = 0
    for field in ("scope", "key"):
        n += conn.execute(sql.SQL(
            "DELETE FROM labels l WHERE l.memory_id=%(m)s AND l.field=%(f)s AND l.label IN ("
            "SELECT {c} FROM items WHERE memory_id=%(m)s AND item_id = ANY(%(ids)s)) AND NOT "
            "EXISTS (SELECT 1 FROM items i WHERE i.memory_id=l.memory_id AND i.{c}=l.label "
            "AND NOT (i.item_id = ANY(%(ids)s)))").format(c=sql.Identifier(field)),
            {"m": memory_id, "f": field, "ids": list(item_ids)}).rowcount
    return n


def erase_docs(conn: psycopg.Connection, memory_id: str,
               doc_ids: Sequence[str]) -> tuple[int, int]:
    """Deletes full-text rows and vectors of items/sources; returns (fts_rows, vector_rows)."""
    if not doc_ids:
        return 0, 0
    args = (memory_id, list(doc_ids))
    fts = conn.execute("DELETE FROM search_docs WHERE memory_id=%s AND doc_id = ANY(%s)",
                       args).rowcount
    vec = conn.execute("DELETE FROM vectors WHERE memory_id=%s AND doc_id = ANY(%s)",
                       args).rowcount
    if vec:
        conn.execute("UPDATE memories SET vector_epoch = vector_epoch + 1 WHERE memory_id=%s",
                     (memory_id,))
    return fts, vec


def erase_digests(conn: psycopg.Connection, memory_id: str,
                  source_ids: Sequence[str]) -> tuple[int, list[str]]:
    """Deletes the digests (``domain.digests``) that hold the text of any of the sources
    (``stores.sql.digest_erasure.holding_docs``: not another scope's digest of the same
    window): their full-text rows and vectors. Returns (digests erased, the document ids of
    those windows, for the service to derive again without the erased turns)."""
    docs = holding_docs(conn, memory_id, list(source_ids))
    fts, vec = erase_docs(conn, memory_id, docs)
    return max(fts, vec), docs


def stale_digests(conn: psycopg.Connection, memory_id: str, source_ids: Sequence[str]) -> int:
    """Digests that held the sources' text and still differ (tsvector or vector content
    hash) from what the current rows derive: each may still hold erased text. A digest
    derived again without the erased turns equals that, so it is not counted."""
    from remem.stores.postgres.search import tsvector_literal

    docs = holding_docs(conn, memory_id, list(source_ids))
    want = derived_digests(conn, memory_id, docs) if docs else {}
    n = 0
    for doc in docs:
        scope, text = want.get(doc, (None, None))
        tsv = (tsvector_literal(text, scope_term(memory_id, scope)) if text is not None
               else None)
        row = conn.execute(
            "SELECT (SELECT tsv = %s::tsvector FROM search_docs WHERE memory_id=%s AND "
            "doc_id=%s) AS fts_same, (SELECT count(*) FROM search_docs WHERE memory_id=%s "
            "AND doc_id=%s) AS fts, (SELECT content_hash FROM vectors WHERE memory_id=%s AND "
            "doc_id=%s LIMIT 1) AS vec", (tsv, memory_id, doc, memory_id, doc, memory_id,
                                          doc)).fetchone()
        n += bool((row["fts"] and not row["fts_same"])
                  or (row["vec"] is not None and row["vec"] != (
                      content_hash(text) if text is not None else None)))
    return n


def redact_sources(conn: psycopg.Connection, memory_id: str, source_ids: Sequence[str],
                   at: str) -> int:
    """Removes source texts and salts; the chain row (digest, hashes) stays verifiable. The
    receipts' idempotency digests (which cover an unsalted hash of the text) become
    ``REDACTED_DIGEST``, so a guessed text cannot be confirmed against them. The digests
    holding the texts are the caller's to erase first (:func:`erase_digests`)."""
    if not source_ids:
        return 0
    conn.execute("UPDATE receipts SET digest=%s WHERE memory_id=%s AND source_id = ANY(%s)",
                 (REDACTED_DIGEST, memory_id, list(source_ids)))
    return conn.execute("UPDATE sources SET text=NULL, salt=NULL, metadata=NULL, "
                        "payload=NULL, content_hash=NULL, "
                        "redacted_at=%s WHERE "
                        "memory_id=%s AND source_id = ANY(%s) AND (text IS NOT NULL OR salt IS "
                        "NOT NULL OR payload IS NOT NULL)",
                        (at, memory_id, list(source_ids))).rowcount


def drop_profile_renders(conn: psycopg.Connection, memory_id: str,
                         item_ids: Sequence[str]) -> int:
    """Deletes pinned profile renders that included any of the items."""
    wanted = set(item_ids)
    n = 0
    for r in conn.execute("SELECT activation_id, scopes, params, item_ids FROM profile_renders "
                          "WHERE memory_id=%s", (memory_id,)).fetchall():
        if wanted & set(json.loads(r["item_ids"])):
            conn.execute("DELETE FROM profile_renders WHERE memory_id=%s AND activation_id=%s "
                         "AND scopes=%s AND params=%s",
                         (memory_id, r["activation_id"], r["scopes"], r["params"]))
            n += 1
    return n


def prune_profile_renders(conn: psycopg.Connection, memory_id: str, at: str) -> int:
    """Deletes the memory's oldest pinned renders once it holds more than
    :data:`MAX_PROFILE_RENDERS`, down to :data:`KEPT_PROFILE_RENDERS`, and records a scrub
    of the partition: a deleted render's dead tuple keeps copies of item values that a later
    forget must not leave behind. Returns the number deleted."""
    if _scalar(conn, "SELECT count(*) FROM profile_renders WHERE memory_id=%s",
               (memory_id,)) <= MAX_PROFILE_RENDERS:
        return 0
    n = conn.execute(
        "DELETE FROM profile_renders p USING (SELECT activation_id, scopes, params FROM "
        "profile_renders WHERE memory_id=%(m)s ORDER BY rendered_at DESC, activation_id DESC "
        "OFFSET %(k)s) old WHERE p.memory_id=%(m)s AND p.activation_id=old.activation_id AND "
        "p.scopes=old.scopes AND p.params=old.params",
        {"m": memory_id, "k": KEPT_PROFILE_RENDERS}).rowcount
    record_scrub(conn, memory_id, ["profile_renders"], at)
    return n


def held_sources(conn: psycopg.Connection, memory_id: str) -> set[str]:
    """Source ids that an item under legal hold cites (its source or its provenance): a
    forget never redacts them ("a hold gives blocked", DESIGN.md forget plan)."""
    rows = conn.execute("SELECT source_id FROM items WHERE memory_id=%s AND legal_hold AND "
                        "source_id IS NOT NULL UNION SELECT p.source_id FROM provenance p "
                        "JOIN items i ON i.memory_id=p.memory_id AND i.item_id=p.item_id "
                        "WHERE p.memory_id=%s AND i.legal_hold AND p.source_id IS NOT NULL",
                        (memory_id, memory_id)).fetchall()
    return {r["source_id"] for r in rows}


def erase_items(conn: psycopg.Connection, memory_id: str, item_ids: Sequence[str],
                scopes: Sequence[str] | None, at: str,
                rekey: Callable[[str], str] | None = None) -> dict[str, Any]:
    """Erases every surface of the given items inside the forget transaction and records
    the physical scrub owed. Sources are redacted when the items name them or their text
    contains an erased value, within ``scopes`` (None: every scope of the memory).

    Returns:
        Counts per surface plus ``_source_ids`` (the sources redacted),
        ``_digest_docs`` (the digests erased with them, to derive again) and
        ``_held_source_ids`` (matched but kept: an item under legal hold cites them).
    """
    ids = list(item_ids)
    values = payload_values(conn, memory_id, ids)
    source_ids = sorted(set(provenance_sources(conn, memory_id, ids))
                        | set(sources_containing(conn, memory_id, scopes, values)))
    if source_ids:
        rows = conn.execute("SELECT source_id FROM sources WHERE memory_id=%s AND "
                            "source_id = ANY(%s) AND (%s::text[] IS NULL OR scope = ANY(%s))",
                            (memory_id, source_ids, _list(scopes), _list(scopes))).fetchall()
        source_ids = sorted(r["source_id"] for r in rows)
    held = set(source_ids) & held_sources(conn, memory_id) if source_ids else set()
    source_ids = sorted(set(source_ids) - held)
    prov = conn.execute("DELETE FROM provenance WHERE memory_id=%s AND item_id = ANY(%s)",
                        (memory_id, ids)).rowcount if ids else 0
    fts, vec = erase_docs(conn, memory_id, [*ids, *source_ids])
    digests, digest_docs = erase_digests(conn, memory_id, source_ids)
    payloads = conn.execute("DELETE FROM payloads WHERE memory_id=%s AND item_id = ANY(%s)",
                            (memory_id, ids)).rowcount if ids else 0
    counts = {
        "payloads": payloads,
        "provenance": prov,
        "full_text": fts,
        "vectors": vec,
        "sources": redact_sources(conn, memory_id, source_ids, at),
        "pinned_profiles": drop_profile_renders(conn, memory_id, ids),
        "idempotency": forget_idempotency(conn, memory_id, ids, rekey),
        "labels": erase_labels(conn, memory_id, ids),
        "digests": digests,
    }
    touched = {"payloads": payloads, "idempotency": counts["idempotency"],
               "sources": counts["sources"], "receipts": counts["sources"],
               "search_docs": fts + digests,
               "profile_renders": counts["pinned_profiles"], "labels": counts["labels"],
               # erased digests lose their vectors too; tombstoned items lose their raw
               # labels (the caller rewrites the rows in this transaction)
               "vectors": vec + digests, "items": len(ids)}
    record_scrub(conn, memory_id, [t for t, n in touched.items() if n], at)
    return {**counts, "_source_ids": source_ids, "_held_source_ids": sorted(held),
            "_digest_docs": digest_docs}


def record_scrub(conn: psycopg.Connection, memory_id: str, tables: Sequence[str],
                 at: str) -> None:
    """Records, in the erasing transaction, which of the memory's partitions must be
    rewritten once this transaction's deletes are invisible to every snapshot."""
    if not tables:
        return
    conn.execute("INSERT INTO erasure_scrubs(memory_id, xid, tables, requested_at) VALUES "
                 "(%s, pg_current_xact_id(), %s, %s) ON CONFLICT (memory_id, xid) DO UPDATE "
                 "SET tables = ARRAY(SELECT DISTINCT unnest(erasure_scrubs.tables || "
                 "EXCLUDED.tables) ORDER BY 1)", (memory_id, sorted(set(tables)), at))


def remaining(conn: psycopg.Connection, memory_id: str, item_ids: Sequence[str],
              source_ids: Sequence[str]) -> dict[str, int]:
    """Rows that still hold erased content, plus 1 per surface whose physical scrub is still
    owed (all zero once erasure is complete)."""
    out = {"payloads": 0, "provenance": 0, "full_text": 0, "vectors": 0, "sources": 0,
           "pinned_profiles": 0, "digests": 0, "feedback": 0}
    m = memory_id
    if item_ids:
        ids = list(item_ids)
        out["payloads"] = _scalar(conn, "SELECT count(*) FROM payloads WHERE memory_id=%s AND "
                                  "item_id = ANY(%s)", (m, ids))
        out["provenance"] = _scalar(conn, "SELECT count(*) FROM provenance WHERE memory_id=%s "
                                    "AND item_id = ANY(%s)", (m, ids))
        out["full_text"] = _scalar(conn, "SELECT count(*) FROM search_docs WHERE memory_id=%s "
                                   "AND doc_id = ANY(%s)", (m, ids))
        out["vectors"] = _scalar(conn, "SELECT count(*) FROM vectors WHERE memory_id=%s AND "
                                 "doc_id = ANY(%s)", (m, ids))
        wanted = set(ids)
        renders = conn.execute("SELECT item_ids FROM profile_renders WHERE memory_id=%s",
                               (m,)).fetchall()
        out["pinned_profiles"] = sum(1 for r in renders
                                     if wanted & set(json.loads(r["item_ids"])))
    if source_ids:
        sids = list(source_ids)
        out["sources"] = _scalar(conn, "SELECT count(*) FROM sources WHERE memory_id=%s AND "
                                 "source_id = ANY(%s) AND (text IS NOT NULL OR salt IS NOT "
                                 "NULL)", (m, sids))
        out["full_text"] += _scalar(conn, "SELECT count(*) FROM search_docs WHERE "
                                    "memory_id=%s AND doc_id = ANY(%s)", (m, sids))
        out["vectors"] += _scalar(conn, "SELECT count(*) FROM vectors WHERE memory_id=%s AND "
                                  "doc_id = ANY(%s)", (m, sids))
        out["digests"] = stale_digests(conn, m, sids)
    for r in conn.execute("SELECT DISTINCT unnest(tables) AS t FROM erasure_scrubs WHERE "
                          "memory_id=%s AND done_at IS NULL", (m,)):
        if r["t"] in SCRUB_SURFACES:
            out[SCRUB_SURFACES[r["t"]]] += 1
    return out


# --- physical scrub (after commit, autocommit connection) -----------------------------------
def horizon_passed(conn: psycopg.Connection, xid: int) -> bool:
    """True when no session of this database, prepared transaction or replication slot can
    still see rows deleted by transaction ``xid`` (so VACUUM FULL will not copy them)."""
    return not _scalar(conn, """
        WITH e AS (SELECT age((%(x)s::text)::xid8::xid) AS age)
        SELECT EXISTS (
          SELECT 1 FROM pg_stat_activity, e
           WHERE datname = current_database() AND pid <> pg_backend_pid()
             AND backend_xmin IS NOT NULL AND age(backend_xmin) >= e.age)
        OR EXISTS (
          SELECT 1 FROM pg_prepared_xacts, e
           WHERE database = current_database() AND age(transaction) >= e.age)
        OR EXISTS (
          SELECT 1 FROM pg_replication_slots, e WHERE xmin IS NOT NULL AND age(xmin) >= e.age)
        """, {"x": xid})


#: Plain (not partitioned) tables a scrub may rewrite whole: the deleted memories' secrets,
#: receipts' digests, the items' raw labels, feedback text (shared by every memory).
PLAIN_TABLES = frozenset({"memory_secrets", "receipts", "items", "feedback"})


def pending_scrubs(conn: psycopg.Connection) -> list[dict[str, Any]]:
    """Owed scrubs per memory: [{memory_id, mno (None once deleted), xid (newest), tables}]."""
    return conn.execute(
        "SELECT s.memory_id, m.mno, max(s.xid::text::bigint) AS xid, "
        "array_agg(DISTINCT t ORDER BY t) AS tables FROM erasure_scrubs s "
        "LEFT JOIN memories m USING (memory_id), unnest(s.tables) AS t "
        "WHERE s.done_at IS NULL GROUP BY s.memory_id, m.mno ORDER BY s.memory_id").fetchall()


def pending_count(conn: psycopg.Connection, memory_id: str | None = None) -> int:
    """Owed scrubs: of one memory, or of the whole database (``memory_id`` None)."""
    return _scalar(conn, "SELECT count(*) FROM erasure_scrubs WHERE done_at IS NULL AND "
                   "(%(m)s::text IS NULL OR memory_id = %(m)s)", {"m": memory_id})


def _table_name(table: str, mno: int | None) -> str | None:
    from remem.stores.postgres.connection import partition_name

    if table in PLAIN_TABLES:
        return table
    return None if mno is None else partition_name(table, mno)  # None: memory deleted


def _rewrite(conn: psycopg.Connection, job: dict[str, Any],
             inline_max_bytes: int | None) -> bool:
    """VACUUM FULL of the job's tables; a large table above ``inline_max_bytes`` is left for
    the catch-up scrub. Returns True when every table was rewritten."""
    complete = True
    for table in job["tables"]:
        name = _table_name(table, job["mno"])
        if name is None:
            continue
        if inline_max_bytes is not None and table in LARGE_TABLES and _scalar(
                conn, "SELECT pg_total_relation_size(%s::regclass)", (name,)) > inline_max_bytes:
            complete = False
            continue
        conn.execute(sql.SQL("VACUUM (FULL) {}").format(sql.Identifier(name)))
    return complete


def scrub(conn: psycopg.Connection, *, wait_s: float, now: str,
          inline_max_bytes: int | None = None) -> dict[str, str]:
    """Rewrites the tables owed a scrub (VACUUM FULL) once the snapshot horizon has passed
    the erasing transaction; waits up to ``wait_s`` seconds for old snapshots. With
    ``inline_max_bytes`` (right after a forget) a vectors partition or items table larger
    than that is left for a later call without it (the worker's catch-up).

    Returns:
        {memory_id: "done" | "pending" | "deferred"} (deferred: a large table is left).
    """
    out: dict[str, str] = {}
    for job in pending_scrubs(conn):
        deadline = time.monotonic() + wait_s
        while not horizon_passed(conn, job["xid"]):
            if time.monotonic() >= deadline:
                out[job["memory_id"]] = "pending"
                break
            time.sleep(0.02)
        else:
            if not _rewrite(conn, job, inline_max_bytes):
                out[job["memory_id"]] = "deferred"
                continue
            conn.execute("UPDATE erasure_scrubs SET done_at=%s WHERE memory_id=%s AND "
                         "done_at IS NULL AND xid::text::bigint <= %s",
                         (now, job["memory_id"], job["xid"]))
            conn.execute("DELETE FROM erasure_scrubs WHERE memory_id=%s AND done_at IS NOT "
                         "NULL AND NOT EXISTS (SELECT 1 FROM memories m WHERE m.memory_id = "
                         "erasure_scrubs.memory_id)", (job["memory_id"],))
            out[job["memory_id"]] = "done"
    return out
