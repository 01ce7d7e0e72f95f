"""Erasure SQL for forget, retention and memory deletion (SQLite).

Runs inside the forget transaction: deletes payloads (every revision), marks idempotency
records forgotten (no digest of the value survives), redacts source texts (text and salt
removed, chain row kept), drops full-text rows, vectors and pinned profile renders. After
commit, ``scrub`` merges FTS segments and truncates the WAL so deleted bytes are gone from the
file, not just unreachable (``PRAGMA secure_delete=ON`` zeroes freed pages and cells).

Honesty: the erasing transaction records the scrub it owes in ``erasure_scrubs`` (ids and
times only). ``scrub`` deletes those rows only after a TRUNCATE checkpoint *succeeded* (result
row busy=0, log=0): then every page image written since the erasure is in the main file and
the WAL, which held older images with the text, is empty. A reader holding an older snapshot
(or a process killed between commit and scrub) leaves the rows pending; they are finished on
the next open of the store, by ``remem worker``, or by the next erasure.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

from remem.domain.canonical import REDACTED_DIGEST, erasure_needles, normalize_text
from remem.domain.limits import KEPT_PROFILE_RENDERS, MAX_PROFILE_RENDERS
from remem.domain.textindex import content_hash, index_terms
from remem.stores.sqlite.scoped_terms import scoped_terms
from remem.stores.sql.digest_erasure import derived_digests, holding_docs

FORGOTTEN_DIGEST = "forgotten"


def _in(ids: Sequence[str]) -> str:
    return ",".join("?" * len(ids))


def provenance_sources(conn: sqlite3.Connection, memory_id: str,
                       item_ids: Sequence[str]) -> list[str]:
    """Source ids named by the items' provenance (read before the rows are erased)."""
    if not item_ids:
        return []
    rows = conn.execute(f"SELECT DISTINCT source_id FROM provenance WHERE memory_id=? AND "
                        f"item_id IN ({_in(item_ids)}) AND source_id IS NOT NULL",
                        (memory_id, *item_ids))
    ids = {r[0] for r in rows}
    rows = conn.execute(f"SELECT DISTINCT source_id FROM items WHERE memory_id=? AND "
                        f"item_id IN ({_in(item_ids)}) AND source_id IS NOT NULL",
                        (memory_id, *item_ids))
    return sorted(ids | {r[0] for r in rows})


def held_sources(conn: sqlite3.Connection, memory_id: str) -> set[str]:
    """Source ids that an item under legal hold cites (its source or its provenance): a
    forget never redacts them ("a hold gives blocked", DESIGN.md forget plan)."""
    rows = conn.execute("SELECT source_id FROM items WHERE memory_id=? AND legal_hold=1 AND "
                        "source_id IS NOT NULL UNION SELECT p.source_id FROM provenance p "
                        "JOIN items i ON i.memory_id=p.memory_id AND i.item_id=p.item_id "
                        "WHERE p.memory_id=? AND i.legal_hold=1 AND p.source_id IS NOT NULL",
                        (memory_id, memory_id))
    return {r[0] for r in rows}


def payload_values(conn: sqlite3.Connection, memory_id: str,
                   item_ids: Sequence[str]) -> list[Any]:
    if not item_ids:
        return []
    rows = conn.execute(f"SELECT value FROM payloads WHERE memory_id=? AND "
                        f"item_id IN ({_in(item_ids)})", (memory_id, *item_ids))
    return [json.loads(r[0]) for r in rows]


def _scope_filter(scopes: Sequence[str] | None) -> tuple[str, tuple[str, ...]]:
    """SQL fragment and arguments limiting rows to ``scopes`` (None: every scope)."""
    if scopes is None:
        return "", ()
    return f" AND scope IN ({_in(scopes)})", tuple(scopes)


def sources_containing(conn: sqlite3.Connection, memory_id: str,
                       scopes: Sequence[str] | None, values: Sequence[Any]) -> list[str]:
    """Unredacted sources of the scopes (None: every scope of the memory) whose text
    contains one of the values (strings and numbers, nested ones too)."""
    needles = erasure_needles(values)
    if not needles or scopes == []:
        return []
    where, args = _scope_filter(scopes)
    out = []
    for sid, text in conn.execute("SELECT source_id, text FROM sources WHERE memory_id=? AND "
                                  "text IS NOT NULL" + where, (memory_id, *args)):
        norm = normalize_text(text)
        if any(n in norm for n in needles):
            out.append(sid)
    return out


def erase_payloads(conn: sqlite3.Connection, memory_id: str, item_ids: Sequence[str]) -> int:
    if not item_ids:
        return 0
    return conn.execute(f"DELETE FROM payloads WHERE memory_id=? AND item_id IN "
                        f"({_in(item_ids)})", (memory_id, *item_ids)).rowcount


def forget_idempotency(conn: sqlite3.Connection, memory_id: str,
                       item_ids: Sequence[str],
                       rekey: Callable[[str], str] | None = None) -> int:
    """Replaces idempotency records of erased items by a text-free 'forgotten' marker, so a
    replay with the same key gets ``forgotten`` and no digest of the value survives. With
    ``rekey`` (a memory with keyed labels) the marker names neither scope nor key and is
    stored under ``rekey(idem_key)``: the key itself names them (``src:[..., scope, key, ...]``
    or ``scope/...``)."""
    if not item_ids:
        return 0
    n = 0
    for idem_key, result in conn.execute(
            f"SELECT idem_key, result FROM idempotency WHERE memory_id=? AND item_id IN "
            f"({_in(item_ids)})", (memory_id, *item_ids)).fetchall():
        old = json.loads(result)
        marker = {"outcome": "forgotten", "scope": old.get("scope"), "key": old.get("key"),
                  "revision": old.get("revision", 0), "item_id": None}
        if rekey is not None and rekey(idem_key) != idem_key:
            marker = {k: v for k, v in marker.items() if k not in ("scope", "key")}
        conn.execute("UPDATE idempotency SET idem_key=?, digest=?, result=?, item_id=NULL "
                     "WHERE memory_id=? AND idem_key=?",
                     (rekey(idem_key) if rekey else idem_key, FORGOTTEN_DIGEST,
                      json.dumps(marker), memory_id, idem_key))
        n += 1
    return n


def erase_labels(conn: sqlite3.Connection, memory_id: str, item_ids: Sequence[str]) -> int:
    """Erases the raw labels (scope, key) of the items that no other item of the memory
    still uses (run before the items' rows are deleted); returns labels erased."""
    if not item_ids:
        return 0
    q = _in(item_ids)
    n = 0
    for field in ("scope", "key"):
        n += conn.execute(
            f"DELETE FROM labels WHERE memory_id=? AND field='{field}' AND label IN (SELECT "
            f"{field} FROM items WHERE memory_id=? AND item_id IN ({q})) AND NOT EXISTS ("
            f"SELECT 1 FROM items i WHERE i.memory_id=labels.memory_id AND "
            f"i.{field}=labels.label AND i.item_id NOT IN ({q}))",
            (memory_id, memory_id, *item_ids, *item_ids)).rowcount
    return n


def remaining(conn: sqlite3.Connection, memory_id: str, item_ids: Sequence[str],
              source_ids: Sequence[str]) -> dict[str, int]:
    """Rows that still hold erased content (all zero once erasure is complete)."""
    out = {"payloads": 0, "provenance": 0, "full_text": 0, "vectors": 0, "sources": 0,
           "pinned_profiles": 0, "digests": 0}
    if item_ids:
        args = (memory_id, *item_ids)
        q = _in(item_ids)
        out["payloads"] = conn.execute(f"SELECT count(*) FROM payloads WHERE memory_id=? AND "
                                       f"item_id IN ({q})", args).fetchone()[0]
        out["provenance"] = conn.execute(f"SELECT count(*) FROM provenance WHERE memory_id=? "
                                         f"AND item_id IN ({q})", args).fetchone()[0]
        out["full_text"] = conn.execute(f"SELECT count(*) FROM search_docs WHERE memory_id=? "
                                        f"AND doc_id IN ({q})", args).fetchone()[0]
        out["vectors"] = conn.execute(f"SELECT count(*) FROM vectors WHERE memory_id=? AND "
                                      f"doc_id IN ({q})", args).fetchone()[0]
        renders = conn.execute("SELECT item_ids FROM profile_renders WHERE memory_id=?",
                               (memory_id,)).fetchall()
        wanted = set(item_ids)
        out["pinned_profiles"] = sum(1 for (ids,) in renders if wanted & set(json.loads(ids)))
    if source_ids:
        args = (memory_id, *source_ids)
        q = _in(source_ids)
        out["sources"] = conn.execute(f"SELECT count(*) FROM sources WHERE memory_id=? AND "
                                      f"source_id IN ({q}) AND (text IS NOT NULL OR salt IS "
                                      f"NOT NULL)", args).fetchone()[0]
        out["full_text"] += conn.execute(f"SELECT count(*) FROM search_docs WHERE memory_id=? "
                                         f"AND doc_id IN ({q})", args).fetchone()[0]
        out["vectors"] += conn.execute(f"SELECT count(*) FROM vectors WHERE memory_id=? AND "
                                       f"doc_id IN ({q})", args).fetchone()[0]
        out["digests"] = stale_digests(conn, memory_id, source_ids)
    return out


def stale_digests(conn: sqlite3.Connection, memory_id: str, source_ids: Sequence[str]) -> int:
    """Digests that held the sources' text and still differ (full-text terms or vector
    content hash) from what the current rows derive: each may still hold erased text. A
    digest derived again without the erased turns equals that, so it is not counted."""
    docs = holding_docs(conn, memory_id, source_ids)
    want = derived_digests(conn, memory_id, docs) if docs else {}
    n = 0
    for doc in docs:
        text = want[doc][1] if doc in want else None
        terms = conn.execute("SELECT f.terms, f.scope_key FROM search_docs d JOIN search_fts f "
                             "ON f.rowid = d.rowid WHERE d.memory_id=? AND d.doc_id=?",
                             (memory_id, doc)).fetchone()
        vec = conn.execute("SELECT content_hash FROM vectors WHERE memory_id=? AND doc_id=?",
                           (memory_id, doc)).fetchone()
        n += bool((terms is not None and (text is None or terms[0] != scoped_terms(
                      index_terms(text), terms[1])))
                  or (vec is not None and (text is None or vec[0] != content_hash(text))))
    return n


def purge_search_rows(conn: sqlite3.Connection, memory_id: str) -> None:
    """Deletes a memory's FTS rows (before its search_docs rows go)."""
    conn.execute("DELETE FROM search_fts WHERE rowid IN (SELECT rowid FROM search_docs WHERE "
                 "memory_id=?)", (memory_id,))


def record_scrub(conn: sqlite3.Connection, memory_id: str | None, kind: str,
                 at: str) -> None:
    """Records, in the erasing transaction, that the files owe a scrub (``memory_id`` None
    when the memory itself is being deleted: its id must not survive either)."""
    conn.execute("INSERT INTO erasure_scrubs(memory_id, kind, requested_at) VALUES (?,?,?)",
                 (memory_id, kind, at))


def pending_scrubs(conn: sqlite3.Connection, memory_id: str | None = None) -> int:
    """Owed scrubs: of one memory, or of the whole file (``memory_id`` None)."""
    if memory_id is None:
        return conn.execute("SELECT count(*) FROM erasure_scrubs").fetchone()[0]
    return conn.execute("SELECT count(*) FROM erasure_scrubs WHERE memory_id=?",
                        (memory_id,)).fetchone()[0]


def scrub(conn: sqlite3.Connection, *, wait_ms: int, busy_timeout_ms: int) -> str | None:
    """After commit: rewrite FTS segments without deleted terms, then checkpoint and truncate
    the WAL; on success the owed scrubs recorded before it are done (rows deleted).

    Args:
        wait_ms: how long the checkpoint waits for readers on older snapshots.
        busy_timeout_ms: the connection's busy timeout, restored afterwards.

    Returns:
        None when the files hold no erased byte any more, else why not (pending).
    """
    upto = conn.execute("SELECT max(scrub_id) FROM erasure_scrubs").fetchone()[0]
    conn.execute("INSERT INTO search_fts(search_fts) VALUES('optimize')")
    if conn.execute("PRAGMA secure_delete").fetchone()[0] != 1:
        return "secure_delete is off on this connection, so freed bytes were not zeroed."
    conn.execute(f"PRAGMA busy_timeout={int(wait_ms)}")
    try:
        busy, log, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    except sqlite3.OperationalError as exc:  # e.g. locked by this connection's own reader
        busy, log = 1, str(exc)
    finally:
        conn.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
    if busy or log not in (0, -1):  # -1: not in WAL mode (":memory:"), nothing on disk
        return ("Another connection holds a read snapshot (or the write lock), so the "
                "write-ahead log, which still holds the erased text, could not be emptied. "
                "The scrub is recorded; it finishes when that connection ends (next open of "
                "the store, `remem worker`, or the next erasure).")
    if upto is not None:
        conn.execute("DELETE FROM erasure_scrubs WHERE scrub_id <= ?", (upto,))
    return None


def erase_docs(conn: sqlite3.Connection, memory_id: str,
               doc_ids: Sequence[str]) -> tuple[int, int]:
    """Deletes full-text rows and vectors of items/sources; returns (fts_rows, vector_rows)."""
    if not doc_ids:
        return 0, 0
    args = (memory_id, *doc_ids)
    q = _in(doc_ids)
    conn.execute(f"DELETE FROM search_fts WHERE rowid IN (SELECT rowid FROM search_docs WHERE "
                 f"memory_id=? AND doc_id IN ({q}))", args)
    fts = conn.execute(f"DELETE FROM search_docs WHERE memory_id=? AND doc_id IN ({q})",
                       args).rowcount
    vec = conn.execute(f"DELETE FROM vectors WHERE memory_id=? AND doc_id IN ({q})",
                       args).rowcount
    if vec:
        conn.execute("UPDATE memories SET vector_epoch = vector_epoch + 1 WHERE memory_id=?",
                     (memory_id,))
    return fts, vec


def erase_digests(conn: sqlite3.Connection, memory_id: str,
                  source_ids: Sequence[str]) -> tuple[int, list[str]]:
    """Deletes the digests (``domain.digests``) that hold the text of any of the sources
    (``stores.sql.digest_erasure.holding_docs``: not another scope's digest of the same
    window): their full-text rows and vectors. Returns (digests erased, the document ids of
    those windows, for the service to derive again without the erased turns)."""
    docs = holding_docs(conn, memory_id, source_ids)
    fts, vec = erase_docs(conn, memory_id, docs)
    return max(fts, vec), docs


def redact_sources(conn: sqlite3.Connection, memory_id: str, source_ids: Sequence[str],
                   at: str) -> int:
    """Removes source texts and salts; the chain row (digest, hashes) stays verifiable. The
    receipts' idempotency digests (which cover an unsalted hash of the text) become
    ``REDACTED_DIGEST``, so a guessed text cannot be confirmed against them. The digests
    holding the texts are the caller's to erase first (:func:`erase_digests`)."""
    if not source_ids:
        return 0
    conn.execute(f"UPDATE receipts SET digest=? WHERE memory_id=? AND source_id IN "
                 f"({_in(source_ids)})", (REDACTED_DIGEST, memory_id, *source_ids))
    return conn.execute(f"UPDATE sources SET text=NULL, salt=NULL, metadata=NULL, "
                        "payload=NULL, content_hash=NULL, "
                        f"redacted_at=? WHERE "
                        f"memory_id=? AND source_id IN ({_in(source_ids)}) AND "
                        f"(text IS NOT NULL OR salt IS NOT NULL OR payload IS NOT NULL)",
                        (at, memory_id, *source_ids)).rowcount


def drop_profile_renders(conn: sqlite3.Connection, memory_id: str,
                         item_ids: Sequence[str]) -> int:
    """Deletes pinned profile renders that included any of the items."""
    wanted = set(item_ids)
    n = 0
    for activation, scopes, ids in conn.execute(
            "SELECT activation_id, scopes, item_ids FROM profile_renders WHERE memory_id=?",
            (memory_id,)).fetchall():
        if wanted & set(json.loads(ids)):
            conn.execute("DELETE FROM profile_renders WHERE memory_id=? AND activation_id=? "
                         "AND scopes=?", (memory_id, activation, scopes))
            n += 1
    return n


def prune_profile_renders(conn: sqlite3.Connection, memory_id: str) -> int:
    """Deletes the memory's oldest pinned renders once it holds more than
    :data:`MAX_PROFILE_RENDERS`, down to :data:`KEPT_PROFILE_RENDERS` (``secure_delete``
    zeroes their cells). Returns the number deleted."""
    n = conn.execute("SELECT count(*) FROM profile_renders WHERE memory_id=?",
                     (memory_id,)).fetchone()[0]
    if n <= MAX_PROFILE_RENDERS:
        return 0
    return conn.execute(
        "DELETE FROM profile_renders WHERE rowid IN (SELECT rowid FROM profile_renders WHERE "
        "memory_id=? ORDER BY rendered_at DESC, activation_id DESC LIMIT -1 OFFSET ?)",
        (memory_id, KEPT_PROFILE_RENDERS)).rowcount


def erase_items(conn: sqlite3.Connection, memory_id: str, item_ids: Sequence[str],
                scopes: Sequence[str] | None, at: str,
                rekey: Callable[[str], str] | None = None) -> dict[str, Any]:
    """Erases every surface of the given items inside the forget transaction and records
    the scrub owed. Sources are redacted when the items name them or their text contains an
    erased value, within ``scopes`` (None: every scope of the memory).

    Returns:
        Counts per surface plus ``_source_ids`` (the sources redacted),
        ``_digest_docs`` (the digests erased with them, to derive again) and
        ``_held_source_ids`` (matched but kept: an item under legal hold cites them). ``rekey`` re-keys
        the items' idempotency records (see :func:`forget_idempotency`).
    """
    values = payload_values(conn, memory_id, item_ids)
    source_ids = sorted(set(provenance_sources(conn, memory_id, item_ids))
                        | set(sources_containing(conn, memory_id, scopes, values)))
    where, scope_args = _scope_filter(scopes)
    known = {r[0] for r in conn.execute(
        f"SELECT source_id FROM sources WHERE memory_id=? AND source_id IN ({_in(source_ids)})"
        + where, (memory_id, *source_ids, *scope_args))} if source_ids else set()
    held = known & held_sources(conn, memory_id) if known else set()
    source_ids = sorted(known - held)
    prov = conn.execute(f"DELETE FROM provenance WHERE memory_id=? AND item_id IN "
                        f"({_in(item_ids)})", (memory_id, *item_ids)).rowcount if item_ids else 0
    fts, vec = erase_docs(conn, memory_id, [*item_ids, *source_ids])
    digests, digest_docs = erase_digests(conn, memory_id, source_ids)
    record_scrub(conn, memory_id, "forget", at)
    return {
        "digests": digests,
        "_digest_docs": digest_docs,
        "payloads": erase_payloads(conn, memory_id, item_ids),
        "provenance": prov,
        "full_text": fts,
        "vectors": vec,
        "sources": redact_sources(conn, memory_id, source_ids, at),
        "pinned_profiles": drop_profile_renders(conn, memory_id, item_ids),
        "idempotency": forget_idempotency(conn, memory_id, item_ids, rekey),
        "labels": erase_labels(conn, memory_id, item_ids),
        "_source_ids": source_ids,
        "_held_source_ids": sorted(held),
    }
