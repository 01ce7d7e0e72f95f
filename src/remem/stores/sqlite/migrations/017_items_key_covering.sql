-- Recall's key channel (SearchSnapshot.key_items: WHERE memory_id, key IN (...), scope IN
-- (...) ORDER BY valid_at DESC, item_id LIMIT 50) found its rows through items_key (memory_id,
-- scope, key) and then read every matching item row for valid_at and item_id: about 500 rows
-- per query at 1M items, 3.3 of its 3.3 ms of CPU. With valid_at and item_id in the index it
-- reads the index alone (0.7 ms, same rows). Same prefix, so every lookup that used items_key
-- still can; it replaces that index rather than adding one (no extra index to write).
DROP INDEX items_key;
CREATE INDEX items_key ON items(memory_id, scope, key, valid_at, item_id);
