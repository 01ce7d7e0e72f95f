-- The UTC offset (minutes) the statement of an item revision gave with its time (the source's
-- zone for a derived fact, the aware valid_at of a remember), so a model-facing line shows
-- the day the speaker meant. valid_at stays a UTC instant in items and the ledger; this is
-- beside the payload and is erased with it. NULL: unknown (rendered in UTC).
ALTER TABLE payloads ADD COLUMN tz_offset_min INTEGER;
