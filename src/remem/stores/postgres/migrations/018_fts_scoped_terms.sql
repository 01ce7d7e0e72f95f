-- Full text: one GIN key per (scope, word) pair, so a search reads the posting lists of the
-- caller's scopes' words only. The index on ``tsv`` held one posting list per word over every
-- scope of the memory: a search intersected the lists of its words (all scopes) with those of
-- its scope lexemes, a cost that grew with the memory, not with the caller's scopes (a
-- synthetic 1M-document partition, 100 scopes: 4.5-20 ms of the statement's index scan,
-- against 0.3-0.4 ms here). The scope lexeme stays in ``tsv``: it counts in ts_rank's
-- document length, so dropping it would move rankings.
-- A key is the scope, U+001F (never in a scope) and the lexeme: at most 516 + 1 + 2046 bytes,
-- under GIN's ~2,700-byte key limit. The index is on an expression: the rows store nothing
-- more and the write path is unchanged; a query lists its (scope, term) keys
-- (``stores/postgres/search.py``). Ranking still reads ``tsv`` (ts_rank), unchanged.
-- The function calls built-ins only (an index expression is rebuilt by restores with an empty
-- search_path).
CREATE FUNCTION remem_scoped_terms(scope TEXT, tsv TSVECTOR) RETURNS TEXT[]
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS
$$ SELECT ARRAY(SELECT scope || chr(31) || l FROM unnest(tsvector_to_array(tsv)) AS l) $$;
-- The pending list stays small, as for the index this replaces (migration 015).
CREATE INDEX search_docs_scoped ON search_docs USING gin (remem_scoped_terms(scope, tsv))
  WITH (gin_pending_list_limit = 128);
DROP INDEX IF EXISTS search_docs_tsv;
