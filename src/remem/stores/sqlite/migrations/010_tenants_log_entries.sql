-- Tenants and schema-exact log entries (issue 16.1-2). Every memory belongs to a tenant; rows
-- made before belong to the default tenant. A token is bound to its memory's tenant as well as
-- to the memory. Sources gain the Log+Facts LogEntry fields: the tenant at write time, the
-- kind-specific payload (canonical JSON; erased with the text), contentHash (sha256 of the
-- payload alone; erased with it), causedByLogId and the row format: 1 = legacy (sequence from
-- 1, written before this migration, verified by its old rule), 2 = schema entry, 3 = imported.
ALTER TABLE memories ADD COLUMN tenant_id TEXT NOT NULL DEFAULT 'default';
CREATE INDEX memories_tenant ON memories(tenant_id, memory_id);
ALTER TABLE tokens ADD COLUMN tenant_id TEXT NOT NULL DEFAULT 'default';
ALTER TABLE sources ADD COLUMN tenant_id TEXT;
ALTER TABLE sources ADD COLUMN payload TEXT;
ALTER TABLE sources ADD COLUMN content_hash TEXT;
ALTER TABLE sources ADD COLUMN caused_by TEXT;
ALTER TABLE sources ADD COLUMN log_format INTEGER NOT NULL DEFAULT 1;
