-- Keyed claim ids: one random secret per memory (HMAC-SHA256 key of its claim ids), deleted
-- with the memory. A memory without a row here was created before keyed ids and keeps the
-- legacy plain-sha256 claim ids its ledger already hashes over.
CREATE TABLE memory_secrets (
  memory_id TEXT PRIMARY KEY,
  claim_secret BLOB NOT NULL
);
-- Owed physical scrubs (text-free: ids and times only). A row is written in the erasing
-- transaction (memory_id NULL for a deleted memory: its id is gone too) and deleted once a
-- TRUNCATE checkpoint succeeded after it: secure_delete zeroed the freed bytes in the pages,
-- the checkpoint copied them into the main file and the WAL holding older page images is
-- empty. Pending rows are finished on the next open of the store, by `remem worker`, or by
-- the next erasure.
CREATE TABLE erasure_scrubs (
  scrub_id INTEGER PRIMARY KEY AUTOINCREMENT,
  memory_id TEXT,
  kind TEXT NOT NULL,
  requested_at TEXT NOT NULL
);
CREATE INDEX erasure_scrubs_memory ON erasure_scrubs(memory_id);
