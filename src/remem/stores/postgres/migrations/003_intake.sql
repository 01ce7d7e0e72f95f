-- Receipts, jobs, runs, capture cursors, feedback (mirrors sqlite 003_intake.sql).
-- Jobs are claimed with SELECT ... FOR UPDATE SKIP LOCKED (many workers, one queue).
-- Receipts (KIP): durable acknowledgement of an intake with its phase and sequence numbers.
CREATE TABLE receipts (
  memory_id TEXT NOT NULL,
  receipt_id TEXT NOT NULL,
  intent TEXT NOT NULL,
  idem_key TEXT NOT NULL,
  digest TEXT NOT NULL,
  scope TEXT NOT NULL,
  source_id TEXT,
  phase TEXT NOT NULL,
  accepted_seq BIGINT NOT NULL,
  resolved_seq BIGINT,
  available_seq BIGINT,
  disposition TEXT,
  reason TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (memory_id, receipt_id),
  UNIQUE (memory_id, idem_key)
);
CREATE INDEX receipts_phase ON receipts(memory_id, phase);
-- Jobs claimed with a lease; a crashed worker's job is retried after the lease expires.
CREATE TABLE jobs (
  job_id TEXT PRIMARY KEY,
  memory_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  payload TEXT NOT NULL,
  state TEXT NOT NULL,
  run_at TEXT NOT NULL,
  lease_owner TEXT,
  lease_until TEXT,
  attempts INTEGER NOT NULL DEFAULT 0,
  max_attempts INTEGER NOT NULL DEFAULT 3,
  last_error TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX jobs_claim ON jobs(state, run_at);
CREATE INDEX jobs_memory ON jobs(memory_id, kind, state);
-- Runs: one row per job execution, with status and failure reason (`remem runs`).
CREATE TABLE runs (
  run_id TEXT PRIMARY KEY,
  memory_id TEXT NOT NULL,
  job_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  status TEXT NOT NULL,
  reason TEXT,
  stats TEXT,
  worker TEXT NOT NULL,
  started_at TEXT NOT NULL,
  finished_at TEXT
);
CREATE INDEX runs_memory ON runs(memory_id, started_at);
-- Capture cursors per host conversation, advanced by compare-and-set.
CREATE TABLE capture_cursors (
  memory_id TEXT NOT NULL,
  host_kind TEXT NOT NULL,
  host_id TEXT NOT NULL,
  last_event_id TEXT NOT NULL,
  position BIGINT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (memory_id, host_kind, host_id)
);
-- Source dispositions after derive: formed | evidence_only | skipped.
ALTER TABLE sources ADD COLUMN disposition TEXT;
-- The source's own UTC offset (minutes), kept so relative dates resolve in its zone.
ALTER TABLE sources ADD COLUMN tz_offset_min INTEGER;
-- Feedback (KIP): stored with its real origin, never a grade.
CREATE TABLE feedback (
  memory_id TEXT NOT NULL,
  feedback_id TEXT NOT NULL,
  origin TEXT NOT NULL,
  actor TEXT,
  scope TEXT NOT NULL,
  target TEXT,
  text TEXT,
  created_at TEXT NOT NULL,
  PRIMARY KEY (memory_id, feedback_id)
);
