"""Online garbage collection: mark blobs manifests reference, sweep what stayed unmarked past the grace."""
from __future__ import annotations

import argparse
from dataclasses import dataclass
from datetime import datetime, timezone

import boto3
import psycopg
import structlog
from prometheus_client import Counter

from .settings import Settings

log = structlog.get_logger()
SWEPT_BYTES = Counter("harbor_gc_swept_bytes_total", "Bytes of blobs deleted by the garbage collector")


def blob_key(digest: str) -> str:
    algorithm, encoded = digest.split(":", 1)
    return f"blobs/{algorithm}/{encoded[:2]}/{encoded}"


@dataclass
class GCReport:
    swept: int = 0
    swept_bytes: int = 0


class GarbageCollector:
    def __init__(self, conn: psycopg.Connection, s3, settings: Settings) -> None:
        self.conn, self.s3, self.settings = conn, s3, settings

    def mark(self) -> int:
        """Stamp every blob reachable from any manifest, tagged or not (index children are manifests
        too). Recomputed from manifests on every run: blob_refs.count is never consulted."""
        cur = self.conn.execute("""
            UPDATE blobs b SET last_marked_at = now()
              FROM (SELECT DISTINCT unnest(layer_digests || config_digest) AS digest FROM manifests) r
             WHERE b.digest = r.digest""")
        self.conn.commit()
        return cur.rowcount

    def sweep(self, dry_run: bool = False) -> GCReport:
        """Delete blobs whose last mark (or upload, if never marked) is older than the grace period."""
        cutoff = datetime.now(timezone.utc) - self.settings.gc_grace
        report = GCReport()
        while True:
            rows = self.conn.execute(
                "SELECT digest, size_bytes FROM blobs WHERE coalesce(last_marked_at, uploaded_at) < %s "
                "ORDER BY digest LIMIT %s FOR UPDATE SKIP LOCKED",
                (cutoff, self.settings.gc_batch_size)).fetchall()
            freed = sum(size for _, size in rows)
            if dry_run:
                report.swept, report.swept_bytes = len(rows), freed
            if not rows or dry_run:
                self.conn.rollback()
                return report
            for digest, _ in rows:
                self.s3.delete_object(Bucket=self.settings.s3_bucket, Key=blob_key(digest))
            report.swept += len(rows)
            report.swept_bytes += freed
            SWEPT_BYTES.inc(freed)
            self.conn.execute("DELETE FROM blobs WHERE digest = ANY(%s)", ([d for d, _ in rows],))
            self.conn.commit()

    def run(self, dry_run: bool = False) -> GCReport:
        marked = self.mark()
        report = self.sweep(dry_run=dry_run)
        log.info("gc.finished", marked=marked, swept=report.swept, swept_bytes=report.swept_bytes,
                 dry_run=dry_run, grace_hours=self.settings.gc_grace.total_seconds() / 3600)
        return report


def main() -> None:
    parser = argparse.ArgumentParser(prog="harbor-gc")
    parser.add_argument("--dry-run", action="store_true", help="count the first batch, delete nothing")
    settings = Settings.from_env()
    with psycopg.connect(settings.database_url) as conn:
        GarbageCollector(conn, boto3.client("s3"), settings).run(dry_run=parser.parse_args().dry_run)
