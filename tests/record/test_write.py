"""write: concurrent read-modify-writes all land, a fact write leaves nothing `git add` would stage,
and a supersession cut short by a kill is finished by the next write and seen by doctor."""
import multiprocessing
import os
from pathlib import Path

import pytest

from stele import atomic
from stele.doctor.run import run as doctor
from stele.project import Project
from stele.record import edit, knowledge, write
from stele.record.load import load
from tests.helpers import git

N = 16


@pytest.fixture
def project(repo) -> Project:
    return Project(repo)


def _edit_tag(root: str, fid: str, i: int) -> None:
    edit.edit(Project(Path(root)), fid, edit.Changes(add_tags=[f"t{i}"]))


def _link(root: str, src: str, dst: str) -> None:
    edit.link(Project(Path(root)), src, "relates-to", dst)


def _race(target, args_list) -> None:
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=target, args=args) for args in args_list]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0] * len(procs)


def test_sixteen_concurrent_edits_and_links_all_land(project):
    fid = edit.remember(project, "Rate limiting sits before auth.", kind="decision").fact.id
    others = [edit.remember(project, f"Fact number {i} about something else entirely {i}.", kind="note").fact.id
              for i in range(N)]
    root = str(project.root)
    _race(_edit_tag, [(root, fid, i) for i in range(N)])
    assert sorted(load(project).get(fid).tags) == sorted(f"t{i}" for i in range(N))
    _race(_link, [(root, fid, other) for other in others])
    assert sorted(load(project).get(fid).links["relates-to"]) == sorted(others)


def test_a_fact_write_leaves_no_temporary_where_git_add_would_stage_it(project, monkeypatch):
    fid = edit.remember(project, "Invoices are immutable.", kind="decision").fact.id
    stale = write.state_dir(project) / "tmp" / ".DEC-X.md.0123.tmp"
    stale.parent.mkdir(parents=True, exist_ok=True)
    stale.write_text("a killed writer's half")
    seen = []
    real = os.replace

    def spy(src, dst):
        if str(dst).endswith(".md"):  # not the parse cache the edit's load writes
            seen.append(os.path.dirname(src))
        return real(src, dst)

    monkeypatch.setattr(atomic.os, "replace", spy)
    edit.edit(project, fid, edit.Changes(add_tags=["billing"]))
    assert seen == [str(write.state_dir(project) / "tmp")]
    assert not stale.exists()  # cleared under the lock: no writer holds it
    git(project.root, "add", "docs/memory")
    assert not [p for p in git(project.root, "ls-files").split() if p.endswith(".tmp")]


def _reviewed(project, title):
    fid = knowledge.draft(project, title, f"{title} body.").fact.id
    knowledge.review(project, fid, "checked")
    return fid


def test_a_supersede_killed_between_its_writes_is_finished_by_the_next_write_and_doctor_sees_it(
        project, monkeypatch):
    old = _reviewed(project, "Refunds v1")
    knowledge.promote(project, old)
    new = _reviewed(project, "Refunds v2")
    real, calls = atomic.write, []

    def dies_on_the_second_fact(path, content, **kw):
        calls.append(path)
        if len([p for p in calls if p.suffix == ".md"]) == 2:
            raise KeyboardInterrupt  # as a kill -9 would, between the two files
        return real(path, content, **kw)

    monkeypatch.setattr(atomic, "write", dies_on_the_second_fact)
    with pytest.raises(KeyboardInterrupt):
        knowledge.supersede(project, old, new)
    monkeypatch.setattr(atomic, "write", real)
    record = load(project)
    assert record.get(new).status == "current" and record.get(old).status == "current"  # half done
    report = doctor(project)
    checks = {f.check for f in report.findings}
    assert {"half-superseded", "interrupted-write"} <= checks and report.errors
    edit.verify(project, new)  # any write finishes the journaled change first
    record = load(project)
    assert record.get(old).status == "superseded" and record.get(new).links["supersedes"] == [old]
    assert not {"half-superseded", "interrupted-write"} & {f.check for f in doctor(project).findings}


def test_a_journaled_file_changed_by_hand_meanwhile_is_left_alone(project, monkeypatch, capsys):
    a = edit.remember(project, "First decision text here.", kind="decision").fact.id
    b = edit.remember(project, "Second decision text there.", kind="decision").fact.id
    real, calls = atomic.write, []

    def dies(path, content, **kw):
        calls.append(path)
        if len([p for p in calls if p.suffix == ".md"]) == 2:
            raise KeyboardInterrupt
        return real(path, content, **kw)

    monkeypatch.setattr(atomic, "write", dies)
    with pytest.raises(KeyboardInterrupt):
        knowledge.supersede(project, a, b)
    monkeypatch.setattr(atomic, "write", real)
    path = project.root / load(project).get(a).path
    path.write_text(path.read_text().replace("First decision", "Hand-edited decision"))
    edit.verify(project, b)
    assert "left alone, changed since" in capsys.readouterr().err
    assert load(project).get(a).status == "current" and "Hand-edited" in path.read_text()


def test_an_anchor_named_like_a_credential_keeps_its_fingerprint(repo):
    """`src/v.py::F32_SLACK: <hash>` read as a Slack credential by the write path's net made the value a
    redaction marker, a YAML list that no longer loaded: the fact could not be written at all."""
    from tests.helpers import invoke

    (repo / "src").mkdir()
    (repo / "src" / "v.py").write_text("F32_SLACK = 1e-4\nAPI_TOKEN_LIMIT = 3\n", encoding="utf-8")
    done = invoke("remember", "--kind", "decision", "--anchor", "src/v.py::F32_SLACK",
                  "--anchor", "src/v.py::API_TOKEN_LIMIT", "The slack on float32 cosines is 1e-4")
    assert done.code == 0, done.err
    text = next((repo / "docs/memory").rglob("DEC-*.md")).read_text(encoding="utf-8")
    assert "REDACTED" not in text and text.count("src/v.py::") == 4  # two anchors, two fingerprints
    secret = invoke("remember", "--kind", "decision", "--title", "A note with a token", "--body-file", "-",
                    input="export SLACK_BOT_TOKEN=xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx\n")
    assert secret.code == 0 and "xoxb-" not in "".join(
        p.read_text(encoding="utf-8") for p in (repo / "docs/memory").rglob("*.md"))
