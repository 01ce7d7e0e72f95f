"""Jobs, runs, receipts and capture cursors (SQLite): the durable side of intake.

Jobs are claimed with a lease inside BEGIN IMMEDIATE (SQLite serialises writers; PostgreSQL
uses FOR UPDATE SKIP LOCKED for the same claim). A job whose lease expired is claimable again,
so a crashed worker's job is retried.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from typing import Any

from remem.errors import CursorMismatch, NotFoundOrNotVisible
from remem.stores import names_a_row


def _row(r: sqlite3.Row | None) -> dict[str, Any] | None:
    return dict(r) if r is not None else None


class JobsMixin:
    """Methods mixed into SQLiteStore (needs ``self.conn`` and ``self._tx``)."""

    # --- jobs ------------------------------------------------------------------------------
    def enqueue_job(self, memory_id: str, kind: str, payload: dict[str, Any], *, run_at: str,
                    now: str, conn: sqlite3.Connection | None = None) -> str:
        job_id = "job_" + uuid.uuid4().hex[:20]
        sql = ("INSERT INTO jobs(job_id, memory_id, kind, payload, state, run_at, created_at, "
               "updated_at) VALUES (?,?,?,?, 'queued', ?,?,?)")
        args = (job_id, memory_id, kind, json.dumps(payload), run_at, now, now)
        if conn is not None:
            conn.execute(sql, args)
        else:
            with self._tx() as c:
                c.execute(sql, args)
        return job_id

    def claim_job(self, worker: str, now: str, lease_until: str, *,
                  memory_id: str | None = None, kinds: list[str] | None = None
                  ) -> dict[str, Any] | None:
        """Claims the oldest due job (queued, or running with an expired lease)."""
        sql = ["SELECT * FROM jobs WHERE ((state='queued' AND run_at <= ?) OR "
               "(state='running' AND lease_until < ?))"]
        args: list[Any] = [now, now]
        if memory_id:
            sql.append("AND memory_id=?")
            args.append(memory_id)
        if kinds:
            sql.append(f"AND kind IN ({','.join('?' * len(kinds))})")
            args.extend(kinds)
        sql.append("ORDER BY run_at, created_at LIMIT 1")
        with self._tx() as c:
            job = c.execute(" ".join(sql), args).fetchone()
            if job is None:
                return None
            c.execute("UPDATE jobs SET state='running', lease_owner=?, lease_until=?, "
                      "attempts=attempts+1, updated_at=? WHERE job_id=?",
                      (worker, lease_until, now, job["job_id"]))
            out = dict(job)
            out["attempts"] += 1
            out["payload"] = json.loads(out["payload"])
            return out

    def finish_job(self, job_id: str, *, state: str, now: str, error: str | None = None,
                   run_at: str | None = None) -> None:
        """Marks a job done/failed, or re-queues it (state='queued' with run_at)."""
        with self._tx() as c:
            c.execute("UPDATE jobs SET state=?, last_error=?, lease_owner=NULL, lease_until=NULL,"
                      " run_at=COALESCE(?, run_at), updated_at=? WHERE job_id=?",
                      (state, error, run_at, now, job_id))

    def pending_jobs(self, memory_id: str, kind: str | None = None) -> int:
        sql = "SELECT count(*) FROM jobs WHERE memory_id=? AND state IN ('queued','running')"
        args: list[Any] = [memory_id]
        if kind:
            sql += " AND kind=?"
            args.append(kind)
        return self.conn.execute(sql, args).fetchone()[0]

    def job_scheduled(self, memory_id: str, kind: str) -> dict[str, Any] | None:
        return _row(self.conn.execute(
            "SELECT * FROM jobs WHERE memory_id=? AND kind=? AND state='queued' ORDER BY run_at "
            "LIMIT 1", (memory_id, kind)).fetchone())

    def reschedule_job(self, job_id: str, run_at: str, now: str) -> None:
        with self._tx() as c:
            c.execute("UPDATE jobs SET run_at=?, updated_at=? WHERE job_id=? AND state='queued'",
                      (run_at, now, job_id))

    # --- runs ------------------------------------------------------------------------------
    def start_run(self, memory_id: str, job_id: str, kind: str, worker: str, now: str) -> str:
        run_id = "run_" + uuid.uuid4().hex[:20]
        with self._tx() as c:
            c.execute("INSERT INTO runs(run_id, memory_id, job_id, kind, status, worker, "
                      "started_at) VALUES (?,?,?,?, 'running', ?,?)",
                      (run_id, memory_id, job_id, kind, worker, now))
        return run_id

    def finish_run(self, run_id: str, *, status: str, now: str, reason: str | None = None,
                   stats: dict[str, Any] | None = None) -> None:
        with self._tx() as c:
            c.execute("UPDATE runs SET status=?, reason=?, stats=?, finished_at=? WHERE run_id=?",
                      (status, reason, json.dumps(stats) if stats is not None else None, now,
                       run_id))

    def list_runs(self, memory_id: str, limit: int = 50) -> list[dict[str, Any]]:
        rows = self.conn.execute("SELECT * FROM runs WHERE memory_id=? ORDER BY started_at DESC,"
                                 " run_id LIMIT ?", (memory_id, limit))
        out = []
        for r in rows:
            d = dict(r)
            d["stats"] = json.loads(d["stats"]) if d["stats"] else None
            out.append(d)
        return out

    # --- receipts ----------------------------------------------------------------------------
    def receipt_by_key(self, memory_id: str, idem_key: str,
                       conn: sqlite3.Connection | None = None) -> dict[str, Any] | None:
        return _row((conn or self.conn).execute(
            "SELECT * FROM receipts WHERE memory_id=? AND idem_key=?",
            (memory_id, idem_key)).fetchone())

    def receipt(self, memory_id: str, receipt_id: str) -> dict[str, Any]:
        row = self.conn.execute("SELECT * FROM receipts WHERE memory_id=? AND receipt_id=?",
                                (memory_id, receipt_id)).fetchone(
                                ) if names_a_row(receipt_id) else None
        if row is None:
            raise NotFoundOrNotVisible(f"No receipt {receipt_id!r} visible in this memory.",
                                       receipt_id=receipt_id)
        return dict(row)

    def insert_receipt(self, conn: sqlite3.Connection, rec: dict[str, Any]) -> None:
        cols = ", ".join(rec)
        conn.execute(f"INSERT INTO receipts({cols}) VALUES ({','.join('?' * len(rec))})",
                     tuple(rec.values()))

    def advance_receipt(self, memory_id: str, receipt_id: str, *, phase: str, now: str,
                        resolved_seq: int | None = None, available_seq: int | None = None,
                        reason: str | None = None, disposition: str | None = None,
                        conn: sqlite3.Connection | None = None) -> None:
        """Moves a receipt forward (phases never move back, except to failed)."""
        order = {"recorded": 0, "processed": 1, "available": 2, "failed": 3}

        def do(c: sqlite3.Connection) -> None:
            cur = c.execute("SELECT phase FROM receipts WHERE memory_id=? AND receipt_id=?",
                            (memory_id, receipt_id)).fetchone()
            if cur is None or order[phase] <= order[cur[0]] or cur[0] in ("available", "failed"):
                return
            c.execute("UPDATE receipts SET phase=?, resolved_seq=COALESCE(?, resolved_seq), "
                      "available_seq=COALESCE(?, available_seq), reason=COALESCE(?, reason), "
                      "disposition=COALESCE(?, disposition), updated_at=? WHERE memory_id=? AND "
                      "receipt_id=?", (phase, resolved_seq, available_seq, reason, disposition,
                                       now, memory_id, receipt_id))
        if conn is not None:
            do(conn)
        else:
            with self._tx() as c:
                do(c)

    def receipts_pending(self, memory_id: str) -> int:
        return self.conn.execute("SELECT count(*) FROM receipts WHERE memory_id=? AND phase IN "
                                 "('recorded','processed')", (memory_id,)).fetchone()[0]

    # --- capture cursors ------------------------------------------------------------------
    def capture_cursor(self, memory_id: str, host_kind: str, host_id: str
                       ) -> dict[str, Any] | None:
        return _row(self.conn.execute(
            "SELECT * FROM capture_cursors WHERE memory_id=? AND host_kind=? AND host_id=?",
            (memory_id, host_kind, host_id)).fetchone())

    def advance_capture_cursor(self, conn: sqlite3.Connection, memory_id: str, host_kind: str,
                               host_id: str, *, expected_position: int, last_event_id: str,
                               position: int, now: str) -> None:
        """Compare-and-set: the cursor must be at ``expected_position``.

        Raises:
            CursorMismatch: another capture advanced it first.
        """
        cur = conn.execute("SELECT position FROM capture_cursors WHERE memory_id=? AND "
                           "host_kind=? AND host_id=?", (memory_id, host_kind, host_id)).fetchone()
        current = cur[0] if cur else 0
        if current != expected_position:
            raise CursorMismatch(f"Capture cursor of {host_kind}:{host_id} is at {current}, not "
                                 f"{expected_position}; re-read it and send only newer turns.",
                                 position=current)
        conn.execute("INSERT OR REPLACE INTO capture_cursors(memory_id, host_kind, host_id, "
                     "last_event_id, position, updated_at) VALUES (?,?,?,?,?,?)",
                     (memory_id, host_kind, host_id, last_event_id, position, now))

    # --- feedback ------------------------------------------------------------------------
    def insert_feedback(self, memory_id: str, rec: dict[str, Any]) -> None:
        with self._tx() as c:
            c.execute("INSERT INTO feedback(memory_id, feedback_id, origin, actor, scope, target, "
                      "text, created_at) VALUES (?,?,?,?,?,?,?,?)",
                      (memory_id, rec["feedback_id"], rec["origin"], rec.get("actor"),
                       rec["scope"], rec.get("target"), rec.get("text"), rec["created_at"]))

    # --- derive support --------------------------------------------------------------------
    def source(self, memory_id: str, source_id: str) -> dict[str, Any] | None:
        """A source row (text is None once redacted)."""
        return _row(self.conn.execute("SELECT * FROM sources WHERE memory_id=? AND source_id=?",
                                      (memory_id, source_id)).fetchone())

    def set_source_disposition(self, memory_id: str, source_id: str, disposition: str) -> None:
        with self._tx() as c:
            c.execute("UPDATE sources SET disposition=? WHERE memory_id=? AND source_id=?",
                      (disposition, memory_id, source_id))

    def live_keys(self, memory_id: str) -> list[tuple[str, str]]:
        """(scope, key) pairs with more than one live item (consolidation candidates)."""
        rows = self.conn.execute("SELECT scope, key FROM items WHERE memory_id=? AND status IN "
                                 "('current','conflict') GROUP BY scope, key HAVING count(*) > 1 "
                                 "ORDER BY scope, key", (memory_id,))
        return [(r[0], r[1]) for r in rows]

    def feedback_row(self, memory_id: str, feedback_id: str) -> dict[str, Any] | None:
        return _row(self.conn.execute("SELECT * FROM feedback WHERE memory_id=? AND "
                                      "feedback_id=?", (memory_id, feedback_id)).fetchone())

    def items_from_source(self, memory_id: str, source_id: str) -> list[str]:
        """Items whose provenance names the source."""
        rows = self.conn.execute("SELECT DISTINCT item_id FROM provenance WHERE memory_id=? AND "
                                 "source_id=? ORDER BY item_id", (memory_id, source_id))
        return [r[0] for r in rows]

    def redact_source(self, memory_id: str, source_id: str) -> dict[str, int]:
        """Removes a source's text and salt and its full-text row and vector."""
        from remem.stores.sqlite.erasure import erase_docs, redact_sources

        with self._tx() as c:
            from datetime import UTC, datetime

            from remem.domain.timefmt import to_iso

            fts, vec = erase_docs(c, memory_id, [source_id])
            n = redact_sources(c, memory_id, [source_id], to_iso(datetime.now(UTC)))
        return {"sources": n, "full_text": fts, "vectors": vec}
