-- Feedback keeps the staged source it cites beside its target: a KIP feedback naming a
-- decision_ref or attempt_ref stored only that ref (the target column), so the source holding
-- the feedback's words was linked from nowhere. Rows written before keep NULL.
ALTER TABLE feedback ADD COLUMN source_ref TEXT;
