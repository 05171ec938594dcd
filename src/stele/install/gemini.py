"""Gemini CLI: hooks in `.gemini/settings.json` (user scope: `~/.gemini/settings.json`).

Timeouts are milliseconds here. BeforeTool cannot add context, so the edit hook that speaks is the
AfterTool one (`post-edit`). AfterAgent continues the turn with a blocking decision's reason as the
next prompt, which is how the completion nudge reaches the model there.
SessionStart has no matcher: Gemini compares a lifecycle matcher with the source as one exact string
(`hookPlanner.ts`), so `startup|resume|clear` would match nothing and the hook would never run.
SessionEnd has none either, for the same reason (its trigger is the exit reason); Gemini awaits it
on exit and on /clear, and it pushes the session's lines when a team store is configured.
Gemini reads settings.json through strip-json-comments (`config/settings.ts`), so `//` and `/* */`
comments are read here too and kept; a trailing comma is refused, as Gemini's `JSON.parse` refuses it.
"""
from __future__ import annotations

from .files import FileTarget, Plan, Scope
from .jsonhooks import JsonHooks, command

EDIT_TOOLS = "write_file|replace"


def handler(event: str, name: str) -> dict:
    return {"name": f"stele-{name}", "type": "command", "command": command(event, "gemini"), "timeout": 10000}


HOOKS = JsonHooks({
    "SessionStart": {"hooks": [handler("session-start", "session")]},
    "BeforeAgent": {"hooks": [handler("prompt", "prompt")]},
    "AfterTool": {"matcher": EDIT_TOOLS, "hooks": [handler("post-edit", "post-edit")]},
    "AfterAgent": {"hooks": [handler("stop", "stop")]},
    "SessionEnd": {"hooks": [handler("session-end", "session-end")]},
}, comments=True)


def plan(scope: Scope) -> Plan:
    return [(scope.root / ".gemini" / "settings.json", HOOKS, "")]


TARGET = FileTarget("gemini", "Gemini CLI: hooks in .gemini/settings.json", (".gemini", "GEMINI.md"), plan)
