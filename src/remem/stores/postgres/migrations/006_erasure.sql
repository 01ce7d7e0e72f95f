-- Keyed claim ids: one random secret per memory (HMAC-SHA256 key of its claim ids), deleted
-- with the memory (and the dead tuple rewritten away by a recorded scrub: VACUUM FULL of this
-- small table). A memory without a row here was created before keyed ids and keeps the
-- legacy plain-sha256 claim ids its ledger already hashes over.
CREATE TABLE memory_secrets (
  memory_id TEXT PRIMARY KEY,
  claim_secret BYTEA NOT NULL
);
