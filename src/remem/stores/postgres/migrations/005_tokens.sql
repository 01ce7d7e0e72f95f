-- API bearer tokens: only a sha256 of the whole token is stored, never the token itself.
-- A token is bound to one memory (it may be created before the memory exists) and is
-- purged with it; revoked tokens stay listed with revoked_at set.
CREATE TABLE tokens (
  token_id TEXT PRIMARY KEY,
  memory_id TEXT NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('reader', 'writer', 'admin')),
  subject TEXT NOT NULL,
  secret_hash TEXT NOT NULL,
  label TEXT,
  created_at TEXT NOT NULL,
  revoked_at TEXT
);
CREATE INDEX tokens_memory ON tokens(memory_id, created_at);
