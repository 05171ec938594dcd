"""Harness detection from payload keys, and the exact answer shape per harness and event."""
import json

import pytest

from stele.hooks import harness

CLAUDE = {"session_id": "abc", "transcript_path": "/t.jsonl", "cwd": "/r", "hook_event_name": "UserPromptSubmit",
          "prompt": "x"}
CODEX = {"session_id": "s", "turn_id": "t1", "transcript_path": None, "cwd": "/r",
         "hook_event_name": "UserPromptSubmit", "model": "gpt-5", "permission_mode": "default", "prompt": "x"}
GEMINI = {"session_id": "s", "transcript_path": "/t", "cwd": "/r", "hook_event_name": "BeforeAgent",
          "timestamp": "2026-11-29T10:00:00Z", "prompt": "x"}
CURSOR = {"conversation_id": "c", "generation_id": "g", "hook_event_name": "sessionStart",
          "workspace_roots": ["/r"], "cursor_version": "2.0.77"}
COPILOT = {"sessionId": "s", "timestamp": 1704614400000, "cwd": "/r", "prompt": "x"}


@pytest.mark.parametrize("data,expected", [(CLAUDE, "claude"), (CODEX, "codex"), (GEMINI, "gemini"),
                                           (CURSOR, "cursor"), (COPILOT, "copilot"), ({}, "claude")])
def test_detect_from_payload_keys(data, expected):
    assert harness.detect(data) == expected


def test_the_flag_wins_but_a_cursor_payload_under_claude_is_cursor():
    assert harness.resolve("codex", CLAUDE) == "codex"
    assert harness.resolve("claude", CURSOR) == "cursor"  # Cursor running .claude/settings.json hooks
    assert harness.resolve(None, GEMINI) == "gemini"


@pytest.mark.parametrize("name", ["claude", "codex", "gemini"])
def test_json_additional_context_with_the_harness_event_name(name):
    out = harness.answer(name, "prompt", "facts")
    assert out.endswith("\n") and out.count("\n") == 1
    data = json.loads(out)
    assert data == {"hookSpecificOutput": {"hookEventName": harness.EVENT_NAMES[name]["prompt"],
                                           "additionalContext": "facts"}}
    assert "permissionDecision" not in out


def test_payload_event_name_is_echoed():
    data = json.loads(harness.answer("claude", "prompt", "x", "SessionStart"))
    assert data["hookSpecificOutput"]["hookEventName"] == "SessionStart"


def test_gemini_always_gets_json_even_when_silent():
    assert harness.answer("gemini", "prompt", None) == "{}\n"
    assert harness.answer("gemini", "pre-edit", "facts") == "{}\n"  # BeforeTool cannot add context
    assert json.loads(harness.answer("gemini", "post-edit", "facts"))["hookSpecificOutput"]["hookEventName"] == "AfterTool"


def test_cursor_and_copilot_shapes():
    assert json.loads(harness.answer("cursor", "session-start", "s")) == {"additional_context": "s"}
    assert json.loads(harness.answer("cursor", "stop", "s")) == {"followup_message": "s"}
    assert harness.answer("cursor", "prompt", "s") == ""  # beforeSubmitPrompt cannot inject
    for event in harness.AGENT_EVENTS:
        assert harness.answer("copilot", event, "s") == ""


def test_stop_speaks_only_where_it_does_not_block():
    assert harness.can_inject("claude", "stop") and harness.can_inject("cursor", "stop")
    assert not any(harness.can_inject(h, "stop") for h in ("codex", "gemini", "copilot"))
