-- Sources (Log+Facts LogEntry): hash chain per (memory = tenant, run). The chain commits to a
-- salted digest of the payload; erasure deletes text and salt and keeps the chain verifiable.
CREATE TABLE sources (
  memory_id TEXT NOT NULL,
  source_id TEXT NOT NULL,
  run_id TEXT NOT NULL,
  sequence INTEGER NOT NULL,
  scope TEXT NOT NULL,
  kind TEXT NOT NULL,
  role TEXT NOT NULL,
  actor TEXT,
  occurred_at TEXT NOT NULL,
  recorded_at TEXT NOT NULL,
  digest TEXT NOT NULL,
  salt BLOB,
  text TEXT,
  redacted_at TEXT,
  prev_hash TEXT NOT NULL,
  entry_hash TEXT NOT NULL,
  PRIMARY KEY (memory_id, source_id)
);
CREATE UNIQUE INDEX sources_chain ON sources(memory_id, run_id, sequence);
CREATE INDEX sources_scope ON sources(memory_id, scope, occurred_at);
-- Search documents: one row per indexed item or source; rowid is shared with the FTS tables.
CREATE TABLE search_docs (
  rowid INTEGER PRIMARY KEY,
  memory_id TEXT NOT NULL,
  doc_id TEXT NOT NULL,
  doc_type TEXT NOT NULL,
  scope TEXT NOT NULL,
  UNIQUE (memory_id, doc_id)
);
CREATE VIRTUAL TABLE search_fts USING fts5(terms, tokenize='unicode61 remove_diacritics 2');
-- Vectors beside payloads: float32 little-endian blobs, L2-normalised.
CREATE TABLE vectors (
  memory_id TEXT NOT NULL,
  doc_id TEXT NOT NULL,
  doc_type TEXT NOT NULL,
  scope TEXT NOT NULL,
  model TEXT NOT NULL,
  content_hash TEXT NOT NULL,
  vec BLOB NOT NULL,
  PRIMARY KEY (memory_id, doc_id)
);
-- Pinned profile renders: byte-identical output per activation until the next activation.
CREATE TABLE profile_renders (
  memory_id TEXT NOT NULL,
  activation_id TEXT NOT NULL,
  scopes TEXT NOT NULL,
  text TEXT NOT NULL,
  item_ids TEXT NOT NULL,
  rendered_at TEXT NOT NULL,
  PRIMARY KEY (memory_id, activation_id, scopes)
);
-- Each memory records its embedding model and dimension; vector_epoch bumps on every change
-- so in-process vector indexes know when to reload.
ALTER TABLE memories ADD COLUMN embedding_model TEXT;
ALTER TABLE memories ADD COLUMN dimensions INTEGER;
ALTER TABLE memories ADD COLUMN vector_epoch INTEGER NOT NULL DEFAULT 0;
