"""Runs image builds on BuildKit (`buildctl`) for jobs taken from the queue."""
from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass, field

import psycopg
import structlog

from .cache import LayerCache, cache_key
from .queue import JobQueue
from .settings import Settings

log = structlog.get_logger()


@dataclass
class BuildRequest:
    repository: str  # e.g. "team/api"
    context_dir: str
    dockerfile: str = "Dockerfile"
    dockerfile_digest: str = ""
    tag: str = "latest"
    build_args: dict[str, str] = field(default_factory=dict)


@dataclass
class BuildResult:
    ok: bool
    seconds: float
    cached_steps: int
    log_tail: str


class BuildRunner:
    def __init__(self, settings: Settings, cache: LayerCache) -> None:
        self.settings = settings
        self.cache = cache

    def _buildkit_args(self, req: BuildRequest) -> list[str]:
        """Export the cache with mode=max (every stage, not just the final one) and import it back."""
        key = cache_key(req.repository, req.dockerfile_digest, req.build_args)
        ref = self.cache.ref_for(req.repository, key)
        image = f"{self.settings.registry_host}/{req.repository}:{req.tag}"
        args = ["buildctl", "--addr", self.settings.buildkit_addr, "build",
                "--frontend", "dockerfile.v0", "--local", f"context={req.context_dir}",
                "--local", f"dockerfile={req.context_dir}", "--opt", f"filename={req.dockerfile}",
                "--output", f"type=image,name={image},push=true",
                "--export-cache", f"type=registry,ref={ref},mode=max,compression=zstd",
                "--import-cache", f"type=registry,ref={ref}"]
        for name, value in sorted(req.build_args.items()):
            args += ["--opt", f"build-arg:{name}={value}"]
        return args

    def run(self, req: BuildRequest) -> BuildResult:
        start = time.monotonic()
        proc = subprocess.run(self._buildkit_args(req), capture_output=True, text=True,
                              timeout=self.settings.build_timeout_s)
        cached = sum(1 for line in proc.stderr.splitlines() if line.rstrip().endswith("CACHED"))
        return BuildResult(proc.returncode == 0, time.monotonic() - start, cached, proc.stderr[-4000:])


def main() -> None:
    settings = Settings.from_env()
    with psycopg.connect(settings.database_url) as conn:
        queue = JobQueue(conn, settings.worker_id, settings.job_lease)
        runner = BuildRunner(settings, LayerCache(conn, settings.registry_host, settings.cache_budget_bytes))
        while True:
            job = queue.claim()
            if job is None:
                time.sleep(2)
                continue
            result = runner.run(BuildRequest(**job.payload))
            log.info("build.finished", job=job.id, ok=result.ok, seconds=round(result.seconds),
                     cached_steps=result.cached_steps)
            queue.complete(job.id, None if result.ok else result.log_tail)
