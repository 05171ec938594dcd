-- 0008: the build/GC job queue. Replaces the 0003 `jobs` table, whose claim query scanned
-- every finished job (2.1M rows on the largest install) and hit the statement timeout.

CREATE TABLE build_jobs (
    id            bigserial PRIMARY KEY,
    kind          text NOT NULL CHECK (kind IN ('build', 'gc', 'reconcile-refs')),
    payload       jsonb NOT NULL DEFAULT '{}',
    priority      smallint NOT NULL DEFAULT 0,
    status        text NOT NULL DEFAULT 'queued'
                  CHECK (status IN ('queued', 'running', 'done', 'failed')),
    worker        text,
    attempts      integer NOT NULL DEFAULT 0,
    leased_until  timestamptz,
    error         text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    finished_at   timestamptz
);

-- The claim query (harbor_worker/queue.py CLAIM_SQL) only ever looks at queued rows.
CREATE INDEX build_jobs_claim_idx ON build_jobs (priority DESC, created_at) WHERE status = 'queued';
CREATE INDEX build_jobs_lease_idx ON build_jobs (leased_until) WHERE status = 'running';

INSERT INTO build_jobs (kind, payload, priority, created_at)
SELECT kind, payload, priority, created_at FROM jobs WHERE state = 'pending';

DROP TABLE jobs;
