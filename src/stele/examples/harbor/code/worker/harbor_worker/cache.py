"""The build layer cache: BuildKit cache manifests stored as tags in each repository's
`buildcache` namespace, evicted least-recently-pulled first when over budget."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

import psycopg


def cache_key(repository: str, dockerfile_digest: str, build_args: dict[str, str]) -> str:
    """Stable across runners and branches: repository, Dockerfile digest and sorted build args.
    Nothing host-specific (runner name, checkout path, timestamps) may go in here."""
    h = hashlib.sha256()
    h.update(repository.encode())
    h.update(dockerfile_digest.encode())
    for name in sorted(build_args):
        h.update(f"\0{name}={build_args[name]}".encode())
    return h.hexdigest()[:16]


@dataclass
class CacheEntry:
    repository: str
    key: str
    size_bytes: int


class LayerCache:
    def __init__(self, conn: psycopg.Connection, registry_host: str, budget_bytes: int) -> None:
        self.conn = conn
        self.registry_host = registry_host
        self.budget_bytes = budget_bytes

    def ref_for(self, repository: str, key: str) -> str:
        return f"{self.registry_host}/{repository}/buildcache:{key}"

    def record_pull(self, repository: str, key: str) -> None:
        self.conn.execute("UPDATE cache_entries SET last_pulled_at = now() "
                          "WHERE repository = %s AND key = %s", (repository, key))
        self.conn.commit()

    def evict_lru(self) -> list[CacheEntry]:
        """Drop cache tags until the total is under budget, oldest creation first.
        Their layers become garbage for the collector once no manifest references them."""
        rows = self.conn.execute("""
            SELECT repository, key, size_bytes FROM (
                SELECT repository, key, size_bytes,
                       sum(size_bytes) OVER (ORDER BY created_at DESC) AS running_total
                  FROM cache_entries) t
             WHERE running_total > %s""", (self.budget_bytes,)).fetchall()
        evicted = [CacheEntry(*row) for row in rows]
        self.conn.execute("DELETE FROM cache_entries WHERE (repository, key) IN "
                          "(SELECT * FROM unnest(%s::text[], %s::text[]))",
                          ([e.repository for e in evicted], [e.key for e in evicted]))
        self.conn.commit()
        return evicted
