"""Gemini CLI: hooks in `.gemini/settings.json` (user scope: `~/.gemini/settings.json`).

Timeouts are milliseconds here. BeforeTool cannot add context, so the edit hook that speaks is the
AfterTool one (`post-edit`), and AfterAgent could only retry the turn, so there is no stop hook.
"""
from __future__ import annotations

from .files import FileTarget, Plan, Scope
from .jsonhooks import JsonHooks

EDIT_TOOLS = "write_file|replace"


def handler(event: str, name: str) -> dict:
    return {"name": f"stele-{name}", "type": "command", "command": f"stele hook {event} --harness gemini",
            "timeout": 10000}


HOOKS = JsonHooks({
    "SessionStart": {"matcher": "startup|resume|clear", "hooks": [handler("session-start", "session")]},
    "BeforeAgent": {"hooks": [handler("prompt", "prompt")]},
    "AfterTool": {"matcher": EDIT_TOOLS, "hooks": [handler("post-edit", "post-edit")]},
})


def plan(scope: Scope) -> Plan:
    return [(scope.root / ".gemini" / "settings.json", HOOKS, "")]


TARGET = FileTarget("gemini", "Gemini CLI: hooks in .gemini/settings.json", (".gemini", "GEMINI.md"), plan)
