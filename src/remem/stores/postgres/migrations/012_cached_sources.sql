-- Kind-B cached facts (issue 16 point 4): the Log+Facts Source block of an item that is a
-- cached view of external state, kept beside the item like its payload (never in the ledger:
-- a URI may hold secrets and freshness changes on every check). One row per current cached
-- item; a refresh that supersedes moves the row to the new item. Forgetting the item deletes
-- the row (per-memory partitions, so the erasure scrub rewrites them). due_at =
-- last_verified_at + ttl_seconds (NULL: no TTL), for the background sweep.
CREATE TABLE cached_sources (
  memory_id TEXT NOT NULL,
  item_id TEXT NOT NULL,
  scope TEXT NOT NULL,
  key TEXT NOT NULL,
  source_kind TEXT NOT NULL,
  uri TEXT,
  ttl_seconds BIGINT,
  last_verified_at TEXT,
  etag TEXT,
  source_version TEXT,
  strategy TEXT NOT NULL,
  handler TEXT,
  priority BIGINT,
  due_at TEXT,
  stale_reason TEXT,
  stale_at TEXT,
  PRIMARY KEY (memory_id, item_id)
) PARTITION BY LIST (memory_id);
CREATE INDEX cached_sources_due ON cached_sources(memory_id, strategy, due_at);
