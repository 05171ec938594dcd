-- 0007: reference counts per blob, and a mark timestamp for the online garbage collector.
-- blob_refs.count is a hint maintained by the registry on manifest PUT and tag DELETE;
-- the collector marks from manifests instead (see harbor_worker/gc.py).

CREATE TABLE blob_refs (
    digest      text PRIMARY KEY,
    count       bigint NOT NULL DEFAULT 0,
    updated_at  timestamptz NOT NULL DEFAULT now()
);

INSERT INTO blob_refs (digest, count)
SELECT d, count(*)
  FROM manifests, unnest(layer_digests || config_digest) AS d
 GROUP BY d;

-- Nullable with no default: adding it rewrites nothing and takes the lock only briefly.
ALTER TABLE blobs ADD COLUMN last_marked_at timestamptz;

COMMENT ON COLUMN blobs.last_marked_at IS
    'Last time a GC mark phase found a manifest referencing this blob; NULL = never marked.';

-- Backfill so the first sweep after the upgrade does not treat every old blob as unmarked.
UPDATE blobs SET last_marked_at = now()
 WHERE digest IN (SELECT digest FROM blob_refs WHERE count > 0);
