"""Jobs, runs, receipts, capture cursors and feedback (both backends): intake's durable side.

A claim selects the oldest due job and leases it in one transaction: SQLite serialises
writers (BEGIN IMMEDIATE); PostgreSQL selects ``FOR UPDATE SKIP LOCKED`` so many workers share
one queue, never wait on each other and never claim the same job. A job whose lease expired
is claimable again, so a crashed worker's job is retried. Methods taking ``conn`` run inside
the caller's unit of work (``uow.conn``); the others use their own transaction. Ids and times
come from the service.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from remem.errors import CursorMismatch, InvalidInput, NotFoundOrNotVisible
from remem.stores import names_a_row
from remem.stores.sql.dialect import as_dict
from remem.stores.sql.store import SqlStore

_PHASES = {"recorded": 0, "processed": 1, "available": 2, "failed": 3}


class SqlJobs(SqlStore):
    """Shared by ``SQLiteStore`` and ``PostgresStore`` through ``SqlStore``."""

    def _in_tx(self, conn: Any, fn: Callable[[Any], Any]) -> Any:
        if conn is not None:
            return fn(conn)
        with self._write() as c:
            return fn(c)

    # --- jobs ------------------------------------------------------------------------------
    def enqueue_job(self, memory_id: str, kind: str, payload: dict[str, Any], *, run_at: str,
                    now: str, conn: Any = None, job_id: str) -> str:
        """Queues a job (id minted by the service); returns its id."""
        self._in_tx(conn, lambda c: self._x(
            c, "INSERT INTO jobs(job_id, memory_id, kind, payload, state, run_at, created_at, "
               "updated_at) VALUES (?,?,?,?, 'queued', ?,?,?)",
            (job_id, memory_id, kind, json.dumps(payload), run_at, now, now)))
        return job_id

    def claim_job(self, worker: str, now: str, lease_until: str, *,
                  memory_id: str | None = None, kinds: list[str] | None = None
                  ) -> dict[str, Any] | None:
        """Claims the oldest due job (queued, or running with an expired lease)."""
        d = self.dialect
        q = ["SELECT * FROM jobs WHERE ((state='queued' AND run_at <= ?) OR "
             "(state='running' AND lease_until < ?))"]
        args: list[Any] = [now, now]
        if memory_id:
            q.append("AND memory_id=?")
            args.append(memory_id)
        if kinds:
            test, more = d.any_of("kind", kinds)
            q.append("AND " + test)
            args.extend(more)
        q.append("ORDER BY run_at, created_at LIMIT 1" + d.claim_rows)
        with self._write() as c:
            job = as_dict(self._x(c, " ".join(q), args).fetchone())
            if job is None:
                return None
            self._x(c, "UPDATE jobs SET state='running', lease_owner=?, lease_until=?, "
                       "attempts=attempts+1, updated_at=? WHERE job_id=?",
                    (worker, lease_until, now, job["job_id"]))
        job["attempts"] += 1
        job["payload"] = json.loads(job["payload"])
        return job

    def finish_job(self, job_id: str, *, state: str, now: str, error: str | None = None,
                   run_at: str | None = None) -> None:
        """Marks a job done/failed, or re-queues it (state='queued' with run_at)."""
        with self._write() as c:
            self._x(c, "UPDATE jobs SET state=?, last_error=?, lease_owner=NULL, "
                       "lease_until=NULL, run_at=COALESCE(?, run_at), updated_at=? "
                       "WHERE job_id=?", (state, error, run_at, now, job_id))

    def pending_jobs(self, memory_id: str, kind: str | None = None) -> int:
        q = "SELECT count(*) AS n FROM jobs WHERE memory_id=? AND state IN ('queued','running')"
        args: list[Any] = [memory_id]
        if kind:
            q += " AND kind=?"
            args.append(kind)
        return self._one(q, args)["n"]

    def job_health(self, memory_id: str, now: str) -> dict[str, Any]:
        """Open and failed jobs of one memory, for ``status`` (index health).

        Args:
            now: the service clock's time (ISO UTC); a queued job with a later ``run_at`` is
                scheduled, not pending.

        Returns:
            ``{"kinds": {kind: {"pending", "running", "scheduled", "failed"}},
            "oldest_pending_at": run_at of the oldest due open job or None,
            "last_error": {"job_id", "kind", "state", "at", "error"} or None}``; the error is
            the stored text (the service makes it presentable).
        """
        rows = self._all(
            "SELECT kind, state, due, count(*) AS n, min(run_at) AS oldest FROM (SELECT "
            "kind, state, run_at, CASE WHEN run_at <= ? THEN 1 ELSE 0 END AS due FROM jobs "
            "WHERE memory_id=? AND state IN ('queued','running','failed')) j "
            "GROUP BY kind, state, due", (now, memory_id))
        kinds: dict[str, dict[str, int]] = {}
        oldest = None
        for r in rows:
            k = kinds.setdefault(r["kind"], {"pending": 0, "running": 0, "scheduled": 0,
                                             "failed": 0})
            name = {"failed": "failed", "running": "running"}.get(
                r["state"], "pending" if r["due"] else "scheduled")
            k[name] += r["n"]
            if name in ("pending", "running") and (oldest is None or r["oldest"] < oldest):
                oldest = r["oldest"]
        err = self._one("SELECT job_id, kind, state, updated_at AS at, last_error AS error "
                        "FROM jobs WHERE memory_id=? AND last_error IS NOT NULL AND state <> "
                        "'done' ORDER BY updated_at DESC, " + self.dialect.bytewise("job_id")
                        + " DESC LIMIT 1", (memory_id,))
        return {"kinds": kinds, "oldest_pending_at": oldest, "last_error": err}

    def receipt_phases(self, memory_id: str) -> dict[str, int]:
        """Receipts of one memory counted per phase (recorded, processed, available,
        failed); phases without receipts are absent."""
        rows = self._all("SELECT phase, count(*) AS n FROM receipts WHERE memory_id=? "
                         "GROUP BY phase", (memory_id,))
        return {r["phase"]: r["n"] for r in rows}

    def job_scheduled(self, memory_id: str, kind: str) -> dict[str, Any] | None:
        return self._one("SELECT * FROM jobs WHERE memory_id=? AND kind=? AND "
                         "state='queued' ORDER BY run_at LIMIT 1", (memory_id, kind))

    def reschedule_job(self, job_id: str, run_at: str, now: str) -> None:
        with self._write() as c:
            self._x(c, "UPDATE jobs SET run_at=?, updated_at=? WHERE job_id=? AND "
                       "state='queued'", (run_at, now, job_id))

    # --- runs ------------------------------------------------------------------------------
    def start_run(self, memory_id: str, job_id: str, kind: str, worker: str, now: str, *,
                  run_id: str) -> str:
        """Records a running run (id minted by the service); returns its id."""
        with self._write() as c:
            self._x(c, "INSERT INTO runs(run_id, memory_id, job_id, kind, status, worker, "
                       "started_at) VALUES (?,?,?,?, 'running', ?,?)",
                    (run_id, memory_id, job_id, kind, worker, now))
        return run_id

    def finish_run(self, run_id: str, *, status: str, now: str, reason: str | None = None,
                   stats: dict[str, Any] | None = None) -> None:
        with self._write() as c:
            self._x(c, "UPDATE runs SET status=?, reason=?, stats=?, finished_at=? "
                       "WHERE run_id=?", (status, reason,
                                          json.dumps(stats) if stats is not None else None,
                                          now, run_id))

    def list_runs(self, memory_id: str, limit: int = 50) -> list[dict[str, Any]]:
        rows = self._all("SELECT * FROM runs WHERE memory_id=? ORDER BY started_at DESC, "
                         + self.dialect.bytewise("run_id") + " LIMIT ?",
                         (memory_id, limit))
        for d in rows:
            d["stats"] = json.loads(d["stats"]) if d["stats"] else None
        return rows

    # --- receipts ----------------------------------------------------------------------------
    def receipt_by_key(self, memory_id: str, idem_key: str,
                       conn: Any = None) -> dict[str, Any] | None:
        q, args = "SELECT * FROM receipts WHERE memory_id=? AND idem_key=?", (memory_id, idem_key)
        if conn is not None:
            return as_dict(self._x(conn, q, args).fetchone())
        return self._one(q, args)

    def receipt(self, memory_id: str, receipt_id: str) -> dict[str, Any]:
        row = self._one("SELECT * FROM receipts WHERE memory_id=? AND receipt_id=?",
                        (memory_id, receipt_id)) if names_a_row(receipt_id) else None
        if row is None:
            raise NotFoundOrNotVisible(f"No receipt {receipt_id!r} visible in this memory.",
                                       receipt_id=receipt_id)
        return row

    def insert_receipt(self, conn: Any, rec: dict[str, Any]) -> None:
        """Inserts a receipt row (keys are column names, checked to be plain identifiers)."""
        if not all(isinstance(k, str) and k.isidentifier() for k in rec):
            raise InvalidInput("receipt columns must be plain names.", field="receipt")
        self._x(conn, f"INSERT INTO receipts({', '.join(rec)}) VALUES "
                      f"({','.join('?' * len(rec))})", tuple(rec.values()))

    def advance_receipt(self, memory_id: str, receipt_id: str, *, phase: str, now: str,
                        resolved_seq: int | None = None, available_seq: int | None = None,
                        reason: str | None = None, disposition: str | None = None,
                        conn: Any = None) -> None:
        """Moves a receipt forward (phases never move back, except to failed); the row is
        locked while it is checked so concurrent workers cannot move it backwards."""
        def do(c: Any) -> None:
            cur = self._x(c, "SELECT phase FROM receipts WHERE memory_id=? AND receipt_id=?"
                          + self.dialect.lock_rows, (memory_id, receipt_id)).fetchone()
            if cur is None or _PHASES[phase] <= _PHASES[cur["phase"]] \
                    or cur["phase"] in ("available", "failed"):
                return
            self._x(c, "UPDATE receipts SET phase=?, resolved_seq=COALESCE(?, resolved_seq), "
                       "available_seq=COALESCE(?, available_seq), reason=COALESCE(?, reason), "
                       "disposition=COALESCE(?, disposition), updated_at=? WHERE memory_id=? "
                       "AND receipt_id=?", (phase, resolved_seq, available_seq, reason,
                                            disposition, now, memory_id, receipt_id))
        self._in_tx(conn, do)

    def receipts_pending(self, memory_id: str) -> int:
        return self._one("SELECT count(*) AS n FROM receipts WHERE memory_id=? AND phase IN "
                         "('recorded','processed')", (memory_id,))["n"]

    # --- capture cursors ------------------------------------------------------------------
    def capture_cursor(self, memory_id: str, host_kind: str, host_id: str
                       ) -> dict[str, Any] | None:
        return self._one("SELECT * FROM capture_cursors WHERE memory_id=? AND host_kind=? "
                         "AND host_id=?", (memory_id, host_kind, host_id))

    def advance_capture_cursor(self, conn: Any, memory_id: str, host_kind: str,
                               host_id: str, *, expected_position: int, last_event_id: str,
                               position: int, now: str) -> None:
        """Compare-and-set: the cursor must be at ``expected_position``.

        Raises:
            CursorMismatch: another capture advanced it first.
        """
        cur = self._x(conn, "SELECT position FROM capture_cursors WHERE memory_id=? AND "
                            "host_kind=? AND host_id=?" + self.dialect.lock_rows,
                      (memory_id, host_kind, host_id)).fetchone()
        current = cur["position"] if cur else 0
        if current != expected_position:
            raise CursorMismatch(f"Capture cursor of {host_kind}:{host_id} is at {current}, not "
                                 f"{expected_position}; re-read it and send only newer turns.",
                                 position=current)
        self._x(conn, "INSERT INTO capture_cursors(memory_id, host_kind, host_id, "
                      "last_event_id, position, updated_at) VALUES (?,?,?,?,?,?) ON CONFLICT "
                      "(memory_id, host_kind, host_id) DO UPDATE SET last_event_id="
                      "excluded.last_event_id, position=excluded.position, "
                      "updated_at=excluded.updated_at",
                (memory_id, host_kind, host_id, last_event_id, position, now))

    # --- feedback ------------------------------------------------------------------------
    def insert_feedback(self, memory_id: str, rec: dict[str, Any]) -> None:
        with self._write() as c:
            self._x(c, "INSERT INTO feedback(memory_id, feedback_id, origin, actor, scope, "
                       "target, text, created_at, source_ref) VALUES (?,?,?,?,?,?,?,?,?)",
                    (memory_id, rec["feedback_id"], rec["origin"], rec.get("actor"),
                     rec["scope"], rec.get("target"), rec.get("text"), rec["created_at"],
                     rec.get("source_ref")))

    def feedback_row(self, memory_id: str, feedback_id: str) -> dict[str, Any] | None:
        return self._one("SELECT * FROM feedback WHERE memory_id=? AND feedback_id=?",
                         (memory_id, feedback_id))

    def erase_feedback(self, memory_id: str, scope: str, at: str) -> int:
        """Deletes every feedback row of ``scope`` (its text with it) and records the scrub
        owed (PostgreSQL); ``at`` is the erasure time. Returns the rows deleted."""
        with self._write() as c:
            n = self._x(c, "DELETE FROM feedback WHERE memory_id=? AND scope=?",
                        (memory_id, scope)).rowcount
            if n:
                self._scrub_owed(c, memory_id, ["feedback"], at)
        return n

    # --- derive support --------------------------------------------------------------------
    def source(self, memory_id: str, source_id: str) -> dict[str, Any] | None:
        """A source row (text is None once redacted)."""
        if not names_a_row(source_id):
            return None
        return self._one("SELECT * FROM sources WHERE memory_id=? AND source_id=?",
                         (memory_id, source_id))

    def set_source_disposition(self, memory_id: str, source_id: str, disposition: str) -> None:
        with self._write() as c:
            self._x(c, "UPDATE sources SET disposition=? WHERE memory_id=? AND source_id=?",
                    (disposition, memory_id, source_id))

    def live_keys(self, memory_id: str) -> list[tuple[str, str]]:
        """(scope, key) pairs with more than one live item (consolidation candidates)."""
        d = self.dialect
        rows = self._all("SELECT scope, key FROM items WHERE memory_id=? AND status IN "
                         "('current','conflict') GROUP BY scope, key HAVING count(*) > 1 "
                         f"ORDER BY {d.bytewise('scope')}, {d.bytewise('key')}", (memory_id,))
        return [(r["scope"], r["key"]) for r in rows]

    def scope_contents(self, memory_id: str, scope: str) -> tuple[list[Any], list[str]]:
        """What a forget of a whole scope erases: its items not yet forgotten (any other
        status, by key then revision) and the ids of its sources whose text is still held."""
        from remem.stores.sql.rows import row_to_item

        d = self.dialect
        items = self._all("SELECT * FROM items WHERE memory_id=? AND scope=? AND status <> "
                          f"'forgotten' ORDER BY {d.bytewise('key')}, revision, created_seq",
                          (memory_id, scope))
        sources = self._all("SELECT source_id FROM sources WHERE memory_id=? AND scope=? AND "
                            f"text IS NOT NULL ORDER BY {d.bytewise('source_id')}",
                            (memory_id, scope))
        return [row_to_item(r) for r in items], [r["source_id"] for r in sources]

    def items_from_source(self, memory_id: str, source_id: str) -> list[str]:
        """Items whose provenance names the source."""
        rows = self._all("SELECT item_id FROM provenance WHERE memory_id=? AND "
                         "source_id=? GROUP BY item_id ORDER BY " + self.dialect.bytewise("item_id"),
                         (memory_id, source_id))
        return [r["item_id"] for r in rows]
