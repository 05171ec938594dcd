"""Harness detection from payload keys, and the exact answer shape per harness and event."""
import json

import pytest

from stele.hooks import harness

CLAUDE = {"session_id": "abc", "transcript_path": "/t.jsonl", "cwd": "/r",
          "hook_event_name": "UserPromptSubmit", "prompt": "x"}
CODEX = {"session_id": "s", "turn_id": "t1", "transcript_path": None, "cwd": "/r",
         "hook_event_name": "UserPromptSubmit", "model": "gpt-5", "permission_mode": "default", "prompt": "x"}
GEMINI = {"session_id": "s", "transcript_path": "/t", "cwd": "/r", "hook_event_name": "BeforeAgent",
          "timestamp": "2026-11-29T10:00:00Z", "prompt": "x"}
CURSOR = {"conversation_id": "c", "generation_id": "g", "hook_event_name": "sessionStart",
          "workspace_roots": ["/r"], "cursor_version": "2.0.77"}
COPILOT = {"sessionId": "s", "timestamp": 1704614400000, "cwd": "/r", "prompt": "x"}
# Copilot CLI 1.0.102 running `.claude/settings.json` hooks (captured by tests/e2e)
COPILOT_VSCODE = {"hook_event_name": "PreToolUse", "session_id": "s", "timestamp": "2026-12-01T09:48:23.988Z",
                  "cwd": "/r", "tool_name": "Edit", "tool_input": {"path": "/r/a.py", "old_str": "x", "new_str": "y"}}
COPILOT_VSCODE_START = {"hook_event_name": "SessionStart", "session_id": "s", "timestamp": "2026-12-01T09:48:23Z",
                        "cwd": "/r", "source": "new", "initial_prompt": "why?"}
GEMINI_START = {"session_id": "s", "transcript_path": "/t", "cwd": "/r", "hook_event_name": "SessionStart",
                "timestamp": "2026-12-01T09:48:23Z", "source": "startup"}


@pytest.mark.parametrize("data,expected", [(CLAUDE, "claude"), (CODEX, "codex"), (GEMINI, "gemini"),
                                           (CURSOR, "cursor"), (COPILOT, "copilot"), ({}, "claude"),
                                           (COPILOT_VSCODE, "copilot"), (COPILOT_VSCODE_START, "copilot"),
                                           (GEMINI_START, "gemini")])
def test_detect_from_payload_keys(data, expected):
    assert harness.detect(data) == expected


def test_the_flag_wins_but_cursor_and_copilot_payloads_under_claude_are_theirs():
    assert harness.resolve("codex", CLAUDE) == "codex"
    assert harness.resolve("claude", CURSOR) == "cursor"  # Cursor running .claude/settings.json hooks
    assert harness.resolve("claude", COPILOT_VSCODE) == "copilot"  # so does Copilot CLI
    assert harness.resolve("claude", CLAUDE) == "claude"
    assert harness.resolve(None, GEMINI) == "gemini"
    assert harness.form("copilot", COPILOT_VSCODE) == "copilot-vscode" and harness.form("copilot", COPILOT) == "copilot"


def said(text, hold=False):
    return harness.Answer(text, hold)


@pytest.mark.parametrize("name", ["claude", "codex", "gemini"])
def test_json_additional_context_with_the_harness_event_name(name):
    out = harness.answer(name, "prompt", said("facts"))
    assert out.endswith("\n") and out.count("\n") == 1
    data = json.loads(out)
    assert data == {"hookSpecificOutput": {"hookEventName": harness.EVENT_NAMES[name]["prompt"],
                                           "additionalContext": "facts"}}
    assert "permissionDecision" not in out


def test_payload_event_name_is_echoed():
    data = json.loads(harness.answer("claude", "prompt", said("x"), {}, "SessionStart"))
    assert data["hookSpecificOutput"]["hookEventName"] == "SessionStart"


def test_gemini_always_gets_json_even_when_silent():
    assert harness.answer("gemini", "prompt", None) == "{}\n"
    assert harness.answer("gemini", "pre-edit", said("facts")) == "{}\n"  # BeforeTool cannot add context
    after = json.loads(harness.answer("gemini", "post-edit", said("facts")))
    assert after["hookSpecificOutput"]["hookEventName"] == "AfterTool"


def test_cursor_shapes():
    assert json.loads(harness.answer("cursor", "session-start", said("s"))) == {"additional_context": "s"}
    assert json.loads(harness.answer("cursor", "stop", said("s"))) == {"followup_message": "s"}
    assert harness.answer("cursor", "prompt", said("s")) == ""  # beforeSubmitPrompt cannot inject


def test_copilot_shapes_in_both_forms():
    """Copilot's own hooks: top-level additionalContext, the prompt's recall below the transformed prompt,
    a block to continue at the stop. Running Claude's hooks it honours only PreToolUse's
    hookSpecificOutput (SessionStart's is ignored, UserPromptSubmit's output dropped)."""
    for event in ("session-start", "post-edit", "subagent-start"):
        assert json.loads(harness.answer("copilot", event, said("s"))) == {"additionalContext": "s"}
    prompt = json.loads(harness.answer("copilot", "prompt", said("recall"), {"transformedPrompt": "why?"}))
    assert prompt == {"modifiedTransformedPrompt": "why?\n\nrecall"}
    assert harness.answer("copilot", "prompt", said("recall"), {}) == ""  # nothing to append to
    assert json.loads(harness.answer("copilot", "stop", said("n"))) == {"decision": "block", "reason": "n"}
    assert harness.answer("copilot", "pre-edit", said("s")) == ""
    pre = json.loads(harness.answer("copilot-vscode", "pre-edit", said("s"), COPILOT_VSCODE, "PreToolUse"))
    assert pre == {"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "s"}}
    for event in ("session-start", "prompt", "post-edit", "stop"):
        assert harness.answer("copilot-vscode", event, said("s")) == ""


def test_stop_continues_the_turn_in_the_harness_own_way():
    assert "additionalContext" in harness.answer("claude", "stop", said("n"))
    for name in ("codex", "gemini"):
        assert json.loads(harness.answer(name, "stop", said("n"))) == {"decision": "block", "reason": "n"}


def test_a_hold_is_a_reasoned_deny_only_where_it_is_honoured():
    for form in ("claude", "codex", "copilot-vscode"):
        data = json.loads(harness.answer(form, "pre-edit", said("read CON-1", hold=True)))
        assert data["hookSpecificOutput"]["permissionDecision"] == "deny"
        assert data["hookSpecificOutput"]["permissionDecisionReason"] == "read CON-1"
    assert harness.answer("gemini", "pre-edit", said("x", hold=True)) == "{}\n"
    assert harness.answer("claude", "prompt", said("x", hold=True)) == ""


def test_attended_reads_claude_codes_word_then_the_terminal(monkeypatch):
    monkeypatch.setenv(harness.ATTENDED_ENV, "0")
    assert not harness.attended()
    monkeypatch.setenv(harness.ATTENDED_ENV, "1")
    assert harness.attended()
