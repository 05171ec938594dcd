"""The job queue: rows in `build_jobs`, claimed with FOR UPDATE SKIP LOCKED. No broker to run."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

CLAIM_SQL = """
UPDATE build_jobs
   SET status = 'running', worker = %(worker)s, attempts = attempts + 1,
       leased_until = now() + %(lease)s
 WHERE id = (SELECT id FROM build_jobs
              WHERE status = 'queued'
              ORDER BY priority DESC, created_at
              LIMIT 1
              FOR UPDATE SKIP LOCKED)
RETURNING id, kind, payload, attempts
"""


@dataclass
class Job:
    id: int
    kind: str  # "build" | "gc" | "reconcile-refs"
    payload: dict[str, Any]
    attempts: int


class JobQueue:
    def __init__(self, conn: psycopg.Connection, worker_id: str, lease: timedelta) -> None:
        self.conn = conn
        self.worker_id = worker_id
        self.lease = lease

    def enqueue(self, kind: str, payload: dict[str, Any], priority: int = 0) -> int:
        row = self.conn.execute(
            "INSERT INTO build_jobs (kind, payload, priority) VALUES (%s, %s, %s) RETURNING id",
            (kind, Jsonb(payload), priority)).fetchone()
        self.conn.commit()
        return row[0]

    def claim(self) -> Job | None:
        """Take the most urgent queued job, or None. Two workers never get the same row."""
        with self.conn.transaction():
            row = self.conn.execute(CLAIM_SQL, {"worker": self.worker_id, "lease": self.lease}).fetchone()
        return Job(*row) if row else None

    def heartbeat(self, job_id: int) -> None:
        self.conn.execute("UPDATE build_jobs SET leased_until = now() + %s WHERE id = %s AND worker = %s",
                          (self.lease, job_id, self.worker_id))
        self.conn.commit()

    def complete(self, job_id: int, error: str | None = None) -> None:
        self.conn.execute("UPDATE build_jobs SET status = %s, error = %s, finished_at = now() WHERE id = %s",
                          ("failed" if error else "done", error, job_id))
        self.conn.commit()

    def requeue_expired(self) -> int:
        """Jobs whose worker stopped heart-beating go back to 'queued'."""
        cur = self.conn.execute("UPDATE build_jobs SET status = 'queued', worker = NULL "
                                "WHERE status = 'running' AND leased_until < now()")
        self.conn.commit()
        return cur.rowcount
