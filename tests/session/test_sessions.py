"""Sessions over the log: start, log, restart, filters, list, find, recency."""
import pytest

from stele.errors import SteleError, UsageError
from stele.project import Project
from stele.session import sessions, wal
from stele.session.sessions import Filters


@pytest.fixture
def project(repo) -> Project:
    return Project(repo)


def test_start_records_identity_and_log_stamps_it_on_every_entry(project):
    first = sessions.start(project, agent="claude-code", thread="impl", goal="Ship  it", task="task-418")
    sid = first.session
    assert sid.startswith("sess-") and first.extra == {"event": "start", "goal": "Ship  it"}
    e = sessions.log(project, sid, "decision", "Use tokens", issue="#12", pr="34", sha="ABC1234",
                    paths=["src/auth.py", "./src/auth.py", "src"], task="TASK-418")
    assert (e.agent, e.thread, e.task) == ("claude-code", "impl", "TASK-418")
    assert e.refs == {"issue": "12", "pr": "34", "sha": "abc1234", "paths": ["src/auth.py", "src"]}
    info = sessions.info(project, sid)
    assert (info.agent, info.thread, info.goal, info.task, info.entries) == (
        "claude-code", "impl", "Ship  it", "TASK-418", 2)
    assert info.types == {"note": 1, "decision": 1}


def test_start_refuses_an_existing_session_and_accepts_a_harness_id(project):
    sessions.start(project, session="harness-uuid-1")
    with pytest.raises(SteleError, match="already exists"):
        sessions.start(project, session="harness-uuid-1")
    with pytest.raises(UsageError, match="--task"):
        sessions.start(project, task="not a task")


def test_log_checks_its_input_before_writing(project):
    sid = sessions.start(project).session
    bad = [
        (dict(type_="chat", text="x"), "entry type 'chat'"),
        (dict(type_="note", text="  \n"), "the text is empty"),
        (dict(type_="note", text="x" * (sessions.MAX_TEXT + 1)), "at most 262144"),
        (dict(type_="stage", text="x"), "needs --stage"),
        (dict(type_="note", text="x", stage="plan"), "only applies to `stage`"),
        (dict(type_="note", text="x", issue="twelve"), "--issue 'twelve'"),
        (dict(type_="note", text="x", sha="xyz"), "--sha 'xyz'"),
        (dict(type_="note", text="x", paths=["../outside.py"]), "inside the repository"),
        (dict(type_="note", text="x", paths=["/etc/passwd"]), "inside the repository"),
    ]
    for kwargs, message in bad:
        with pytest.raises(UsageError, match=message):
            sessions.log(project, sid, **kwargs)
    assert sessions.info(project, sid).entries == 1


def test_paths_are_stored_relative_to_the_repository_from_a_subdirectory(project, monkeypatch):
    (project.root / "src").mkdir()
    monkeypatch.chdir(project.root / "src")
    sid = sessions.start(project).session
    assert sessions.log(project, sid, "note", "x", paths=["auth.py"]).refs["paths"] == ["src/auth.py"]


def test_filters_hold_on_one_entry(project):
    a = sessions.start(project, thread="impl", goal="A").session
    sessions.log(project, a, "note", "Rate limiter needs Redis", issue="12", paths=["src/limit.py"])
    sessions.log(project, a, "note", "unrelated", pr="34", task="TASK-418")
    b = sessions.start(project, goal="B").session
    sessions.log(project, b, "stage", "Reviewed the limiter", stage="review", paths=["src/api/v1/h.py"])

    def ids(**kw):
        return [x.session.id for x in sessions.list_sessions(project, Filters(**kw))[0]]

    assert ids() == [b, a]
    assert ids(issue="#12") == [a] and ids(pr="34") == [a] and ids(task="task-418") == [a]
    assert ids(issue="12", pr="34") == []  # both on one entry, not spread over two
    assert ids(path="src") == [b, a] and ids(path="src/api/**/*.py") == [b]
    assert ids(path="src/limit.py") == [a]
    assert ids(q="LIMITER") == [b, a] and ids(q="limiter redis") == [a] and ids(q="review") == [b]
    assert ids(thread="impl") == [a] and ids(thread="impl", q="review") == []
    listed, total = sessions.list_sessions(project, Filters(q="redis"))
    assert total == 1 and [h.text for h in listed[0].hits] == ["Rate limiter needs Redis"]
    assert listed[0].as_dict()["matches"] == 1


def test_query_and_limit_limits(project):
    for q in ("", "   "):
        with pytest.raises(UsageError, match="--q is empty"):
            Filters(q=q)
    Filters(q="x" * 2048)
    with pytest.raises(UsageError, match="at most 2048"):
        Filters(q="x" * 2049)
    assert sessions.check_limit(1000) == 32 and sessions.check_limit(5) == 5
    with pytest.raises(UsageError, match="--limit 0"):
        sessions.check_limit(0)
    for _ in range(34):
        sessions.start(project)
    listed, total = sessions.list_sessions(project, Filters(), limit=100)
    assert len(listed) == 32 and total == 34


def test_find_entry(project):
    sid = sessions.start(project, goal="G").session
    e = sessions.log(project, sid, "note", "the lesson")
    assert sessions.find_entry(project, e.id.lower()) == e
    with pytest.raises(SteleError, match="no session entry S-0000000000"):
        sessions.find_entry(project, "S-0000000000")
    with pytest.raises(UsageError, match="not a session entry id"):
        sessions.find_entry(project, "DEC-4F7K")


def test_recent_summaries_newest_session_first_goal_then_last_entries(project):
    old = sessions.start(project, goal="Old goal").session
    sessions.log(project, old, "note", "old note")
    new = sessions.start(project, goal="New goal").session
    for i in range(4):
        sessions.log(project, new, "outcome", f"step {i} " + "x" * 300)
    last = sessions.log(project, new, "stage", "done", stage="ship")
    sessions.restart(project, new)  # bookkeeping: not summarized
    empty = sessions.start(project).session  # nothing to say: left out
    summaries = sessions.recent_summaries(project)
    assert [s.session for s in summaries] == [new, old] and empty not in {s.session for s in summaries}
    assert summaries[0].id == last.id
    lines = summaries[0].text.split("\n")
    assert lines[0] == "goal: New goal" and lines[-1] == "stage: done" and len(lines) == 4
    assert lines[1].startswith("outcome: step 2 ") and len(lines[1]) == len("outcome: ") + 200
    assert summaries[1].text == "goal: Old goal\nnote: old note"
    assert len(sessions.recent_summaries(project, limit=1)) == 1


def test_search_text_includes_stage_and_paths():
    e = wal.new_entry("s", "stage", "body", refs={"paths": ["src/a.py"]}, extra={"stage": "plan"})
    assert sessions.search_text(e) == "plan\nbody\nsrc/a.py"


def test_a_hand_edited_paths_value_counts_as_no_path_instead_of_failing_readers(project):
    import json

    sid = sessions.start(project).session
    odd = [5, "src/a.py", ["src/b.py", 7]]
    with wal.wal_path(project, sid).open("a") as f:
        for n, paths in enumerate(odd):
            f.write(json.dumps({"v": 1, "id": f"S-01JD3KX00000000000000000{n}", "ts": "2026-01-01T00:00:00Z",
                                "session": sid, "type": "note", "text": f"odd {n}", "refs": {"paths": paths}})
                    + "\n")
    entries = sessions.entries_of(project, sid)[1:]
    assert [e.paths for e in entries] == [[], [], ["src/b.py"]]
    assert [sessions.search_text(e) for e in entries] == ["odd 0", "odd 1", "odd 2\nsrc/b.py"]
    [listed], _ = sessions.list_sessions(project, Filters(path="src"))
    assert [h.text for h in listed.hits] == ["odd 2"]


def test_a_thread_cannot_mix_harnesses(project):
    sessions.start(project, agent="claude-code", thread="impl", goal="Ship it")
    sessions.start(project, agent="claude-code", thread="impl")  # the same harness may take it over
    with pytest.raises(SteleError, match=r"thread 'impl' is run by claude-code .*cannot mix harnesses"):
        sessions.start(project, agent="codex", thread="impl")
    assert sessions.start(project, agent="codex", thread="impl-codex").thread == "impl-codex"


def test_a_restart_clears_stage_history_and_keeps_inputs_identity_and_visits(project):
    from stele.session.preamble import for_scope

    sid = sessions.start(project, agent="claude-code", thread="run", goal="Port the limiter").session
    sessions.log(project, sid, "stage", "planned it", stage="plan")
    sessions.log(project, sid, "steering", "keep the 48-hour grace")
    sessions.restart(project, sid, "second try")
    sessions.log(project, sid, "stage", "planned again", stage="plan")
    p = for_scope(project, session=sid)
    assert (p.goal, p.iteration, [(s.name, s.text, s.visits) for s in p.stages]) == (
        "Port the limiter", 2, [("plan", "planned again", 2)])
    assert [e.text for e in p.steering] == ["keep the 48-hour grace"] and sessions.identity(project, sid).agent == "claude-code"


def test_a_hooks_bookkeeping_lines_are_not_fsynced_and_everyone_elses_are(project, monkeypatch):
    synced: list[int] = []
    real = wal.os.fsync
    monkeypatch.setattr(wal.os, "fsync", lambda fd: (synced.append(fd), real(fd))[1])
    sessions.log_delivered(project, "harness-uuid-2", "prompt", ["DEC-0001"], "claude-code")  # adopts it too
    sessions.log_edit(project, "harness-uuid-2", ["src/auth.py"], "claude-code")
    assert synced == [] and sessions.info(project, "harness-uuid-2").entries == 3
    sid = sessions.start(project, agent="claude-code").session
    sessions.log(project, sid, "decision", "Use tokens")
    assert len(synced) == 2
