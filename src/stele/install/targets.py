"""The install targets: what each one changes (`Change`), the protocol each implements, and the list."""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ..errors import UsageError
from ..project import Project

# module names under stele.install, in the order `stele install --help` lists them
TARGET_MODULES: tuple[str, ...] = ("claude", "codex", "gemini", "cursor", "copilot", "cline", "precommit",
                                   "mcp_claude", "mcp_codex")


@dataclass(frozen=True)
class Change:
    path: Path
    action: str  # created | updated | unchanged | removed | restored
    detail: str = ""
    diff: str = ""  # unified diff, filled in by dry runs


class Target(Protocol):
    name: str
    summary: str

    def detect(self, project: Project) -> bool: ...

    def install(self, project: Project, *, dry_run: bool = False,
                scope: str = "project") -> list[Change]: ...

    def uninstall(self, project: Project, *, dry_run: bool = False,
                  scope: str = "project") -> list[Change]: ...


def targets() -> dict[str, Target]:
    found: dict[str, Target] = {}
    for module in TARGET_MODULES:
        target = importlib.import_module(f"{__package__}.{module}").TARGET
        found[target.name] = target
    return found


def get(name: str) -> Target:
    all_targets = targets()
    if name not in all_targets:
        raise UsageError(f"unknown install target {name!r}: use one of " + ", ".join(all_targets))
    return all_targets[name]
