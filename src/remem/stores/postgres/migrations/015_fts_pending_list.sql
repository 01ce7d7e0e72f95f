-- Full text: a GIN index with fastupdate keeps new entries in a pending list until VACUUM or a
-- full list merges them, and every search scans the whole list. With the default 4 MB limit a
-- memory written in bulk made each recall's full-text search scan thousands of pending entries
-- (measured at 100k items right after the writes: 278 pending pages, 8,176 entries; the search
-- took 18-27 ms, 1.3-1.6 ms once the list was merged, same rows). 128 kB bounds the list to 16
-- pages; an insert that fills it merges it into the index. The option is set on the partitioned
-- index, so every memory's partition (existing ones rebuilt here, new ones on attach) has it.
DROP INDEX IF EXISTS search_docs_tsv;
CREATE INDEX search_docs_tsv ON search_docs USING gin (tsv) WITH (gin_pending_list_limit = 128);
