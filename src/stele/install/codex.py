"""Codex CLI: hooks in `.codex/hooks.json` and a block in `AGENTS.md` (user scope: `~/.codex/`).

Codex silently skips a new or changed hook until the user trusts it with `/hooks`, and Stele cannot
write that trust; the install says so. `hooks.json` gets no root key but `hooks`: Codex rejects the
file over an unknown one. The Stop hook speaks only to continue a turn once with the completion nudge
(a block with the nudge as its reason), the one way Codex lets a stop hook reach the model.
"""
from __future__ import annotations

from . import guidance
from .files import FileTarget, Scope, TextBlock
from .jsonhooks import JsonHooks, handler

TRUST = "Codex skips new hooks until you trust them: run /hooks in Codex and approve the stele entries"


HOOKS = JsonHooks({
    "SessionStart": {"matcher": "startup|resume|clear", "hooks": [handler("codex", "session-start", 15)]},
    "UserPromptSubmit": {"hooks": [handler("codex", "prompt", 10,
                                           statusMessage="stele: recalling project memory")]},
    "PreToolUse": {"matcher": "apply_patch", "hooks": [handler("codex", "pre-edit", 10)]},
    # synchronous: `codex exec` exits without waiting for an async hook, and the edit would go unlogged
    "PostToolUse": {"matcher": "apply_patch", "hooks": [handler("codex", "post-edit", 10)]},
    "Stop": {"hooks": [handler("codex", "stop", 10)]},
})


def plan(scope: Scope):
    hooks_dir = scope.root / ".codex"
    agents = scope.root / "AGENTS.md" if scope.name == "project" else hooks_dir / "AGENTS.md"
    return [(hooks_dir / "hooks.json", HOOKS, TRUST), (agents, TextBlock(guidance.AGENTS_BLOCK), "")]


TARGET = FileTarget("codex", "Codex CLI: hooks (trust them with /hooks) and an AGENTS.md block",
                    (".codex", "AGENTS.md"), plan)
