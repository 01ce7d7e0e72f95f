-- PostgreSQL schema, version 1: memories, ledger, payloads, read model, idempotency.
-- Mirrors stores/sqlite/migrations/001_core.sql (same tables, columns and keys). Times are
-- fixed-width ISO-8601 UTC text (domain.timefmt), so rows compare equal across backends.
--
-- Tables that hold memory text (payloads, idempotency digests and, from 002, sources,
-- search_docs, vectors, profile_renders) are LIST-partitioned by memory_id: one partition per
-- memory, created by create_memory. Forget rewrites only that memory's partitions
-- (VACUUM FULL) so deleted text leaves the table files; delete_memory drops them.
CREATE TABLE memories (
  memory_id TEXT PRIMARY KEY,
  mno BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
  config JSON NOT NULL,  -- json, not jsonb: key order is kept as written (like SQLite)
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE ledger (
  memory_id TEXT NOT NULL,
  seq BIGINT NOT NULL,
  type TEXT NOT NULL,
  data TEXT NOT NULL,
  actor TEXT NOT NULL,
  at TEXT NOT NULL,
  prev_hash TEXT NOT NULL,
  hash TEXT NOT NULL,
  CONSTRAINT ledger_pkey PRIMARY KEY (memory_id, seq)
);
CREATE TABLE payloads (
  memory_id TEXT NOT NULL,
  payload_id TEXT NOT NULL,
  item_id TEXT NOT NULL,
  value TEXT NOT NULL,
  quote TEXT,
  salt BYTEA NOT NULL,
  PRIMARY KEY (memory_id, payload_id)
) PARTITION BY LIST (memory_id);
CREATE INDEX payloads_item ON payloads(memory_id, item_id);
CREATE TABLE items (
  memory_id TEXT NOT NULL,
  item_id TEXT NOT NULL,
  claim_id TEXT NOT NULL,
  scope TEXT NOT NULL,
  key TEXT NOT NULL,
  kind TEXT NOT NULL,
  cardinality TEXT NOT NULL,
  status TEXT NOT NULL,
  revision INTEGER NOT NULL,
  valid_at TEXT NOT NULL,
  invalid_at TEXT,
  valid_until TEXT,
  payload_id TEXT NOT NULL,
  content_hash TEXT NOT NULL,
  authority TEXT NOT NULL,
  source_id TEXT,
  source_role TEXT,
  superseded_by TEXT,
  conflict_group TEXT,
  prior_status TEXT,
  correction BOOLEAN NOT NULL DEFAULT FALSE,
  legal_hold BOOLEAN NOT NULL DEFAULT FALSE,
  keep_until TEXT,
  created_seq BIGINT NOT NULL,
  updated_seq BIGINT NOT NULL,
  created_at TEXT NOT NULL,
  last_confirmed_at TEXT NOT NULL,
  seen_count INTEGER NOT NULL DEFAULT 1,
  PRIMARY KEY (memory_id, item_id)
);
CREATE INDEX items_key ON items(memory_id, scope, key);
CREATE INDEX items_status ON items(memory_id, status, item_id);
CREATE INDEX items_claim ON items(memory_id, claim_id);
CREATE INDEX items_keep_until ON items(memory_id, keep_until) WHERE keep_until IS NOT NULL;
CREATE TABLE keys (
  memory_id TEXT NOT NULL,
  key TEXT NOT NULL,
  cardinality TEXT NOT NULL,
  on_change TEXT NOT NULL,
  PRIMARY KEY (memory_id, key)
);
CREATE TABLE key_revisions (
  memory_id TEXT NOT NULL,
  scope TEXT NOT NULL,
  key TEXT NOT NULL,
  revision INTEGER NOT NULL,
  PRIMARY KEY (memory_id, scope, key)
);
CREATE TABLE tombstones (
  memory_id TEXT NOT NULL,
  scope TEXT NOT NULL,
  key TEXT NOT NULL,
  claim_id TEXT NOT NULL,
  PRIMARY KEY (memory_id, scope, key, claim_id)
);
CREATE TABLE provenance (
  memory_id TEXT NOT NULL,
  item_id TEXT NOT NULL,
  seq BIGINT NOT NULL,
  source_id TEXT,
  source_role TEXT,
  seen_at TEXT NOT NULL
);
CREATE INDEX provenance_item ON provenance(memory_id, item_id);
CREATE TABLE idempotency (
  memory_id TEXT NOT NULL,
  idem_key TEXT NOT NULL,
  digest TEXT NOT NULL,
  result TEXT NOT NULL,
  item_id TEXT,
  created_at TEXT NOT NULL,
  PRIMARY KEY (memory_id, idem_key)
) PARTITION BY LIST (memory_id);
CREATE INDEX idempotency_item ON idempotency(memory_id, item_id);
-- PostgreSQL only: physical scrubs owed after an erasure. A row is written in the forget
-- transaction (xid = that transaction) and marked done once the memory's text partitions
-- were rewritten after every snapshot that could still see the deleted rows had ended.
CREATE TABLE erasure_scrubs (
  memory_id TEXT NOT NULL,
  xid XID8 NOT NULL,
  tables TEXT[] NOT NULL,
  requested_at TEXT NOT NULL,
  done_at TEXT,
  PRIMARY KEY (memory_id, xid)
);
CREATE INDEX erasure_scrubs_pending ON erasure_scrubs(memory_id) WHERE done_at IS NULL;
