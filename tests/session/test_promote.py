"""Promotion writes a committed fact whose `source` records the session entry."""
import pytest

from stele.errors import SteleError, UsageError
from stele.project import Project
from stele.record.load import load
from stele.session import sessions
from stele.session.promote import promote, promoted_to


@pytest.fixture
def project(repo) -> Project:
    return Project(repo)


def test_promote_keeps_provenance_paths_and_text(project):
    sid = sessions.start(project).session
    e = sessions.log(project, sid, "note",
                    "Retry the flaky upload test once; it races the tmp cleaner.\nDetails.",
                    task="TASK-418", paths=["tests/test_upload.py"])
    done = promote(project, e.id, "lesson", tags=["ci"])
    fact = done.written.fact
    assert fact.kind == "lesson" and fact.id.startswith("LSN-")
    assert fact.source == [e.id, "TASK-418"]
    assert fact.anchors == ["tests/test_upload.py"] and fact.tags == ["ci"]
    assert fact.title == "Retry the flaky upload test once; it races the tmp cleaner."
    text = (project.root / fact.path).read_text()
    assert f"source: [{e.id}, TASK-418]" in text and "Details." in text
    assert promoted_to(load(project), e.id) == [fact.id]


def test_promoting_twice_needs_again_and_bad_input_writes_nothing(project):
    sid = sessions.start(project).session
    e = sessions.log(project, sid, "decision", "Keep the limiter in front of auth.")
    first = promote(project, e.id, "decision", title="Limiter before auth").written.fact
    with pytest.raises(SteleError, match=f"already promoted to {first.id}; pass --again"):
        promote(project, e.id, "decision")
    second = promote(project, e.id, "decision", again=True).written.fact
    assert promoted_to(load(project), e.id) == sorted([first.id, second.id])
    with pytest.raises(UsageError, match="--kind 'wisdom'"):
        promote(project, e.id, "wisdom", again=True)
    with pytest.raises(SteleError, match="no session entry"):
        promote(project, "S-0000000000", "lesson")
    assert len(load(project).facts) == 2
