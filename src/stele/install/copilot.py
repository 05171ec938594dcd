"""GitHub Copilot CLI: hooks in `.github/hooks/stele.json` and a block in
`.github/copilot-instructions.md` (user scope: `~/.copilot/hooks/stele.json` and
`~/.copilot/copilot-instructions.md`).

Copilot's hooks reference (github/docs `content/copilot/reference/hooks-reference.md`, checked with
Copilot CLI 1.0.102) lets a hook put text in front of the model in four places, and those are the
events installed: `sessionStart` and `subagentStart` take a top-level `additionalContext`,
`postToolUse` appends one to the tool's result (so an edit's anchored facts arrive right after the
edit), and `userPromptTransformed` may rewrite the prompt the model receives (the prompt's recall is
added below it; `userPromptSubmitted` output is dropped). `agentStop` can only speak by blocking the
stop, which is how the completion nudge continues the turn once. The camelCase event names give the
camelCase payloads. Copilot loads a repository's hooks only in a folder it trusts.
"""
from __future__ import annotations

from . import guidance
from .files import FileTarget, Scope, TextBlock
from .jsonhooks import JsonHooks, command

# the runtime's file-editing tools (`apply_patch` is what GPT-5 models get instead of edit/create)
EDIT_TOOLS = "edit|create|apply_patch"
TRUST = "Copilot CLI runs a repository's hooks only in a folder you trust (it asks on first use)"


def handler(event: str, timeout: int, **extra) -> dict:
    return {"type": "command", "bash": command(event, "copilot"), "timeoutSec": timeout, **extra}


HOOKS = JsonHooks({
    "sessionStart": handler("session-start", 15),
    "userPromptTransformed": handler("prompt", 10),
    "postToolUse": handler("post-edit", 10, matcher=EDIT_TOOLS),
    "subagentStart": handler("subagent-start", 10),
    "agentStop": handler("stop", 10),
    "sessionEnd": handler("session-end", 10),
}, new_file={"version": 1})


def plan(scope: Scope):
    if scope.name == "project":
        return [(scope.root / ".github" / "hooks" / "stele.json", HOOKS, TRUST),
                (scope.root / ".github" / "copilot-instructions.md", TextBlock(guidance.AGENTS_BLOCK), "")]
    return [(scope.root / ".copilot" / "hooks" / "stele.json", HOOKS, ""),
            (scope.root / ".copilot" / "copilot-instructions.md", TextBlock(guidance.AGENTS_BLOCK), "")]


TARGET = FileTarget("copilot", "GitHub Copilot CLI: hooks and a block in the custom instructions",
                    (".github/copilot-instructions.md", ".github/instructions", ".github/hooks"), plan)
