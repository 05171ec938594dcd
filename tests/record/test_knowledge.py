"""The knowledge lifecycle: every allowed step, and every step that is not allowed saying which it is."""

import pytest

from stele.errors import SteleError, UsageError
from stele.project import Project
from stele.record import edit, knowledge
from stele.record.load import load
from stele.session import sessions, wal
from stele.session.distill import distill


@pytest.fixture
def project(repo) -> Project:
    return Project(repo)


def status(project: Project, fid: str) -> str:
    return load(project).get(fid).status


def current_doc(project: Project, title: str = "How login works") -> str:
    fid = knowledge.draft(project, title, "## Summary\n\nLogin checks the limiter first.\n").fact.id
    knowledge.review(project, fid, "matches the code")
    knowledge.promote(project, fid)
    return fid


def test_draft_review_promote_and_the_review_note_is_kept(project):
    fid = knowledge.draft(project, "How login works").fact.id
    assert status(project, fid) == "draft"
    assert "## Summary" in load(project).get(fid).body
    knowledge.review(project, fid, "checked  against\nsrc/auth.py")
    text = (project.root / load(project).get(fid).path).read_text()
    assert "status: reviewed\n" in text
    assert "review:\n  on: 2026-11-29\n  note: checked against src/auth.py\n" in text
    knowledge.promote(project, fid)
    assert status(project, fid) == "current"
    assert "note: checked against src/auth.py" in (project.root / load(project).get(fid).path).read_text()


def test_many_drafts_are_reviewed_and_promoted_at_once_and_one_refusal_writes_nothing(project):
    ids = [edit.remember(project, f"Decision {n}: use library number {n} for parsing part {n}.", kind="decision",
                         status="draft", tags=["adr"]).fact.id for n in range(4)]
    other = edit.remember(project, "A draft from elsewhere about caching headers.", kind="note", status="draft").fact.id
    done = current_doc(project)
    with pytest.raises(SteleError, match=f"`review` is not allowed for {done}"):
        knowledge.review_all(project, [done], "read them", drafts=True, tag="adr")
    assert {status(project, i) for i in ids} == {"draft"}  # nothing written
    reviewed = knowledge.review_all(project, [], "read against the ADRs", drafts=True, tag="adr")
    assert sorted(f.id for f in reviewed) == sorted(ids) and status(project, other) == "draft"
    assert "note: read against the ADRs" in (project.root / load(project).get(ids[0]).path).read_text()
    promoted = knowledge.promote_all(project, [], reviewed=True)
    assert sorted(f.id for f in promoted) == sorted(ids)
    assert {status(project, i) for i in ids} == {"current"}
    with pytest.raises(SteleError, match="no reviewed facts in the record"):
        knowledge.promote_all(project, [], reviewed=True)


def test_an_edit_clears_a_review_and_its_note(project):
    fid = knowledge.draft(project, "How login works").fact.id
    knowledge.review(project, fid, "ok")
    edit.edit(project, fid, edit.Changes(body="Rewritten."))
    fact = load(project).get(fid)
    assert fact.status == "draft" and "review:" not in (project.root / fact.path).read_text()
    with pytest.raises(SteleError, match=f"`promote` is not allowed for {fid}: it is a draft that has not been "
                                         "reviewed"):
        knowledge.promote(project, fid)


@pytest.mark.parametrize("step, start, message", [
    ("review", "reviewed", "`review` is not allowed for {id}: it is already reviewed"),
    ("review", "current", "`review` is not allowed for {id}: it is current knowledge and only drafts are "
                          "reviewed"),
    ("review", "superseded", "`review` is not allowed for {id}: it is superseded and stays only as history"),
    ("promote", "draft", "`promote` is not allowed for {id}: it is a draft that has not been reviewed"),
    ("promote", "current", "`promote` is not allowed for {id}: it is already current"),
    ("promote", "superseded", "`promote` is not allowed for {id}: it is superseded and stays only as history"),
    ("edit", "current", "{id} is current knowledge and is not edited in place"),
    ("edit", "superseded", "{id} is superseded: it stays as history and is not edited"),
])
def test_each_disallowed_step_fails_naming_it(project, step, start, message):
    fid = knowledge.draft(project, "A document", "Body.").fact.id
    if start in ("reviewed", "current", "superseded"):
        knowledge.review(project, fid, "ok")
    if start in ("current", "superseded"):
        knowledge.promote(project, fid)
    if start == "superseded":
        knowledge.supersede(project, fid, _reviewed(project))
    before = (project.root / load(project).get(fid).path).read_bytes()
    with pytest.raises(SteleError) as e:
        if step == "edit":
            edit.edit(project, fid, edit.Changes(body="new text"))
        elif step == "review":
            knowledge.review(project, fid, "again")
        else:
            knowledge.promote(project, fid)
    assert message.format(id=fid) in str(e.value)
    assert (project.root / load(project).get(fid).path).read_bytes() == before  # nothing was written


def _reviewed(project: Project, title: str = "Replacement") -> str:
    fid = knowledge.draft(project, title, "Newer body.").fact.id
    knowledge.review(project, fid, "ok")
    return fid


def test_supersede_makes_the_reviewed_draft_current_and_keeps_the_old_readable(project):
    old = current_doc(project)
    new = _reviewed(project)
    knowledge.supersede(project, old, new)
    record = load(project)
    assert record.get(old).status == "superseded" and record.get(new).status == "current"
    assert record.get(new).links == {"supersedes": [old]}
    assert "Login checks the limiter first." in record.get(old).body


def test_each_disallowed_supersede_fails_naming_it(project):
    old = current_doc(project)
    draft = knowledge.draft(project, "Unreviewed", "Body.").fact.id
    with pytest.raises(SteleError, match=rf"`supersede {old} --by {draft}` is not allowed for {draft}: {draft} is "
                                         "a draft that has not been reviewed"):
        knowledge.supersede(project, old, draft)
    other = current_doc(project, "Another current one")
    with pytest.raises(SteleError, match=rf"is not allowed for {other}: {other} is current, not a reviewed draft"):
        knowledge.supersede(project, old, other)
    reviewed = _reviewed(project)
    with pytest.raises(SteleError, match=rf"is not allowed for {draft}: {draft} is an unreviewed draft and only "
                                         "current knowledge is superseded"):
        knowledge.supersede(project, draft, reviewed)
    knowledge.supersede(project, old, reviewed)
    with pytest.raises(SteleError, match=rf"{old} is already superseded; nothing changed"):
        knowledge.supersede(project, old, _reviewed(project, "Third"))
    with pytest.raises(UsageError, match="cannot supersede itself"):
        knowledge.supersede(project, reviewed, reviewed)


def test_knowledge_steps_refuse_facts_that_are_not_knowledge(project):
    dec = edit.remember(project, "Rate limiting sits before auth.", kind="decision").fact.id
    with pytest.raises(SteleError, match=f"{dec} is a decision edited in place, not a knowledge document"):
        knowledge.review(project, dec, "ok")


def test_export_writes_a_plain_file_and_never_clobbers(project, tmp_path):
    fid = current_doc(project)
    dest = tmp_path / "out" / "login.md"
    knowledge.export(project, fid, dest)
    text = dest.read_text()
    assert text.startswith(f"<!-- Exported by Stele from {fid} (current) on 2026-11-29.")
    assert "# How login works\n\n## Summary\n\nLogin checks the limiter first.\n" in text
    with pytest.raises(SteleError, match="already exists: pass --force"):
        knowledge.export(project, fid, dest)
    knowledge.export(project, fid, dest, force=True)
    with pytest.raises(UsageError, match="export outside docs/memory/"):
        knowledge.export(project, fid, project.root / "docs/memory/copy.md")


def test_distill_drafts_from_a_finished_task_with_its_provenance(project):
    task = edit.remember(project, "Add a rate limit to login.", kind="task", anchors=["src/auth.py"]).fact.id
    dec = edit.remember(project, "Rate limiting sits before auth. Floods never reach bcrypt.", kind="decision",
                          links=[f"relates-to:{task}"]).fact.id
    with pytest.raises(SteleError, match=f"`distill` is not allowed for {task}: it is open and only a finished "
                                         r"\(done\) task is distilled"):
        distill(project, task)
    sid = sessions.start(project, agent="claude-code", goal="Stop login floods", task=task).session
    sessions.log(project, sid, "note", "Tried a middleware; too late in the chain.")
    sessions.log(project, sid, "prompt", "a prompt is not distilled")
    sessions.log(project, sid, "stage", "first plan", stage="plan")
    sessions.log(project, sid, "stage", "final plan: limiter before auth", stage="plan")
    sessions.log(project, sid, "steering", "keep the limiter in-process")
    sessions.log(project, sid, "outcome", "The limiter now runs first. Login is safe.", paths=["src/limit.py"])
    sessions.log(project, sid, "note", "another task's note", task="TASK-ZZZZ")
    run = "01M8RNQWG5E2HNNBVBYRY7S7XC"
    wal.append(project, wal.new_entry(sid, "snapshot", f"snapshot {run}", task=task, refs={"run": run}))
    edit.edit(project, task, edit.Changes(status="done"))
    written = distill(project, task)
    fact = load(project).get(written.fact.id)
    assert fact.kind == "document" and fact.status == "draft" and fact.title == "Add a rate limit to login."
    assert fact.summary == "The limiter now runs first."
    assert fact.links == {"relates-to": [task]}
    used = [e for e in wal.read_all(project) if e.type not in ("prompt", "snapshot") and e.task != "TASK-ZZZZ"]
    assert fact.source == [task, *(e.id for e in used), f"run:{run}", dec, "src/auth.py", "src/limit.py"]
    assert f"- runs (what the agent saw: `stele snapshot show RUN`): {run}" in fact.body
    assert f"[{dec}] decision: Rate limiting sits before auth. Floods never reach bcrypt. Rate" in fact.body
    assert ".." not in fact.body
    with pytest.raises(SteleError, match=f"{written.fact.id} .draft, .* is already distilled from it"):
        distill(project, task)  # a second draft would cite the first
    edit.retire(project, written.fact.id, "redo")
    again = distill(project, task).fact
    assert written.fact.id not in again.source and written.fact.id not in again.body
    body = fact.body
    assert "## Goal\n\nStop login floods\n" in body
    assert "- plan (2 visits): final plan: limiter before auth\n" in body and "first plan" not in body
    assert "## Steering\n\n- keep the limiter in-process\n" in body
    assert "outcome: The limiter now runs first. Login is safe." in body
    assert "a prompt is not distilled" not in body and "another task" not in body
    assert f"- facts: {dec}" in body and f"- sessions: {sid} ({len(used)} entries)" in body


def _unreviewed(project: Project) -> set[str]:
    from stele.doctor.run import run as doctor_run

    return {f.fact for f in doctor_run(project).findings if f.check == "unreviewed-knowledge"}


def _briefed(project: Project) -> str:
    from tests.helpers import invoke

    r = invoke("context", "--prompt", "how does login work?")
    assert r.code == 0, r.err
    return r.out


def test_a_document_set_current_by_hand_is_flagged_and_left_out_of_briefings(project):
    """An $EDITOR that writes `status: current` into `stele new document` made a current, unreviewed
    document that went straight into briefings with doctor saying "no problems"."""
    fid = knowledge.draft(project, "How login works", "## Summary\n\nLogin checks the limiter first.\n").fact.id
    path = project.root / load(project).get(fid).path
    path.write_text(path.read_text().replace("status: draft", "status: current"), encoding="utf-8")
    assert _unreviewed(project) == {fid}
    assert fid not in _briefed(project)
    reviewed = current_doc(project, "How logout works")
    assert _unreviewed(project) == {fid} and reviewed in _briefed(project)


def test_a_reviewed_draft_edited_by_hand_is_not_promoted(project):
    fid = knowledge.draft(project, "How login works", "## Summary\n\nLogin checks the limiter first.\n").fact.id
    knowledge.review(project, fid, "matches the code")
    path = project.root / load(project).get(fid).path
    path.write_text(path.read_text().replace("limiter first", "limiter last"), encoding="utf-8")
    assert _unreviewed(project) == {fid}
    with pytest.raises(SteleError, match="edited after its review"):
        knowledge.promote(project, fid)


def test_a_current_document_edited_by_hand_is_flagged(project):
    fid = current_doc(project)
    assert _unreviewed(project) == set()
    path = project.root / load(project).get(fid).path
    path.write_text(path.read_text().replace("limiter first", "limiter never"), encoding="utf-8")
    assert _unreviewed(project) == {fid} and fid not in _briefed(project)
