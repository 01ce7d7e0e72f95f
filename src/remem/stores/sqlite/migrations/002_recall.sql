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
-- `terms`: the text rewritten by remem.domain.textindex (CJK bigrams, emoji terms);
-- `scope_key`: one opaque term per (memory, scope) so a query is restricted to the caller's
-- scopes inside FTS5 before ranking (bm25 weight 0 for that column).
CREATE VIRTUAL TABLE search_fts USING fts5(terms, scope_key,
  tokenize='unicode61 remove_diacritics 2');
-- Vectors beside payloads: float32 little-endian blobs, L2-normalised. `seq` numbers the
-- inserts of a memory (memories.vector_seq is the last one) so an in-process index loads
-- only rows it has not seen; deletes and replacements bump memories.vector_epoch instead.
CREATE TABLE vectors (
  memory_id TEXT NOT NULL,
  doc_id TEXT NOT NULL,
  doc_type TEXT NOT NULL,
  scope TEXT NOT NULL,
  model TEXT NOT NULL,
  content_hash TEXT NOT NULL,
  vec BLOB NOT NULL,
  seq INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (memory_id, doc_id)
);
CREATE INDEX vectors_seq ON vectors(memory_id, seq);
-- Pinned profile renders: byte-identical output per activation until the next activation.
-- `params` is the canonical JSON of the budget asked for (tokens or bytes, tokenizer); `text`
-- holds the whole serialised result returned for that activation.
CREATE TABLE profile_renders (
  memory_id TEXT NOT NULL,
  activation_id TEXT NOT NULL,
  scopes TEXT NOT NULL,
  params TEXT NOT NULL DEFAULT '',
  text TEXT NOT NULL,
  item_ids TEXT NOT NULL,
  rendered_at TEXT NOT NULL,
  PRIMARY KEY (memory_id, activation_id, scopes, params)
);
-- Each memory records its embedding model and dimension. vector_epoch bumps when vectors are
-- deleted or replaced (an in-process index reloads fully); vector_seq counts inserts (it loads
-- only the new rows).
ALTER TABLE memories ADD COLUMN embedding_model TEXT;
ALTER TABLE memories ADD COLUMN dimensions INTEGER;
ALTER TABLE memories ADD COLUMN vector_epoch INTEGER NOT NULL DEFAULT 0;
ALTER TABLE memories ADD COLUMN vector_seq INTEGER NOT NULL DEFAULT 0;
