-- Item metadata (issue 13): a small JSON object the caller attaches to an item (at most 32
-- keys and 2048 bytes, checked by domain.filters.parse_metadata), stored as compact JSON text
-- beside the item's value and quote, so erasing the payload erases it too. NULL: none.
ALTER TABLE payloads ADD COLUMN metadata TEXT;
-- An observation's metadata, inherited by the facts derived from it; erased with the text.
ALTER TABLE sources ADD COLUMN metadata TEXT;
