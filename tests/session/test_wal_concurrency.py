"""Real processes against one log: concurrent appends never interleave or tear, and SIGKILL mid-append
never costs an acknowledged line. Sized for the suite (every line is fsynced); the acceptance sizes,
8 writers x 500 lines and 20 kill rounds, run in `bench/wal_concurrency.py`."""
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from stele.project import Project
from stele.session import wal

WRITER = Path(__file__).with_name("walwriter.py")
SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.fixture
def project(tmp_path) -> Project:
    (tmp_path / ".git").mkdir()
    return Project(tmp_path)


def spawn(project: Project, session: str, count: int, size: int, tag: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(SRC))
    args = [str(project.root), session, str(count), str(size), tag]
    return subprocess.Popen([sys.executable, str(WRITER), *args],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)


WRITERS, LINES = 8, 125


def test_eight_writers_appending_at_once_all_valid_none_torn(project):
    procs = [spawn(project, "shared", LINES, 200, str(i)) for i in range(WRITERS)]
    for p in procs:  # release them together
        p.stdin.write("go\n")
        p.stdin.flush()
    acked = set()
    for p in procs:
        out, _ = p.communicate(timeout=120)
        assert p.returncode == 0
        acked.update(out.split())
    raw = wal.wal_path(project, "shared").read_bytes()
    assert raw.endswith(b"\n")
    lines = [json.loads(line) for line in raw.split(b"\n")[:-1]]  # any interleaving would fail here
    assert len(lines) == WRITERS * LINES == len(acked) == len({d["id"] for d in lines})
    report = wal.ReadReport()
    assert {e.id for e in wal.read_all(project, report)} == acked and report.skipped == []
    for w in range(WRITERS):  # each writer's lines are in its own order
        mine = [int(d["text"].split()[2]) for d in lines if d["text"].startswith(f"w{w} ")]
        assert mine == list(range(LINES))


def test_kill_9_mid_append_loses_no_acknowledged_line(project):
    path = wal.wal_path(project, "killed")
    acked: set[str] = set()
    for round_ in range(2):
        # 1 MiB lines: the kill below often lands inside the write (the bench makes sure of it)
        p = spawn(project, "killed", 0, 1024 * 1024, f"k{round_}")
        p.stdin.write("go\n")
        p.stdin.flush()
        acked.add(p.stdout.readline().strip())
        before = path.stat().st_size
        while path.stat().st_size == before and p.poll() is None:
            pass  # the next line has started to land: kill it now
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
        p.stdout.close()
        report = wal.ReadReport()
        ids = {e.id for e in wal.read_all(project, report)}
        assert acked <= ids
        assert sum("torn last line" in s for s in report.skipped) <= 1
        assert len(report.skipped) <= round_ + 1
    after = wal.append(project, wal.new_entry("killed", "note", "after the crash"), extra_patterns=())
    assert after.id in {e.id for e in wal.read_all(project)}
