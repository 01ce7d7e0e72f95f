-- Recall: the vector search first counts the caller's scopes' vectors of the memory's model
-- (exact search up to a limit, HNSW above it). With ``model`` in the index the count is an
-- index-only scan (8 index pages at 100k items, against ~1,000 heap pages before); the index
-- still serves every (memory_id, scope) lookup the old one did, so that one goes.
CREATE INDEX vectors_scope_model ON vectors(memory_id, scope, model);
DROP INDEX IF EXISTS vectors_scope;
