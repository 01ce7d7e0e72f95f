-- Keyed identity labels (issue 15): the ledger of a memory with keyed labels names scopes and
-- keys by refs ("lbl_" + HMAC-SHA256 with the memory's claim secret, domain.labels); the raw
-- labels live here, beside the ledger, and forget erases a label once no live item of the
-- memory uses it. Tombstones, key_revisions and keys of such a memory are keyed by refs.
-- Memories created before this migration keep raw labels (keyed_labels = 0): their ledgers
-- hold schema-1 events and their read-model rows raw labels, so they fold and verify as before.
ALTER TABLE memory_secrets ADD COLUMN keyed_labels INTEGER NOT NULL DEFAULT 0;
CREATE TABLE labels (
  memory_id TEXT NOT NULL,
  ref TEXT NOT NULL,
  field TEXT NOT NULL CHECK (field IN ('scope', 'key')),
  label TEXT NOT NULL,
  PRIMARY KEY (memory_id, ref)
);
-- "does a live item still use this key?" when forget erases labels
CREATE INDEX items_key_label ON items(memory_id, key);
