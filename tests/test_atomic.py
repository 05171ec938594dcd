"""atomic: whole writes that leave no temporary behind, never-replace writes, and locks with deadlines."""
import os
import subprocess
import sys
import time

import pytest

from stele import atomic


def test_a_write_replaces_the_file_whole_and_keeps_its_mode(tmp_path):
    path = tmp_path / "sub" / "fact.md"
    atomic.write(path, "one\r\n")
    assert path.read_bytes() == b"one\r\n" and path.stat().st_mode & 0o777 == 0o644
    os.chmod(path, 0o600)
    atomic.write(path, b"two", durable=False)
    assert path.read_bytes() == b"two" and path.stat().st_mode & 0o777 == 0o600
    atomic.write(path, lambda f: f.write(b"three"))
    assert path.read_text() == "three"
    assert sorted(p.name for p in path.parent.iterdir()) == ["fact.md"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "fact.md"
    path.write_text("old")

    def boom(f):
        f.write(b"half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        atomic.write(path, boom)
    assert path.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["fact.md"]


def test_an_exclusive_write_never_replaces(tmp_path):
    path = tmp_path / "run.json"
    atomic.write(path, "first", exclusive=True, mode=0o444)
    with pytest.raises(FileExistsError):
        atomic.write(path, "second", exclusive=True)
    assert path.read_text() == "first" and [p.name for p in tmp_path.iterdir()] == ["run.json"]


def test_a_held_lock_times_out_at_the_deadline_and_is_free_once_its_holder_dies(tmp_path):
    lock = tmp_path / "lock"
    holder = subprocess.Popen([sys.executable, "-c",
                               "import sys, time; from pathlib import Path; from stele import atomic\n"
                               f"with atomic.locked(Path({str(lock)!r})):\n"
                               "    print('held', flush=True); time.sleep(60)"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        with pytest.raises(atomic.LockTimeout), atomic.locked(lock, deadline=time.monotonic() + 0.2):
            pass
        assert time.monotonic() - started < 30  # gave up at its deadline; the holder sleeps 60 s
        # a shared lock waits for an exclusive holder too
        with pytest.raises(atomic.LockTimeout), atomic.locked(lock, exclusive=False, deadline=time.monotonic() + 0.1):
            pass
    finally:
        holder.kill()
        holder.wait()
    with atomic.locked(lock, deadline=time.monotonic() + 5):
        pass


def test_append_adds_to_the_end_in_one_write_and_creates_the_file(tmp_path):
    summary = tmp_path / "summary.md"
    atomic.append(summary, "# one\n")
    summary.write_text(summary.read_text() + "written by someone else\n")
    atomic.append(summary, "# two ✓\n")
    assert summary.read_text(encoding="utf-8") == "# one\nwritten by someone else\n# two ✓\n"
