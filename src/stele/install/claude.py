"""Claude Code: hooks in `.claude/settings.json`, the read-only `stele-researcher` subagent and the
`/recall` skill (user scope: the same files under `~/.claude/`).

The subagent may use Bash, but a PreToolUse hook in its own frontmatter runs
`stele hook guard-readonly` on every command and refuses all but read-only stele commands: the
restriction is enforced, not merely asked for.
"""
from __future__ import annotations

from . import guidance
from .files import FileTarget, Plan, Scope, WholeFile
from .jsonhooks import JsonHooks, guard_command, handler

# Claude Code 2.1's file tools (MultiEdit is gone; NotebookEdit edits .ipynb cells)
EDIT_TOOLS = "Edit|Write|NotebookEdit"


HOOKS = JsonHooks({
    "SessionStart": {"matcher": "startup|resume|clear|compact",
                     "hooks": [handler("claude", "session-start", 15)]},
    "UserPromptSubmit": {"hooks": [handler("claude", "prompt", 10,
                                           statusMessage="stele: recalling project memory")]},
    "PreToolUse": {"matcher": EDIT_TOOLS, "hooks": [handler("claude", "pre-edit", 10)]},
    # synchronous: an async hook still running when the turn ends is cancelled, and its edit is never logged
    "PostToolUse": {"matcher": EDIT_TOOLS, "hooks": [handler("claude", "post-edit", 10)]},
    "Stop": {"hooks": [handler("claude", "stop", 10)]},
    # Claude Code gives all SessionEnd hooks 1.5 s unless one of them asks for more (up to 60 s):
    # this timeout is what lets the push at the end of a session finish within sync_deadline_ms
    "SessionEnd": {"hooks": [handler("claude", "session-end", 10)]},
})

RESEARCHER_WHEN = ("Read-only researcher for this project's Stele memory (decisions, risks, lessons, rules, "
                   "tasks). Use it before non-trivial changes, or when asked why the code is the way it is; "
                   "it returns a short briefing that cites fact ids.")
RECALL_WHEN = ("Search this project's Stele memory (decisions, risks, lessons, rules, tasks) for a topic and "
               "summarise what applies, citing fact ids.")

RESEARCHER = f"""\
---
name: stele-researcher
description: {RESEARCHER_WHEN}
tools: Bash, Read, Grep, Glob
model: inherit
hooks:
  PreToolUse:
    - matcher: "Bash"
      hooks:
        - type: command
          command: "{guard_command("claude")}"
---
{guidance.RESEARCHER}"""

RECALL_SKILL = f"""\
---
name: recall
description: {RECALL_WHEN}
argument-hint: "[topic or question]"
allowed-tools: Bash(stele recall *) Bash(stele search *) Bash(stele show *) Bash(stele brief *)
---
{guidance.RECALL_SKILL}"""


def plan(scope: Scope) -> Plan:
    base = scope.root / ".claude"
    return [
        (base / "settings.json", HOOKS, ""),
        (base / "agents" / "stele-researcher.md", WholeFile(RESEARCHER), ""),
        (base / "skills" / "recall" / "SKILL.md", WholeFile(RECALL_SKILL), ""),
    ]


TARGET = FileTarget("claude", "Claude Code: hooks, a read-only research subagent, a /recall skill",
                    (".claude", "CLAUDE.md"), plan)
