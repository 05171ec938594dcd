"""Compaction moves whole logs into verified gzip segments and never loses a line."""
import os
import time
from pathlib import Path

import pytest

from stele.errors import SteleError
from stele.project import Project
from stele.session import archive, wal


@pytest.fixture
def project(tmp_path) -> Project:
    (tmp_path / ".git").mkdir()
    return Project(tmp_path)


def add(project, session, text):
    return wal.append(project, wal.new_entry(session, "note", text), extra_patterns=())


def age(project, session, days):
    path = wal.wal_path(project, session)
    then = time.time() - days * 86400
    os.utime(path, (then, then))


def snapshot(project):
    return [(e.session, e.id, e.text) for e in wal.read_all(project)]


def test_idle_logs_are_archived_byte_for_byte_and_read_the_same(project):
    for i in range(50):
        add(project, "old", f"old line {i}")
    add(project, "fresh", "fresh line")
    with open(wal.wal_path(project, "old"), "ab") as f:
        f.write(b'{"torn')  # even a torn tail is kept, byte for byte
    original = wal.wal_path(project, "old").read_bytes()
    age(project, "old", 10)
    before = snapshot(project)

    planned = archive.compact(project, older_than_days=7, dry_run=True)
    assert [a.session for a in planned] == ["old"] and wal.wal_path(project, "old").exists()

    [done] = archive.compact(project, older_than_days=7)
    assert (done.session, done.lines, done.bytes) == ("old", 51, len(original)) and done.gz_bytes < done.bytes
    assert not wal.wal_path(project, "old").exists() and wal.wal_path(project, "fresh").exists()
    [segment] = wal.segments(project, "old")
    import gzip

    assert gzip.decompress(segment.read_bytes()) == original
    assert snapshot(project) == before
    assert archive.compact(project, older_than_days=7) == []


def test_a_session_keeps_going_after_its_log_was_archived(project):
    first = add(project, "s", "one")
    archive.compact(project, older_than_days=0)
    second = add(project, "s", "two")
    archive.compact(project, session="s")
    third = add(project, "s", "three")
    assert len(wal.segments(project, "s")) == 3
    assert [e.id for e in wal.read_all(project, session="s")] == [first.id, second.id, third.id]
    with pytest.raises(SteleError, match="no live log for session nope"):
        archive.compact(project, session="nope")


def test_appends_racing_a_compaction_all_survive(project):
    """An appender blocked on the lock while its file is archived must land in a new live file."""
    import fcntl
    import threading

    add(project, "s", "before")
    path = wal.wal_path(project, "s")
    fd = os.open(path, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)  # hold the lock the way compaction does
    results = []
    writer = threading.Thread(target=lambda: results.append(add(project, "s", "during")))
    writer.start()
    _wait_until_blocked(os.fstat(fd).st_ino)
    # archive under our lock, as _archive_one does, then let the writer go
    target = wal.archive_dir(project) / "s.01AAAAAAAAAAAAAAAAAAAAAAAA.jsonl.gz"
    archive._write_verified(target, __import__("gzip").compress(path.read_bytes()), path.read_bytes())
    os.unlink(path)
    os.close(fd)
    writer.join(10)
    assert [e.text for e in wal.read_all(project, session="s")] == ["before", "during"]
    assert [e.text for e in wal.read_file(path)] == ["during"]


def _wait_until_blocked(inode: int) -> None:
    """Until the kernel lists a waiter on this file's lock (Linux: `->` lines in /proc/locks)."""
    locks = Path("/proc/locks")
    if not locks.exists():
        return
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if any("->" in line and f":{inode} " in line for line in locks.read_text().splitlines()):
            return
    raise AssertionError("the writer never waited on the lock")


def test_an_interrupted_compaction_shows_no_duplicates(project):
    import gzip

    add(project, "s", "one")
    path = wal.wal_path(project, "s")
    target = wal.archive_dir(project) / "s.01AAAAAAAAAAAAAAAAAAAAAAAA.jsonl.gz"
    archive._write_verified(target, gzip.compress(path.read_bytes()), path.read_bytes())
    # crash here: the live file was never removed
    assert [e.text for e in wal.read_all(project)] == ["one"]
