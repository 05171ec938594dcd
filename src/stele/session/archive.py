"""`stele session compact`: move idle session logs, whole, into gzipped archive segments.

Compaction must never lose or alter a line, so it never edits a log: it takes the log's append lock
(writers wait), copies the exact bytes into `archive/<session>.<ULID>.jsonl.gz` (temp file, fsync,
rename), decompresses that segment and compares it byte for byte with the original, and only then
removes the live file, still under the lock. A writer that was waiting on that lock sees that the
path no longer names its file and reopens (`wal.append`), so its line starts a new live file. A
crash between the rename and the removal leaves the lines twice, which readers fold by id.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from .. import atomic
from ..errors import SteleError
from ..ids import ulid
from ..project import Project
from . import wal


@dataclass
class Archived:
    session: str
    segment: str  # repo-relative path of the new archive segment
    lines: int
    bytes: int
    gz_bytes: int

    def as_dict(self) -> dict:
        return {"session": self.session, "segment": self.segment, "lines": self.lines, "bytes": self.bytes,
                "gz_bytes": self.gz_bytes}


def idle_logs(project: Project, older_than_days: float, now: float | None = None) -> list[Path]:
    """Live logs not written to for `older_than_days` (0: every live log)."""
    if not project.wal_dir.is_dir():
        return []
    cutoff = (time.time() if now is None else now) - older_than_days * 86400
    return sorted(p for p in project.wal_dir.glob("*.jsonl")
                  if older_than_days <= 0 or p.stat().st_mtime < cutoff)


def compact(project: Project, older_than_days: float = 7, session: str | None = None,
            dry_run: bool = False) -> list[Archived]:
    """Archive idle logs (or one session's log); returns what was (or, with `dry_run`, would be) moved."""
    if session is not None:
        live = wal.wal_path(project, session)
        if not live.is_file():
            raise SteleError(f"{project.rel(live)}: no live log for session {session} (already archived, or "
                             "never started); `stele session list` shows sessions")
        logs = [live]
    else:
        logs = idle_logs(project, older_than_days)
    done = []
    for path in logs:
        item = _archive_one(project, path, dry_run)
        if item is not None:
            done.append(item)
    return done


def _archive_one(project: Project, path: Path, dry_run: bool) -> Archived | None:
    import gzip

    session = path.name[: -len(".jsonl")]
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None  # archived by a concurrent compaction
    try:
        atomic.lock_fd(fd)
        if wal.is_replaced(fd, path):
            return None
        data = _read_fd(fd)
        if not data:
            return None
        target = wal.archive_dir(project) / f"{session}.{ulid()}{wal.ARCHIVE_SUFFIX}"
        packed = gzip.compress(data, mtime=0)
        item = Archived(session, project.rel(target), data.count(b"\n") + (not data.endswith(b"\n")),
                        len(data), len(packed))
        if dry_run:
            return item
        _write_verified(target, packed, data)
        os.unlink(path)
        atomic.fsync_dir(path.parent)
        return item
    finally:
        os.close(fd)  # closing drops the lock


def _read_fd(fd: int) -> bytes:
    chunks: list[bytes] = []
    offset = 0
    while True:
        chunk = os.pread(fd, 1 << 20, offset)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        offset += len(chunk)


def _write_verified(target: Path, packed: bytes, original: bytes) -> None:
    """Prove the segment decompresses to exactly `original`, then write it whole and durably."""
    import gzip

    if gzip.decompress(packed) != original:
        raise SteleError(f"{target}: the archive did not read back identical to the log; nothing was moved")
    atomic.write(target, packed, mode=0o600)  # private, as the live log is
