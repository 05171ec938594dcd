"""Everything Stele knows about the six harnesses' hook protocols, in tables.

Which harness sent a payload (its keys give it away), what each harness calls our events, where it
can put text in front of the model, and the exact stdout shape for that. The sources are the
harnesses' own source and references, checked against the real binaries by tests/e2e; claims marked
UNVERIFIED are the ones no real binary has confirmed (Cursor's).

Rules that hold for every harness: exit 0 always (exit 2 blocks, and a memory layer must never block),
stdout holds only the answer, and a permission `allow` is never emitted (it would skip the user's
permission prompt). The one refusal Stele ever answers is the opt-in hold of an edit
(`hooks.hold_edits`), and it is given as a decision with its reason, never as an exit code.
"""
from __future__ import annotations

import json

from ..plain import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

HARNESSES = ("claude", "codex", "gemini", "cursor", "copilot", "cline")
# Stele's agent events (`stele hook EVENT`)
AGENT_EVENTS = ("session-start", "prompt", "pre-edit", "post-edit", "subagent-start", "stop")

# How the session log names the agent behind a harness.
AGENT_NAMES = {"claude": "claude-code", "codex": "codex", "gemini": "gemini-cli", "cursor": "cursor",
               "copilot": "copilot-cli", "cline": "cline"}

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
    "copilot": {"session-start": "sessionStart", "prompt": "userPromptTransformed", "pre-edit": "preToolUse",
                "post-edit": "postToolUse", "subagent-start": "subagentStart", "stop": "agentStop"},
    "cline": {"session-start": "TaskStart", "prompt": "UserPromptSubmit", "pre-edit": "PreToolUse",
              "post-edit": "PostToolUse", "stop": "TaskComplete"},
}

# Where a harness lets a hook put text in front of the model, as measured with the real binaries by
# tests/e2e (Claude Code 2.1.328, Codex 0.171.0, Gemini CLI 0.61.0, Copilot CLI 1.0.102). `stop` speaks
# by continuing the turn once (Claude's additionalContext; a block with a reason elsewhere). Gemini's
# BeforeTool cannot add context (AfterTool can). Cursor's beforeSubmitPrompt cannot inject (3rd-party).
# Copilot: its own hooks (camelCase) take additionalContext at sessionStart, postToolUse and
# subagentStart, and userPromptTransformed may rewrite the prompt; when it runs Claude Code's hooks
# (`.claude/settings.json`, VS Code-form payloads) it honours only PreToolUse's hookSpecificOutput.
CAN_INJECT: dict[str, frozenset[str]] = {
    "claude": frozenset({"session-start", "prompt", "pre-edit", "post-edit", "stop"}),
    "codex": frozenset({"session-start", "prompt", "pre-edit", "post-edit", "stop"}),
    "gemini": frozenset({"session-start", "prompt", "post-edit", "stop"}),
    "cursor": frozenset({"session-start", "stop"}),  # additional_context / followup_message: UNVERIFIED
    "copilot": frozenset({"session-start", "prompt", "post-edit", "subagent-start", "stop"}),
    "copilot-vscode": frozenset({"pre-edit"}),
    "cline": frozenset({"pre-edit"}),
}
# Harnesses whose session-start and prompt hooks cannot reach the model: Cline CLI 3.0.65 runs TaskStart
# and UserPromptSubmit detached with their output ignored (@cline/core `hook-file-hooks.ts`:
# `blockingRunStartHooks` is never set by the CLI), and only PreToolUse/PostToolUse `contextModification`
# reaches the next request. There the first tool hook of a task carries the standing rules and the
# task prompt's recall (hooks/catchup.py), so they arrive with the first tool result.
CATCH_UP = frozenset({"cline"})
# Cline's tools that change a file: the CLI's `editor` (path, old_text, new_text), the VS Code
# extension's `write_to_file`, `replace_in_file` and `apply_patch`. Its hook files have no matcher.
CLINE_EDIT_TOOLS = frozenset({"editor", "write_to_file", "replace_in_file", "apply_patch"})
# Where a held edit (hooks.hold_edits) can be refused with a reason the model reads.
CAN_HOLD = frozenset({"claude", "codex", "copilot-vscode"})

_GEMINI_ONLY_EVENTS = frozenset({"BeforeAgent", "AfterAgent", "BeforeModel", "AfterModel",
                                 "BeforeToolSelection", "BeforeTool", "AfterTool", "PreCompress"})
_CURSOR_KEYS = ("conversation_id", "workspace_roots", "cursor_version", "generation_id")
ATTENDED_ENV = "CLAUDE_CODE_SESSION_ATTENDED"  # "0" in `claude -p` and SDK runs


def detect(data: dict[str, Any]) -> str:
    """The harness that sent `data`, from its keys; Claude Code when nothing else fits (its JSON answer
    is the one Claude, Codex and Gemini all accept). Claude Code never sends a `timestamp`; Gemini
    always sends a `transcript_path` with its ISO one; Copilot's camelCase payloads carry a numeric
    one (or `sessionId`), its VS Code-form payloads an ISO one. Cline's carry `clineVersion` and
    `hookName`."""
    if "clineVersion" in data or ("hookName" in data and "taskId" in data):
        return "cline"
    if any(k in data for k in _CURSOR_KEYS):
        return "cursor"
    if "turn_id" in data:
        return "codex"
    if "sessionId" in data or "toolName" in data or isinstance(data.get("timestamp"), (int, float)):
        return "copilot"
    if isinstance(data.get("timestamp"), str):
        event = data.get("hook_event_name")
        gemini = event in _GEMINI_ONLY_EVENTS or (event in ("SessionStart", "SessionEnd", "Notification")
                                                  and "transcript_path" in data)
        return "gemini" if gemini else "copilot"
    return "claude"


def resolve(flag: str | None, data: dict[str, Any]) -> str:
    """The `--harness` flag wins, except under `--harness claude`: Cursor (its third-party hooks setting)
    and Copilot CLI (it reads `.claude/settings.json` too) run Claude Code's hooks with payloads of
    their own, and must be answered their way."""
    if flag == "claude":
        found = detect(data)
        return found if found in ("cursor", "copilot") else "claude"
    return flag or detect(data)


def form(harness: str, data: dict[str, Any]) -> str:
    """The protocol to answer in: the harness, or `copilot-vscode` for Copilot's VS Code-form payloads
    (snake_case, with `hook_event_name`), which it sends to Claude Code-format hooks."""
    if harness == "copilot" and "hook_event_name" in data and "sessionId" not in data:
        return "copilot-vscode"
    return harness


def can_inject(form_: str, event: str) -> bool:
    return event in CAN_INJECT.get(form_, frozenset())


def attended() -> bool:
    """Is a person watching this run? Claude Code says so (`CLAUDE_CODE_SESSION_ATTENDED`); otherwise a
    run with a controlling terminal is taken as attended and one without (CI, `codex exec` in a
    script, an SDK) as not. An unattended run is not nudged at its stop (hooks.nudge_unattended):
    continuing the turn there replaces the result a script reads."""
    import os

    said = os.environ.get(ATTENDED_ENV)
    if said in ("0", "1"):
        return said == "1"
    try:
        os.close(os.open("/dev/tty", os.O_RDONLY | os.O_NOCTTY))
    except OSError:
        return False
    return True


# How the stop hook's nudge opens. Gemini and Copilot turn the nudge into the next prompt; the prompt
# hook knows it by this opening (here, not in stop.py, so that knowing costs the prompt no import).
NUDGE_OPENING = "Stele: this session "


@dataclass(frozen=True)
class Answer:
    """What a handler wants said: text for the model, and whether it holds the edit (refuses it once,
    with the text as the reason) instead of only informing."""
    text: str
    hold: bool = False


def silent(form_: str) -> str:
    """The stdout of a hook with nothing to say. Gemini gets `{}`: its stdout must be JSON, and empty
    stdout would put the hook's stderr in front of the user instead."""
    return "{}\n" if form_ == "gemini" else ""


def answer(form_: str, event: str, said: Answer | None, data: dict[str, Any] | None = None,
           event_name: str | None = None) -> str:
    """The exact stdout for `said` in protocol `form_` (see `form`): empty (or `{}`) when there is
    nothing to say or nowhere to say it."""
    data = data or {}
    if said is None or not said.text:
        return silent(form_)
    text = said.text
    if said.hold:
        if form_ not in CAN_HOLD or event != "pre-edit":
            return silent(form_)
        return _dump({"hookSpecificOutput": {"hookEventName": event_name or "PreToolUse",
                                             "permissionDecision": "deny", "permissionDecisionReason": text}})
    if not can_inject(form_, event):
        return silent(form_)
    if form_ == "cline":  # PreToolUse/PostToolUse: added to the next request as a <hook_context> message
        return _dump({"cancel": False, "contextModification": text})
    if form_ == "cursor":
        key = "additional_context" if event == "session-start" else "followup_message"
        return _dump({key: text})
    if form_ == "copilot":
        if event == "stop":
            return _dump({"decision": "block", "reason": text})
        if event == "prompt":  # userPromptTransformed: the recall goes below the prompt the model receives
            base = data.get("transformedPrompt")
            if not isinstance(base, str) or not base.strip():
                return silent(form_)
            return _dump({"modifiedTransformedPrompt": f"{base}\n\n{text}"})
        return _dump({"additionalContext": text})
    if event == "stop" and form_ != "claude":  # Codex and Gemini continue a turn only by blocking its end
        return _dump({"decision": "block", "reason": text})
    name = event_name or EVENT_NAMES["claude" if form_ == "copilot-vscode" else form_][event]
    return _dump({"hookSpecificOutput": {"hookEventName": name, "additionalContext": text}})


def _dump(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False) + "\n"
