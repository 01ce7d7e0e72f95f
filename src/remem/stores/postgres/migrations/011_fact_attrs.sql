-- Fact attributes (issue 16.3): a fact's pack-defined type, blob reference, size and content
-- hash, as compact JSON beside the item's value in its payload row, so erasing the payload
-- erases them too (the content hash would confirm a guessed value). NULL: none given.
ALTER TABLE payloads ADD COLUMN fact TEXT;
