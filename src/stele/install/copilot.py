"""GitHub Copilot: a block in `.github/copilot-instructions.md` (user scope:
`~/.copilot/copilot-instructions.md`).

Copilot's hooks cannot add context (it ignores sessionStart and userPromptSubmitted output), so no
hooks are installed: the instructions tell the agent to ask the record itself.
"""
from __future__ import annotations

from . import guidance
from .files import FileTarget, Plan, Scope, TextBlock


def plan(scope: Scope) -> Plan:
    path = (scope.root / ".github" / "copilot-instructions.md" if scope.name == "project"
            else scope.root / ".copilot" / "copilot-instructions.md")
    return [(path, TextBlock(guidance.AGENTS_BLOCK), "")]


TARGET = FileTarget("copilot", "GitHub Copilot: a block in the custom instructions",
                    (".github/copilot-instructions.md", ".github/instructions", ".github/hooks"), plan)
