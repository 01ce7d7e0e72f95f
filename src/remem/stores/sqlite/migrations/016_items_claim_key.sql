-- A decision on a multi key reads only its own claim's items (Writer._projection: WHERE
-- memory_id, claim_id, scope, key). Without statistics SQLite's planner prefers the index
-- with the most equality columns, items_key (memory_id, scope, key), and so read every item
-- of the key to keep those of one claim: a bulk load's read per item grew with the items per
-- key (about 150 rows at 300k items over 2,000 keys, 500 at 1M). With scope and key in the
-- claim index it has four equality columns and wins; a lookup by claim id alone uses its
-- prefix as before.
DROP INDEX items_claim;
CREATE INDEX items_claim ON items(memory_id, claim_id, scope, key);
