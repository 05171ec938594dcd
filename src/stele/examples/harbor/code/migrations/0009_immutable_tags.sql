-- migrate:no-transaction
-- 0009: one row per (repository, tag), enforced, so protected release tags cannot be
-- shadowed by a duplicate. CREATE INDEX CONCURRENTLY cannot run inside a transaction.

-- Installs from before 2.2 can hold duplicate tag rows (a race in the old PUT handler).
-- Keep the newest row of each pair, or the unique index below fails with:
--   ERROR:  could not create unique index "tags_repository_id_name_key"
DELETE FROM tags t
 USING tags newer
 WHERE newer.repository_id = t.repository_id
   AND newer.name = t.name
   AND (newer.updated_at, newer.id) > (t.updated_at, t.id);

CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS tags_repository_id_name_key
    ON tags (repository_id, name);

ALTER TABLE tags
    ADD CONSTRAINT tags_repository_id_name_key UNIQUE USING INDEX tags_repository_id_name_key;

-- Informational column for the console and the audit export; the registry enforces
-- immutability itself (protectedTag in registry/internal/api/tags.go).
ALTER TABLE tags
    ADD COLUMN protected boolean GENERATED ALWAYS AS (name ~ '^(v[0-9]|release-)') STORED;
