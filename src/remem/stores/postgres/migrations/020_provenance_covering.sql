-- Recall reads each candidate item's source ids with its row (``SearchSnapshot.items``:
-- ``array_agg(source_id ORDER BY seq)`` over the item's provenance). With ``seq`` in the index
-- key and ``source_id`` included, that is an index-only scan already in ``seq`` order: no heap
-- page and no sort per item. 100k bench items, the recall's item statements A/B: 464 -> 426
-- buffers, execution p50 1.71 -> 1.51 ms (mean 3.01 -> 2.29). Every (memory_id, item_id)
-- lookup is served as before; the name stays.
CREATE INDEX provenance_item_covering ON provenance(memory_id, item_id, seq) INCLUDE (source_id);
DROP INDEX provenance_item;
ALTER INDEX provenance_item_covering RENAME TO provenance_item;
