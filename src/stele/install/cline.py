"""Cline: one hook script per event in `.clinerules/hooks/` (user scope: `~/.cline/hooks/`).

Cline has no hook settings file: a hook is an executable file named after its event (`PreToolUse`,
optionally with an extension) in `.clinerules/hooks/` (read by the CLI and the VS Code extension),
`.cline/hooks/` or `~/.cline/hooks/` (@cline/core `hooks/hook-file-config.ts`, @cline/shared
`storage/paths.ts`). Its stdin is a JSON payload; its stdout may be `{"cancel": false,
"contextModification": "..."}`. Cline CLI 3.0.65 adds that text to the conversation only for
PreToolUse and PostToolUse, which run for every tool (no matcher) with a 120 s timeout; TaskStart and
UserPromptSubmit run detached and their output is ignored, so they are not installed: the first
PreToolUse of a task carries the standing rules and the prompt's recall (hooks/catchup.py), and
PostToolUse logs the edit. A `cancel: true` would stop the whole task, so Stele never holds an edit
here. An existing hook of the user's at the same name is never replaced: install stops and says so.
"""
from __future__ import annotations

from .files import EditError, FileTarget, Plan, Scope, WholeFile
from .jsonhooks import command

EVENTS = {"PreToolUse": "pre-edit", "PostToolUse": "post-edit"}


def script(event: str) -> str:
    return ("#!/bin/sh\n"
            "# Stele project memory (written by `stele install cline`; `stele uninstall cline` removes it).\n"
            f"{command(event, 'cline')}\n")


class HookScript(WholeFile):
    """A hook file that is all Stele's, created executable; a file of someone else's there is refused."""
    mode = 0o755

    def apply(self, old: str | None) -> str:
        if old is not None and old != self.text and "stele hook " not in old:
            raise EditError("is a Cline hook of your own (Cline runs one file per name): add the line "
                            f"`{self.text.splitlines()[-1]}` to it by hand, or move it and install again")
        return self.text


def plan(scope: Scope) -> Plan:
    base = scope.root / (".clinerules" if scope.name == "project" else ".cline") / "hooks"
    return [(base / name, HookScript(script(event)), "") for name, event in EVENTS.items()]


TARGET = FileTarget("cline", "Cline: hook scripts in .clinerules/hooks", (".clinerules", ".cline"), plan)
