-- World time of the newest statement of an item: a restatement of the current value ("seen
-- again") at a later valid_at advances it, so an older statement of another value stays
-- history (DESIGN.md "Write path": the later valid_at wins). NULL means valid_at.
ALTER TABLE items ADD COLUMN confirmed_at TEXT;
