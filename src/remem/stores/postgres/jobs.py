"""Jobs, runs, receipts and capture cursors (PostgreSQL): the durable side of intake.

Mirrors ``stores/sqlite/jobs.py`` method for method. Many workers share one queue: a claim
selects the oldest due job ``FOR UPDATE SKIP LOCKED``, so concurrent workers never wait on
each other and never claim the same job; a job whose lease expired is claimable again, so a
crashed worker's job is retried. Methods taking ``conn`` run inside the caller's unit of work
(``uow.conn``); the others use their own transaction.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

import psycopg
from psycopg import sql

from remem.errors import CursorMismatch, NotFoundOrNotVisible
from remem.stores import names_a_row

_PHASES = {"recorded": 0, "processed": 1, "available": 2, "failed": 3}


class PostgresJobs:
    """Methods mixed into PostgresStore (needs ``self.db``)."""

    def _in_tx(self, conn: psycopg.Connection | None, fn: Callable[[Any], Any]) -> Any:
        if conn is not None:
            return fn(conn)
        with self.db.transaction() as c:  # type: ignore[attr-defined]
            return fn(c)

    # --- jobs ------------------------------------------------------------------------------
    def enqueue_job(self, memory_id: str, kind: str, payload: dict[str, Any], *, run_at: str,
                    now: str, conn: psycopg.Connection | None = None) -> str:
        job_id = "job_" + uuid.uuid4().hex[:20]
        self._in_tx(conn, lambda c: c.execute(
            "INSERT INTO jobs(job_id, memory_id, kind, payload, state, run_at, created_at, "
            "updated_at) VALUES (%s,%s,%s,%s, 'queued', %s,%s,%s)",
            (job_id, memory_id, kind, json.dumps(payload), run_at, now, now)))
        return job_id

    def claim_job(self, worker: str, now: str, lease_until: str, *,
                  memory_id: str | None = None, kinds: list[str] | None = None
                  ) -> dict[str, Any] | None:
        """Claims the oldest due job (queued, or running with an expired lease); skips jobs
        another worker is claiming right now (FOR UPDATE SKIP LOCKED)."""
        q = ["SELECT * FROM jobs WHERE ((state='queued' AND run_at <= %s) OR "
             "(state='running' AND lease_until < %s))"]
        args: list[Any] = [now, now]
        if memory_id:
            q.append("AND memory_id=%s")
            args.append(memory_id)
        if kinds:
            q.append("AND kind = ANY(%s)")
            args.append(list(kinds))
        q.append("ORDER BY run_at, created_at LIMIT 1 FOR UPDATE SKIP LOCKED")
        with self.db.transaction() as c:  # type: ignore[attr-defined]
            job = c.execute(" ".join(q), args).fetchone()
            if job is None:
                return None
            c.execute("UPDATE jobs SET state='running', lease_owner=%s, lease_until=%s, "
                      "attempts=attempts+1, updated_at=%s WHERE job_id=%s",
                      (worker, lease_until, now, job["job_id"]))
        out = dict(job)
        out["attempts"] += 1
        out["payload"] = json.loads(out["payload"])
        return out

    def finish_job(self, job_id: str, *, state: str, now: str, error: str | None = None,
                   run_at: str | None = None) -> None:
        """Marks a job done/failed, or re-queues it (state='queued' with run_at)."""
        with self.db.transaction() as c:  # type: ignore[attr-defined]
            c.execute("UPDATE jobs SET state=%s, last_error=%s, lease_owner=NULL, "
                      "lease_until=NULL, run_at=COALESCE(%s, run_at), updated_at=%s "
                      "WHERE job_id=%s", (state, error, run_at, now, job_id))

    def pending_jobs(self, memory_id: str, kind: str | None = None) -> int:
        q = "SELECT count(*) AS n FROM jobs WHERE memory_id=%s AND state IN ('queued','running')"
        args: list[Any] = [memory_id]
        if kind:
            q += " AND kind=%s"
            args.append(kind)
        return self.db.fetchone(q, args)["n"]  # type: ignore[attr-defined]

    def job_scheduled(self, memory_id: str, kind: str) -> dict[str, Any] | None:
        return self.db.fetchone(  # type: ignore[attr-defined]
            "SELECT * FROM jobs WHERE memory_id=%s AND kind=%s AND state='queued' "
            "ORDER BY run_at LIMIT 1", (memory_id, kind))

    def reschedule_job(self, job_id: str, run_at: str, now: str) -> None:
        with self.db.transaction() as c:  # type: ignore[attr-defined]
            c.execute("UPDATE jobs SET run_at=%s, updated_at=%s WHERE job_id=%s AND "
                      "state='queued'", (run_at, now, job_id))

    # --- runs ------------------------------------------------------------------------------
    def start_run(self, memory_id: str, job_id: str, kind: str, worker: str, now: str) -> str:
        run_id = "run_" + uuid.uuid4().hex[:20]
        with self.db.transaction() as c:  # type: ignore[attr-defined]
            c.execute("INSERT INTO runs(run_id, memory_id, job_id, kind, status, worker, "
                      "started_at) VALUES (%s,%s,%s,%s, 'running', %s,%s)",
                      (run_id, memory_id, job_id, kind, worker, now))
        return run_id

    def finish_run(self, run_id: str, *, status: str, now: str, reason: str | None = None,
                   stats: dict[str, Any] | None = None) -> None:
        with self.db.transaction() as c:  # type: ignore[attr-defined]
            c.execute("UPDATE runs SET status=%s, reason=%s, stats=%s, finished_at=%s "
                      "WHERE run_id=%s", (status, reason,
                                          json.dumps(stats) if stats is not None else None,
                                          now, run_id))

    def list_runs(self, memory_id: str, limit: int = 50) -> list[dict[str, Any]]:
        rows = self.db.fetchall(  # type: ignore[attr-defined]
            'SELECT * FROM runs WHERE memory_id=%s ORDER BY started_at DESC, run_id COLLATE "C"'
            " LIMIT %s", (memory_id, limit))
        for d in rows:
            d["stats"] = json.loads(d["stats"]) if d["stats"] else None
        return rows

    # --- receipts ----------------------------------------------------------------------------
    def receipt_by_key(self, memory_id: str, idem_key: str,
                       conn: psycopg.Connection | None = None) -> dict[str, Any] | None:
        q, args = "SELECT * FROM receipts WHERE memory_id=%s AND idem_key=%s", (memory_id,
                                                                                   idem_key)
        if conn is not None:
            return conn.execute(q, args).fetchone()
        return self.db.fetchone(q, args)  # type: ignore[attr-defined]

    def receipt(self, memory_id: str, receipt_id: str) -> dict[str, Any]:
        row = self.db.fetchone("SELECT * FROM receipts WHERE memory_id=%s AND "  # type: ignore
                               "receipt_id=%s", (memory_id, receipt_id)
                               ) if names_a_row(receipt_id) else None
        if row is None:
            raise NotFoundOrNotVisible(f"No receipt {receipt_id!r} visible in this memory.",
                                       receipt_id=receipt_id)
        return row

    def insert_receipt(self, conn: psycopg.Connection, rec: dict[str, Any]) -> None:
        conn.execute(sql.SQL("INSERT INTO receipts({}) VALUES ({})").format(
            sql.SQL(", ").join(map(sql.Identifier, rec)),
            sql.SQL(", ").join(sql.Placeholder() * len(rec))), tuple(rec.values()))

    def advance_receipt(self, memory_id: str, receipt_id: str, *, phase: str, now: str,
                        resolved_seq: int | None = None, available_seq: int | None = None,
                        reason: str | None = None, disposition: str | None = None,
                        conn: psycopg.Connection | None = None) -> None:
        """Moves a receipt forward (phases never move back, except to failed); the row is
        locked while it is checked so concurrent workers cannot move it backwards."""
        def do(c: psycopg.Connection) -> None:
            cur = c.execute("SELECT phase FROM receipts WHERE memory_id=%s AND receipt_id=%s "
                            "FOR UPDATE", (memory_id, receipt_id)).fetchone()
            if cur is None or _PHASES[phase] <= _PHASES[cur["phase"]] \
                    or cur["phase"] in ("available", "failed"):
                return
            c.execute("UPDATE receipts SET phase=%s, resolved_seq=COALESCE(%s, resolved_seq), "
                      "available_seq=COALESCE(%s, available_seq), reason=COALESCE(%s, reason), "
                      "disposition=COALESCE(%s, disposition), updated_at=%s WHERE memory_id=%s "
                      "AND receipt_id=%s", (phase, resolved_seq, available_seq, reason,
                                            disposition, now, memory_id, receipt_id))
        self._in_tx(conn, do)

    def receipts_pending(self, memory_id: str) -> int:
        return self.db.fetchone(  # type: ignore[attr-defined]
            "SELECT count(*) AS n FROM receipts WHERE memory_id=%s AND phase IN "
            "('recorded','processed')", (memory_id,))["n"]

    # --- capture cursors ------------------------------------------------------------------
    def capture_cursor(self, memory_id: str, host_kind: str, host_id: str
                       ) -> dict[str, Any] | None:
        return self.db.fetchone(  # type: ignore[attr-defined]
            "SELECT * FROM capture_cursors WHERE memory_id=%s AND host_kind=%s AND host_id=%s",
            (memory_id, host_kind, host_id))

    def advance_capture_cursor(self, conn: psycopg.Connection, memory_id: str, host_kind: str,
                               host_id: str, *, expected_position: int, last_event_id: str,
                               position: int, now: str) -> None:
        """Compare-and-set: the cursor must be at ``expected_position``.

        Raises:
            CursorMismatch: another capture advanced it first.
        """
        cur = conn.execute("SELECT position FROM capture_cursors WHERE memory_id=%s AND "
                           "host_kind=%s AND host_id=%s FOR UPDATE",
                           (memory_id, host_kind, host_id)).fetchone()
        current = cur["position"] if cur else 0
        if current != expected_position:
            raise CursorMismatch(f"Capture cursor of {host_kind}:{host_id} is at {current}, not "
                                 f"{expected_position}; re-read it and send only newer turns.",
                                 position=current)
        conn.execute("INSERT INTO capture_cursors(memory_id, host_kind, host_id, last_event_id, "
                     "position, updated_at) VALUES (%s,%s,%s,%s,%s,%s) ON CONFLICT (memory_id, "
                     "host_kind, host_id) DO UPDATE SET last_event_id=EXCLUDED.last_event_id, "
                     "position=EXCLUDED.position, updated_at=EXCLUDED.updated_at",
                     (memory_id, host_kind, host_id, last_event_id, position, now))

    # --- feedback ------------------------------------------------------------------------
    def insert_feedback(self, memory_id: str, rec: dict[str, Any]) -> None:
        with self.db.transaction() as c:  # type: ignore[attr-defined]
            c.execute("INSERT INTO feedback(memory_id, feedback_id, origin, actor, scope, "
                      "target, text, created_at) VALUES (%s,%s,%s,%s,%s,%s,%s,%s)",
                      (memory_id, rec["feedback_id"], rec["origin"], rec.get("actor"),
                       rec["scope"], rec.get("target"), rec.get("text"), rec["created_at"]))

    # --- derive support --------------------------------------------------------------------
    def source(self, memory_id: str, source_id: str) -> dict[str, Any] | None:
        """A source row (text is None once redacted)."""
        if not names_a_row(source_id):
            return None
        return self.db.fetchone("SELECT * FROM sources WHERE memory_id=%s AND "  # type: ignore
                                "source_id=%s", (memory_id, source_id))

    def set_source_disposition(self, memory_id: str, source_id: str, disposition: str) -> None:
        with self.db.transaction() as c:  # type: ignore[attr-defined]
            c.execute("UPDATE sources SET disposition=%s WHERE memory_id=%s AND source_id=%s",
                      (disposition, memory_id, source_id))

    def live_keys(self, memory_id: str) -> list[tuple[str, str]]:
        """(scope, key) pairs with more than one live item (consolidation candidates)."""
        rows = self.db.fetchall(  # type: ignore[attr-defined]
            "SELECT scope, key FROM items WHERE memory_id=%s AND status IN ('current',"
            "'conflict') GROUP BY scope, key HAVING count(*) > 1 ORDER BY scope COLLATE \"C\", "
            "key COLLATE \"C\"", (memory_id,))
        return [(r["scope"], r["key"]) for r in rows]

    def feedback_row(self, memory_id: str, feedback_id: str) -> dict[str, Any] | None:
        return self.db.fetchone("SELECT * FROM feedback WHERE memory_id=%s AND "  # type: ignore
                                "feedback_id=%s", (memory_id, feedback_id))

    def items_from_source(self, memory_id: str, source_id: str) -> list[str]:
        """Items whose provenance names the source."""
        rows = self.db.fetchall(  # type: ignore[attr-defined]
            "SELECT item_id FROM provenance WHERE memory_id=%s AND source_id=%s "
            'GROUP BY item_id ORDER BY item_id COLLATE "C"', (memory_id, source_id))
        return [r["item_id"] for r in rows]

    def redact_source(self, memory_id: str, source_id: str) -> dict[str, int]:
        """Removes a source's text and salt and its full-text row and vector; records the
        physical scrub owed (finished by ``scrub_after_erasure``)."""
        from datetime import UTC, datetime

        from remem.domain.timefmt import to_iso
        from remem.stores.postgres.erasure import erase_docs, record_scrub, redact_sources

        at = to_iso(datetime.now(UTC))
        with self.db.transaction() as c:  # type: ignore[attr-defined]
            fts, vec = erase_docs(c, memory_id, [source_id])
            n = redact_sources(c, memory_id, [source_id], at)
            record_scrub(c, memory_id, [t for t, k in (("sources", n), ("search_docs", fts))
                                        if k], at)
        return {"sources": n, "full_text": fts, "vectors": vec}
