"""The WAL: append and read back, redaction on disk, torn lines, segments, session id resolution."""
import gzip
import json
import os
from collections import Counter

import pytest

from stele.errors import SteleError, UsageError
from stele.project import Project
from stele.session import wal
from tests.secret_corpus import look_alikes, shapes

SHAPES = {f"{s.family}: {s.name}": s for s in shapes()}
LOOK_ALIKES = look_alikes()


@pytest.fixture
def project(tmp_path) -> Project:
    (tmp_path / ".git").mkdir()
    return Project(tmp_path)


def add(project, text="hello", session="s1", type_="note", **fields):
    return wal.append(project, wal.new_entry(session, type_, text, **fields), extra_patterns=())


def test_append_then_read_keeps_every_field_and_unknown_keys(project):
    e = add(project, "did it", task="TASK-418", refs={"issue": "12", "paths": ["src/a.py"]}, thread="impl",
            agent="codex", extra={"stage": "plan", "future_key": [1, 2]})
    [back] = wal.read_all(project)
    assert back == e
    assert back.extra == {"stage": "plan", "future_key": [1, 2]}
    line = json.loads(wal.wal_path(project, "s1").read_bytes())
    assert list(line)[:6] == ["v", "id", "ts", "session", "agent", "type"] and line["v"] == 1


def test_unknown_type_and_bad_session_names_are_refused(project):
    with pytest.raises(UsageError, match="entry type 'chat'"):
        add(project, type_="chat")
    for bad in ("../x", "", "a/b", ".hidden", "x" * 129):
        with pytest.raises(UsageError, match="session id"):
            wal.wal_path(project, bad)
    assert not project.wal_dir.exists() or not list(project.wal_dir.iterdir())


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_every_secret_shape_is_redacted_on_disk(project, name):
    found = Counter()
    shape = SHAPES[name]
    entry = wal.new_entry("s1", "note", f"before {shape.text} after", refs={"paths": ["src/a.py"]},
                          extra={"goal": f"goal with {shape.text}", "nested": {"list": [shape.text]}})
    wal.append(project, entry, extra_patterns=(), found=found)
    raw = wal.wal_path(project, "s1").read_bytes()
    for value in shape.secrets:
        assert value.encode() not in raw and json.dumps(value)[1:-1].encode() not in raw
    assert raw.count(b"[REDACTED:") >= 3 and sum(found.values()) == 1  # one secret, in three fields, told once
    [back] = wal.read_all(project)  # still one valid JSON line after substitution
    assert back.text.startswith("before ")


def test_look_alikes_reach_the_disk_untouched(project):
    for text in LOOK_ALIKES:
        add(project, text)
    assert [e.text for e in wal.read_all(project)] == LOOK_ALIKES
    assert b"REDACTED" not in wal.wal_path(project, "s1").read_bytes()


def test_configured_patterns_come_from_the_config(project):
    (project.stele_dir).mkdir()
    project.config_path.write_text("redaction:\n  patterns: ['ACME-[0-9]{6}']\n")
    wal.append(project, wal.new_entry("s1", "note", "ticket ACME-123456"))
    assert b"ACME-123456" not in wal.wal_path(project, "s1").read_bytes()


def test_a_torn_last_line_is_skipped_reported_once_and_the_next_append_starts_fresh(project, capsys):
    first = add(project, "one")
    path = wal.wal_path(project, "s1")
    with open(path, "ab") as f:
        f.write(b'{"v": 1, "id": "S-01TORN", "text": "half')  # a writer killed mid-line
    report = wal.ReadReport()
    assert [e.id for e in wal.read_all(project, report)] == [first.id]
    assert len(report.skipped) == 1 and "torn last line" in report.skipped[0] and ":2:" in report.skipped[0]
    second = add(project, "two")
    report = wal.ReadReport()
    assert [e.id for e in wal.read_all(project, report)] == [first.id, second.id]
    assert len(report.skipped) == 1 and "unreadable line" in report.skipped[0]
    assert path.read_bytes().count(b"half") == 1  # the torn bytes stay: nothing is rewritten
    wal.warn_skipped(report)
    assert capsys.readouterr().err.count("\n") == 1


def test_many_skipped_lines_are_reported_in_one_line(project, capsys):
    path = wal.wal_path(project, "s1")
    path.parent.mkdir(parents=True)
    path.write_bytes(b"garbage\n[1]\n{}\n")
    report = wal.ReadReport()
    assert list(wal.read_all(project, report)) == []
    wal.warn_skipped(report)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "(and 2 more)" in err


def test_an_appender_whose_file_was_archived_while_it_waited_reopens(project):
    add(project, "one")
    path = wal.wal_path(project, "s1")
    fd = os.open(path, os.O_RDONLY)
    try:
        assert not wal.is_replaced(fd, path)
        path.rename(path.with_suffix(".moved"))
        assert wal.is_replaced(fd, path)
        add(project, "two")
        assert wal.is_replaced(fd, path)  # a new file now holds the path
    finally:
        os.close(fd)
    assert [e.text for e in wal.read_file(path)] == ["two"]


def test_segments_are_read_archive_first_then_live_and_duplicates_once(project):
    a = add(project, "archived", session="s.1")
    live = wal.wal_path(project, "s.1")
    archive = wal.archive_dir(project)
    archive.mkdir(parents=True)
    (archive / "s.1.01AAAAAAAAAAAAAAAAAAAAAAAA.jsonl.gz").write_bytes(gzip.compress(live.read_bytes()))
    (archive / "s.01AAAAAAAAAAAAAAAAAAAAAAAA.jsonl.gz").write_bytes(gzip.compress(b""))  # session "s"
    b = add(project, "live", session="s.1")
    assert [p.name for p in wal.segments(project, "s.1")] == ["s.1.01AAAAAAAAAAAAAAAAAAAAAAAA.jsonl.gz",
                                                              "s.1.jsonl"]
    assert [e.id for e in wal.read_all(project, session="s.1")] == [a.id, b.id]
    assert wal.session_of_segment(archive / "s.01AAAAAAAAAAAAAAAAAAAAAAAA.jsonl.gz") == "s"


def test_an_unreadable_archive_is_reported_not_fatal(project):
    archive = wal.archive_dir(project)
    archive.mkdir(parents=True)
    (archive / "s1.01AAAAAAAAAAAAAAAAAAAAAAAA.jsonl.gz").write_bytes(b"not gzip")
    damaged = bytearray(gzip.compress(b'{"id": "S-1"}\n' * 100))
    damaged[20:30] = b"\xff" * 10
    (archive / "s2.01AAAAAAAAAAAAAAAAAAAAAAAA.jsonl.gz").write_bytes(bytes(damaged))
    report = wal.ReadReport()
    assert list(wal.read_all(project, report)) == []
    assert len(report.skipped) == 2 and all("cannot read" in s for s in report.skipped)


def test_session_resolution_flag_then_env(monkeypatch):
    assert wal.current_session() is None
    monkeypatch.setenv(wal.SESSION_ENV, "from-env")
    assert wal.current_session() == "from-env"
    assert wal.current_session("flag") == "flag"
    monkeypatch.delenv(wal.SESSION_ENV)
    with pytest.raises(SteleError, match="stele session start"):
        wal.require_session()


def test_a_session_id_that_holds_a_credential_never_names_a_file(project):
    token = "gh" + "p_" + "Zq8Xw3Vb6Nm1Kp4Lr7Ts0Ya2Dc5Fg8Hj1Lk9P"
    with pytest.raises(UsageError, match="holds a credential") as e:
        wal.wal_path(project, token)
    assert token not in str(e.value)
    assert wal.wal_path(project, "9f1c2e7a-4b3d-4c8e-9a61-2d5f0b7c1e11").name.startswith("9f1c2e7a")
