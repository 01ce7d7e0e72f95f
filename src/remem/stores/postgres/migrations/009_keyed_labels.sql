-- Keyed identity labels (issue 15): mirrors stores/sqlite/migrations/009_keyed_labels.sql.
-- The ledger of a memory with keyed labels names scopes and keys by refs ("lbl_" +
-- HMAC-SHA256 with the memory's claim secret, domain.labels); the raw labels live here, and
-- forget erases a label once no live item of the memory uses it. The table is partitioned per
-- memory like the other erasable tables, so the scrub after forget rewrites (VACUUM FULL) the
-- memory's partition and the erased label leaves the table file. Memories created before this
-- migration keep raw labels (keyed_labels = false) and fold and verify as before.
ALTER TABLE memory_secrets ADD COLUMN keyed_labels BOOLEAN NOT NULL DEFAULT FALSE;
CREATE TABLE labels (
  memory_id TEXT NOT NULL,
  ref TEXT NOT NULL,
  field TEXT NOT NULL CHECK (field IN ('scope', 'key')),
  label TEXT NOT NULL,
  PRIMARY KEY (memory_id, ref)
) PARTITION BY LIST (memory_id);
CREATE INDEX items_key_label ON items(memory_id, key);
