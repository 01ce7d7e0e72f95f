-- Sources, search documents, vectors and pinned profile renders (mirrors sqlite
-- 002_recall.sql). Every table here holds memory text or vectors, so each is partitioned by
-- memory_id like payloads (see 001_core.sql). pgvector must be installable.
CREATE EXTENSION IF NOT EXISTS vector;
-- Sources (Log+Facts LogEntry): hash chain per (memory = tenant, run). The chain commits to a
-- salted digest of the payload; erasure deletes text and salt and keeps the chain verifiable.
CREATE TABLE sources (
  memory_id TEXT NOT NULL,
  source_id TEXT NOT NULL,
  run_id TEXT NOT NULL,
  sequence BIGINT NOT NULL,
  scope TEXT NOT NULL,
  kind TEXT NOT NULL,
  role TEXT NOT NULL,
  actor TEXT,
  occurred_at TEXT NOT NULL,
  recorded_at TEXT NOT NULL,
  digest TEXT NOT NULL,
  salt BYTEA,
  text TEXT,
  redacted_at TEXT,
  prev_hash TEXT NOT NULL,
  entry_hash TEXT NOT NULL,
  PRIMARY KEY (memory_id, source_id)
) PARTITION BY LIST (memory_id);
CREATE UNIQUE INDEX sources_chain ON sources(memory_id, run_id, sequence);
CREATE INDEX sources_scope ON sources(memory_id, scope, occurred_at);
-- Search documents: one row per indexed item or source. ``tsv`` holds the terms of
-- remem.domain.textindex (the same rewrite SQLite indexes: CJK bigrams, emoji terms), with
-- diacritics removed and positions kept, built literally (no parser or dictionary), so both
-- backends match the same words; ranked with ts_rank.
CREATE TABLE search_docs (
  memory_id TEXT NOT NULL,
  doc_id TEXT NOT NULL,
  doc_type TEXT NOT NULL,
  scope TEXT NOT NULL,
  tsv TSVECTOR NOT NULL,
  PRIMARY KEY (memory_id, doc_id)
) PARTITION BY LIST (memory_id);
CREATE INDEX search_docs_tsv ON search_docs USING gin (tsv);
-- Vectors beside payloads (pgvector). The column has no fixed dimension on the parent: each
-- memory's partition gets an HNSW index on vec::vector(dimensions) for its model (a partial
-- index per model, so a reembed to another dimension can write beside the old rows).
-- ``seq`` numbers the inserts of a memory as in SQLite (memories.vector_seq is the last one).
CREATE TABLE vectors (
  memory_id TEXT NOT NULL,
  doc_id TEXT NOT NULL,
  doc_type TEXT NOT NULL,
  scope TEXT NOT NULL,
  model TEXT NOT NULL,
  content_hash TEXT NOT NULL,
  vec VECTOR NOT NULL,
  seq BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (memory_id, doc_id)
) PARTITION BY LIST (memory_id);
CREATE INDEX vectors_scope ON vectors(memory_id, scope);
-- Pinned profile renders: byte-identical output per activation until the next activation.
CREATE TABLE profile_renders (
  memory_id TEXT NOT NULL,
  activation_id TEXT NOT NULL,
  scopes TEXT NOT NULL,
  params TEXT NOT NULL DEFAULT '',
  text TEXT NOT NULL,
  item_ids TEXT NOT NULL,
  rendered_at TEXT NOT NULL,
  PRIMARY KEY (memory_id, activation_id, scopes, params)
) PARTITION BY LIST (memory_id);
ALTER TABLE memories ADD COLUMN embedding_model TEXT;
ALTER TABLE memories ADD COLUMN dimensions INTEGER;
ALTER TABLE memories ADD COLUMN vector_epoch INTEGER NOT NULL DEFAULT 0;
ALTER TABLE memories ADD COLUMN vector_seq BIGINT NOT NULL DEFAULT 0;
