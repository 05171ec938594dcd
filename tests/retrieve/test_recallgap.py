"""The recall gap, measured on scripted sessions through the real hook entry point: a harness that
shows anchored facts before an edit (Claude Code) leaves no gap; one that only reports the edit
afterwards (Cursor's afterFileEdit) leaves one."""
import json

import pytest

from stele.project import Project
from stele.retrieve.recallgap import recall_gap
from stele.session import sessions, wal
from tests.helpers import git, hook, invoke, write_sample_record


@pytest.fixture
def record(repo, fake_model):
    return write_sample_record(repo)


def claude(event, repo, session, **fields):
    return {"session_id": session, "transcript_path": "/tmp/t.jsonl", "cwd": str(repo),
            "hook_event_name": event, "permission_mode": "default", **fields}


def cursor_edit(repo, conversation, path):
    return {"conversation_id": conversation, "generation_id": "g1", "cursor_version": "2.0.77",
            "workspace_roots": [str(repo)], "hook_event_name": "afterFileEdit", "file_path": str(repo / path),
            "edits": [{"old_string": "a", "new_string": "b"}]}


def edit_in_claude(repo, session, path):
    tool = {"tool_name": "Edit", "tool_input": {"file_path": str(repo / path), "old_string": "a",
                                                "new_string": "b"}}
    pre = hook("pre-edit", claude("PreToolUse", repo, session, **tool), "--harness", "claude")
    assert pre.code == 0
    post = hook("post-edit", claude("PostToolUse", repo, session, tool_response={}, **tool), "--harness", "claude")
    assert post.code == 0
    return pre


def test_gap_is_zero_where_the_harness_shows_facts_before_the_edit_and_positive_where_it_cannot(record):
    pre = edit_in_claude(record, "claude-1", "src/auth/middleware.py")
    assert "RISK-0007" in json.loads(pre.out)["hookSpecificOutput"]["additionalContext"]
    gap = recall_gap(Project(record))
    assert (gap.sessions, gap.edits, gap.anchored_edits, gap.missed, gap.gap) == (1, 1, 1, [], 0.0)

    assert hook("post-edit", cursor_edit(record, "cursor-1", "src/auth/middleware.py"), "--harness",
                "cursor").code == 0
    gap = recall_gap(Project(record))
    assert (gap.sessions, gap.edits, gap.anchored_edits) == (2, 2, 2)
    [missed] = gap.missed
    assert missed.session == "cursor-1" and missed.path == "src/auth/middleware.py"
    assert missed.facts[0] == "RISK-0007" and "DEC-0008" in missed.facts  # risks first
    assert gap.gap == 0.5


def test_the_hooks_log_what_they_delivered_and_what_was_edited(record):
    edit_in_claude(record, "claude-2", "src/auth/middleware.py")
    entries = list(wal.read_file(wal.wal_path(Project(record), "claude-2")))
    delivered = [e for e in entries if sessions.event(e) == sessions.DELIVERED]
    assert [e.extra["hook"] for e in delivered] == ["pre-edit"]
    assert set(sessions.delivered_ids(delivered[0])) >= {"RISK-0007", "DEC-0008"}
    assert [sessions.edited_paths(e) for e in entries if sessions.edited_paths(e)] == [["src/auth/middleware.py"]]
    shown = invoke("session", "show", "claude-2")
    assert "delivered" in shown.out and "RISK-0007" in shown.out
    # delivery notes are bookkeeping: never searched, never injected
    assert all(not r["id"].startswith("S-") for r in json.loads(invoke("search", "--json", "pre-edit RISK-0007")
                                                                .out)["results"])


def test_an_edit_to_code_no_fact_is_anchored_to_does_not_count(record):
    hook("post-edit", cursor_edit(record, "cursor-2", "README.md"), "--harness", "cursor")
    gap = recall_gap(Project(record))
    assert (gap.edits, gap.anchored_edits, gap.gap) == (1, 0, 0.0)


def test_since_takes_a_date_or_a_revision(record):
    hook("post-edit", cursor_edit(record, "cursor-3", "src/auth/middleware.py"), "--harness", "cursor")
    assert recall_gap(Project(record), "2000-01-01").sessions == 1
    assert recall_gap(Project(record), "2999-01-01").sessions == 0
    git(record, "add", "-A")
    git(record, "commit", "-qm", "x")
    assert recall_gap(Project(record), "HEAD").since.endswith("Z")
    r = invoke("eval", "--recall-gap", "--since", "no-such-ref")
    assert r.code == 1 and "--since" in r.err
