"""Everything Stele knows about the five harnesses' hook protocols, in tables.

Which harness sent a payload (its keys give it away), what each harness calls our events, where it
can put text in front of the model, and the exact stdout shape for that. The sources are the
harnesses' own references, summarised in HARNESSES.md; claims marked UNVERIFIED there are marked here.

Rules that hold for every harness: exit 0 always (exit 2 blocks, and a memory layer must never block),
stdout holds only the answer, and a permission `allow` is never emitted (it would skip the user's
permission prompt).
"""
from __future__ import annotations

import json
from typing import Any

HARNESSES = ("claude", "codex", "gemini", "cursor", "copilot")
# Stele's agent events (`stele hook EVENT`)
AGENT_EVENTS = ("session-start", "prompt", "pre-edit", "post-edit", "stop")

# How the session log names the agent behind a harness.
AGENT_NAMES = {"claude": "claude-code", "codex": "codex", "gemini": "gemini-cli", "cursor": "cursor",
               "copilot": "copilot-cli"}

# What each harness calls our events (the `hookEventName` we answer with, and the config key).
EVENT_NAMES: dict[str, dict[str, str]] = {
    "claude": {"session-start": "SessionStart", "prompt": "UserPromptSubmit", "pre-edit": "PreToolUse",
               "post-edit": "PostToolUse", "stop": "Stop"},
    "codex": {"session-start": "SessionStart", "prompt": "UserPromptSubmit", "pre-edit": "PreToolUse",
              "post-edit": "PostToolUse", "stop": "Stop"},
    "gemini": {"session-start": "SessionStart", "prompt": "BeforeAgent", "pre-edit": "BeforeTool",
               "post-edit": "AfterTool", "stop": "AfterAgent"},
    "cursor": {"session-start": "sessionStart", "prompt": "beforeSubmitPrompt", "pre-edit": "preToolUse",
               "post-edit": "afterFileEdit", "stop": "stop"},
    "copilot": {"session-start": "sessionStart", "prompt": "userPromptSubmitted", "pre-edit": "preToolUse",
                "post-edit": "postToolUse", "stop": "agentStop"},
}

# Where a harness lets a hook add text for the model. Absent means the output is ignored or would
# block: Gemini's BeforeTool and AfterAgent cannot add context (AfterTool can), Codex and Gemini
# continue a stopped turn only by blocking, Cursor's beforeSubmitPrompt cannot inject (3rd-party),
# Copilot processes no sessionStart/userPromptSubmitted output at all.
CAN_INJECT: dict[str, frozenset[str]] = {
    "claude": frozenset({"session-start", "prompt", "pre-edit", "post-edit", "stop"}),
    "codex": frozenset({"session-start", "prompt", "pre-edit", "post-edit"}),
    "gemini": frozenset({"session-start", "prompt", "post-edit"}),
    "cursor": frozenset({"session-start", "stop"}),  # additional_context / followup_message: UNVERIFIED
    "copilot": frozenset(),
}

_GEMINI_EVENTS = frozenset({"SessionStart", "SessionEnd", "BeforeAgent", "AfterAgent", "BeforeModel",
                            "AfterModel", "BeforeToolSelection", "BeforeTool", "AfterTool", "PreCompress",
                            "Notification"})
_CURSOR_KEYS = ("conversation_id", "workspace_roots", "cursor_version", "generation_id")


def detect(data: dict[str, Any]) -> str:
    """The harness that sent `data`, from its keys; Claude Code when nothing else fits (its JSON answer
    is the one Claude, Codex and Gemini all accept)."""
    if any(k in data for k in _CURSOR_KEYS):
        return "cursor"
    if "turn_id" in data:
        return "codex"
    if "sessionId" in data or "toolName" in data or isinstance(data.get("timestamp"), (int, float)):
        return "copilot"
    if "timestamp" in data and data.get("hook_event_name") in _GEMINI_EVENTS:
        return "gemini"
    return "claude"


def resolve(flag: str | None, data: dict[str, Any]) -> str:
    """The `--harness` flag wins, except that Cursor runs Claude Code's hooks too (its third-party
    hooks setting) with its own payload, so a Cursor payload under `--harness claude` is Cursor."""
    if flag and not (flag == "claude" and any(k in data for k in _CURSOR_KEYS)):
        return flag
    return detect(data)


def can_inject(harness: str, event: str) -> bool:
    return event in CAN_INJECT.get(harness, frozenset())


def answer(harness: str, event: str, text: str | None, event_name: str | None = None) -> str:
    """The exact stdout for `text` (empty when there is nothing to say or nowhere to say it).

    Gemini gets `{}` rather than nothing: its stdout must be JSON and nothing else."""
    if not text or not can_inject(harness, event):
        return "{}\n" if harness == "gemini" else ""
    if harness == "cursor":
        key = "additional_context" if event == "session-start" else "followup_message"
        return _dump({key: text})
    name = event_name or EVENT_NAMES[harness][event]
    return _dump({"hookSpecificOutput": {"hookEventName": name, "additionalContext": text}})


def _dump(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False) + "\n"
