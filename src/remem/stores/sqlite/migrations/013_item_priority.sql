-- An item's priority (KickSide item.revised "new text or priority, same claim"): an integer,
-- higher is more important; NULL when none was given. item.added sets it, item.revised
-- changes it; the column is a fold of the ledger like every other read-model column.
ALTER TABLE items ADD COLUMN priority INTEGER;
