"""Worker settings, read once from HARBOR_* environment variables at start-up."""
from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from datetime import timedelta


def _env(name: str, default: str) -> str:
    return os.environ.get(f"HARBOR_{name}", default)


@dataclass(frozen=True)
class Settings:
    database_url: str = "postgresql://harbor@localhost:5432/harbor"
    s3_bucket: str = "harbor-blobs"
    registry_host: str = "localhost:5000"
    buildkit_addr: str = "tcp://buildkitd:1234"
    worker_id: str = socket.gethostname()
    # A blob must be unreferenced this long before the collector may delete it.
    gc_grace: timedelta = timedelta(hours=48)
    gc_batch_size: int = 500
    # A claimed job whose lease runs out goes back to the queue.
    job_lease: timedelta = timedelta(minutes=30)
    build_timeout_s: int = 45 * 60
    cache_budget_bytes: int = 500 * 1024**3

    @classmethod
    def from_env(cls) -> Settings:
        return cls(
            database_url=_env("DATABASE_URL", cls.database_url),
            s3_bucket=_env("S3_BUCKET", cls.s3_bucket),
            registry_host=_env("REGISTRY_HOST", cls.registry_host),
            buildkit_addr=_env("BUILDKIT_ADDR", cls.buildkit_addr),
            gc_grace=timedelta(hours=int(_env("GC_GRACE_HOURS", "48"))),
            gc_batch_size=int(_env("GC_BATCH_SIZE", "500")),
            job_lease=timedelta(minutes=int(_env("JOB_LEASE_MINUTES", "30"))),
            cache_budget_bytes=int(_env("CACHE_BUDGET_GIB", "500")) * 1024**3,
        )
