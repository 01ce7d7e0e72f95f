CREATE TABLE memories (
  memory_id TEXT PRIMARY KEY,
  config TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE ledger (
  memory_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  type TEXT NOT NULL,
  data TEXT NOT NULL,
  actor TEXT NOT NULL,
  at TEXT NOT NULL,
  prev_hash TEXT NOT NULL,
  hash TEXT NOT NULL,
  PRIMARY KEY (memory_id, seq)
) WITHOUT ROWID;
CREATE TABLE payloads (
  memory_id TEXT NOT NULL,
  payload_id TEXT NOT NULL,
  item_id TEXT NOT NULL,
  value TEXT NOT NULL,
  quote TEXT,
  salt BLOB NOT NULL,
  PRIMARY KEY (memory_id, payload_id)
);
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
  correction INTEGER NOT NULL DEFAULT 0,
  legal_hold INTEGER NOT NULL DEFAULT 0,
  keep_until TEXT,
  created_seq INTEGER NOT NULL,
  updated_seq INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  last_confirmed_at TEXT NOT NULL,
  seen_count INTEGER NOT NULL DEFAULT 1,
  PRIMARY KEY (memory_id, item_id)
);
CREATE INDEX items_key ON items(memory_id, scope, key);
CREATE INDEX items_status ON items(memory_id, status, item_id);
CREATE INDEX items_claim ON items(memory_id, claim_id);
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
  seq INTEGER NOT NULL,
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
);
CREATE INDEX idempotency_item ON idempotency(memory_id, item_id);
