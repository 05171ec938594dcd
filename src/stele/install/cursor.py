"""Cursor: hooks in `.cursor/hooks.json` and an always-applied rule `.cursor/rules/stele.mdc` (user
scope: `~/.cursor/hooks.json`; Cursor keeps user rules in its settings, not in files).

Cursor's prompt hook cannot add context, so memory reaches the model through sessionStart
(`additional_context`), the rule, and the `stele` commands the rule points to. `sessionEnd` says
nothing (Cursor shows nothing from it); it pushes the session's lines when a team store is configured.
"""
from __future__ import annotations

from . import guidance
from .files import FileTarget, Plan, Scope, WholeFile
from .jsonhooks import JsonHooks, command

HOOKS = JsonHooks({
    "sessionStart": {"command": command("session-start", "cursor")},
    "afterFileEdit": {"command": command("post-edit", "cursor")},
    "stop": {"command": command("stop", "cursor")},
    "sessionEnd": {"command": command("session-end", "cursor")},
}, new_file={"version": 1})

WHEN = ("Project memory (Stele): recorded decisions, risks, lessons and rules; check them before changing "
        "settled things")
RULE = f"""\
---
description: {WHEN}
globs:
alwaysApply: true
---
{guidance.AGENTS_BLOCK}"""


def plan(scope: Scope) -> Plan:
    base = scope.root / ".cursor"
    files: Plan = [(base / "hooks.json", HOOKS, "")]
    if scope.name == "project":
        files.append((base / "rules" / "stele.mdc", WholeFile(RULE), ""))
    return files


TARGET = FileTarget("cursor", "Cursor: hooks and an always-applied rule", (".cursor", ".cursorrules"), plan)
