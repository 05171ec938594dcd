"""The WAL under hostile input and a full disk: a gzip bomb is read only to a bound, an over-long line
is skipped without being held, and an append that runs out of room leaves no partial line."""
import gzip
import json
import subprocess
import sys

import pytest

from stele.project import Project
from stele.session import wal


@pytest.fixture
def project(tmp_path) -> Project:
    (tmp_path / ".git").mkdir()
    return Project(tmp_path)


def _entry(i: int) -> bytes:
    return json.dumps(wal.new_entry("s1", "note", f"entry {i}").as_dict()).encode() + b"\n"


def test_a_gzip_bomb_is_read_only_to_a_bound(project, monkeypatch):
    monkeypatch.setattr(wal, "EXPANSION_FLOOR", 1 << 20)
    folder = wal.archive_dir(project)
    folder.mkdir(parents=True)
    bomb = _entry(1) + b"0" * (64 << 20)  # 64 MiB of one line, packed to ~64 KiB
    (folder / "s1.01JD3KX0000000000000000000.jsonl.gz").write_bytes(gzip.compress(bomb, compresslevel=9))
    report = wal.ReadReport()
    entries = list(wal.read_all(project, report))  # the report's line proves the read stopped at the bound
    assert [e.text for e in entries] == ["entry 1"]
    assert any("expands to over" in s and "not a session log" in s for s in report.skipped), report.skipped


def test_an_over_long_line_is_skipped_and_the_lines_after_it_are_read(project, monkeypatch):
    monkeypatch.setattr(wal, "MAX_LINE", 1 << 16)
    path = wal.wal_path(project, "s1")
    path.parent.mkdir(parents=True)
    path.write_bytes(_entry(1) + b"x" * (300 << 10) + b"\n" + _entry(2))
    report = wal.ReadReport()
    assert [e.text for e in wal.read_all(project, report)] == ["entry 1", "entry 2"]
    assert report.skipped == [f"{path}:2: a line over {1 << 16} bytes; skipped"]


def test_an_append_that_runs_out_of_room_leaves_no_partial_line(repo):
    """A real short write: the file-size limit (what a full disk does to `write`) stops it part way."""
    log = repo / ".stele/wal/s1.jsonl"
    assert subprocess.run([sys.executable, "-m", "stele", "note", "first", "--session", "s1"],
                          cwd=repo, capture_output=True, text=True).returncode == 0
    size = log.stat().st_size
    code = ("import resource, signal, sys\n"
            "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
            f"resource.setrlimit(resource.RLIMIT_FSIZE, ({size + 40}, {size + 40}))\n"
            "from stele.cli.entry import main\n"
            "main(['note', 'x' * 400, '--session', 's1'])\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True)
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "size limit" in lines[0] and "nothing was half-written" in lines[0]
    assert log.stat().st_size == size and log.read_bytes().endswith(b"\n")
    report = wal.ReadReport()
    assert [e.text for e in wal.read_all(Project(repo), report)] == ["first"] and report.skipped == []
