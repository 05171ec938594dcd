"""`stele hook session-end`, as each harness that has the event calls it (payloads in the shapes
their sources and references give): it answers nothing, in the harness's form, always exits 0, and
with a team store configured pushes the session's lines or says in one stderr line why it could
not, leaving the local log as it was. (The push reaching a real server: tests/session/test_sync.py.)"""
from __future__ import annotations

import pytest

from tests.helpers import hook, invoke, unreachable_store

TS = "2026-12-01T12:00:00.000Z"


def payloads(repo) -> dict[str, dict]:
    return {
        "claude": {"session_id": "s1", "transcript_path": str(repo / "t.jsonl"), "cwd": str(repo),
                   "permission_mode": "default", "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"},
        "gemini": {"session_id": "s1", "transcript_path": str(repo / "t.json"), "cwd": str(repo),
                   "hook_event_name": "SessionEnd", "timestamp": TS, "reason": "exit"},
        "cursor": {"conversation_id": "c1", "generation_id": "g1", "session_id": "c1", "hook_event_name": "sessionEnd",
                   "workspace_roots": [str(repo)], "cursor_version": "2.1.0", "reason": "user_close",
                   "duration_ms": 5000, "final_status": "completed"},
        "copilot": {"timestamp": 1764590400000, "cwd": str(repo), "reason": "user_exit"},
    }


SILENT = {"claude": "", "gemini": "{}\n", "cursor": "", "copilot": ""}


def store(repo) -> None:
    unreachable_store(repo, 1000)


@pytest.mark.parametrize("harness", sorted(SILENT))
def test_without_a_store_it_says_nothing_and_does_nothing(repo, harness):
    assert invoke("session", "start", "--session", "s1", "--goal", "Ship it").code == 0
    r = hook("session-end", payloads(repo)[harness], "--harness", harness)
    assert (r.code, r.out, r.err) == (0, SILENT[harness], "")
    assert not (repo / ".stele/state/sync").exists()


@pytest.mark.parametrize("harness", sorted(SILENT))
def test_an_unreachable_store_is_one_line_and_the_log_stays(repo, harness, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test")
    store(repo)
    assert invoke("session", "start", "--session", "s1", "--goal", "Ship it").code == 0
    log = repo / ".stele/wal/s1.jsonl"
    before = log.read_bytes()
    r = hook("session-end", payloads(repo)[harness], "--harness", harness)
    assert r.code == 0 and r.out == SILENT[harness]
    assert len(r.err.strip().splitlines()) == 1 and r.err.startswith("stele: session sync:"), r.err
    assert log.read_bytes() == before
    # nothing was shipped, so the lines are still pending for the next sync
    from stele.project import Project
    from stele.session import sync

    assert sync.pending(Project(repo)) == ["s1"]
