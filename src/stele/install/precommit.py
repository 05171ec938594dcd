"""`stele install pre-commit`: a plain git pre-commit hook, for repositories without the pre-commit
framework (with it, use the `stele-anchored` hook from `.pre-commit-hooks.yaml` instead).

The hook goes where git looks (`git rev-parse --git-path hooks`, which honours `core.hooksPath` and
worktrees). An existing shell hook is kept: Stele's block goes right after its `#!` line, because a
hook that ends in `exec` or `exit` (the pre-commit framework's own hook does) would never reach lines
appended at its end. The block is fenced by marker lines so uninstall removes exactly it and gives back
the original bytes. A tracked hook file (a committed `.githooks/pre-commit`) is never written: the
command prints the lines to add by hand instead.
"""
from __future__ import annotations

import os
import shlex
import shutil
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

from .. import gitrepo
from ..errors import SteleError
from ..project import Project
from .targets import Change

BEGIN = "# >>> stele pre-commit >>> (`stele uninstall pre-commit` removes this block)"
END = "# <<< stele pre-commit <<<"
NEW_HOOK = "#!/bin/sh\n"
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "ash", "busybox"})


def _stele_command() -> str:
    """The `stele` to fall back on when it is not on PATH at commit time (e.g. a venv not activated)."""
    here = Path(sys.executable).parent / "stele"
    return str(here) if here.is_file() else (shutil.which("stele") or "stele")


# `stele install --rules`: the exported rule files follow the record at each commit, and are staged
# with it. A failure to export never blocks the commit (`stele doctor` reports what is out of date).
RULES_LINE = ('if [ -x "$stele_bin" ]; then "$stele_bin" export rules --sync --stage || '
              'echo "stele: the exported rule files were not updated (above)" >&2; fi\n')


def block(rules: bool = False) -> str:
    fallback = shlex.quote(_stele_command())
    return (f"{BEGIN}\n"
            "# Lists the facts anchored to the staged changes; add --strict after `pre-commit` to block\n"
            "# commits that change code under a risk or constraint without re-verifying it.\n"
            f"stele_bin=$(command -v stele || echo {fallback})\n"
            + ("# Rewrites and stages the rule files of `stele export rules` that the record changed.\n"
               + RULES_LINE if rules else "")
            + 'if [ -x "$stele_bin" ]; then "$stele_bin" hook pre-commit || exit 1; fi\n'
            f"{END}\n")


def _interpreter(shebang: str) -> str:
    """`#!/usr/bin/env -S bash -e` -> `bash`."""
    words = shebang[2:].split()
    name = os.path.basename(words[0]) if words else ""
    if name == "env":
        name = next((os.path.basename(w) for w in words[1:] if not w.startswith("-") and "=" not in w), "")
    return name


def _split(text: str) -> tuple[str, str, str] | None:
    """(before, block, after) when the hook holds a Stele block."""
    start = text.find(BEGIN)
    if start == -1:
        return None
    end = text.find(END, start)
    end = len(text) if end == -1 else text.find("\n", end) + 1 or len(text)
    return text[:start], text[start:end], text[end:]


@dataclass(frozen=True)
class PreCommitTarget:
    name: str = "pre-commit"
    summary: str = "git pre-commit hook listing the facts anchored to staged changes"

    def detect(self, project: Project) -> bool:
        return False  # a git hook is installed on request only, never by `stele install --all`

    def hook_path(self, project: Project) -> Path:
        return gitrepo.hooks_dir(project.root) / "pre-commit"

    def install(self, project: Project, *, dry_run: bool = False, scope: str = "project",
                rules: bool = False) -> list[Change]:
        """`rules`: the hook also keeps the exported rule files in sync; a hook that already does keeps
        doing so when installed again without it."""
        _project_scope_only(scope)
        path = self.hook_path(project)
        if not path.exists():
            wanted = block(rules)
            self._refuse_tracked(project, path, wanted)
            return [_write(path, None, NEW_HOOK + wanted, "created", dry_run)]
        text = path.read_text(encoding="utf-8")
        parts = _split(text)
        wanted = block(rules or (parts is not None and RULES_LINE in parts[1]))
        if parts is not None:
            if parts[1] == wanted:
                return [Change(path, "unchanged")]
            self._refuse_tracked(project, path, wanted)
            return [_write(path, text, parts[0] + wanted + parts[2], "updated", dry_run)]
        first, sep, rest = text.partition("\n")
        if first.startswith("#!") and _interpreter(first) not in SHELLS:
            raise SteleError(f"{path} is a `{first[2:].strip()}` script, not a shell script: add "
                             f"`stele hook pre-commit` to it by hand")
        self._refuse_tracked(project, path, wanted)
        new = (first + sep + wanted + rest) if first.startswith("#!") else (wanted + text)
        framework = "File generated by pre-commit" in text
        return [_write(path, text, new, "updated", dry_run, "kept the existing hook" + (
            "; it is the pre-commit framework's: prefer the stele-anchored hook in .pre-commit-config.yaml"
            if framework else ""))]

    def uninstall(self, project: Project, *, dry_run: bool = False, scope: str = "project") -> list[Change]:
        _project_scope_only(scope)
        path = self.hook_path(project)
        text = path.read_text(encoding="utf-8") if path.is_file() else None
        parts = _split(text) if text is not None else None
        if parts is None:
            return [Change(path, "unchanged", "no Stele block")]
        self._refuse_tracked(project, path, "")
        rest = parts[0] + parts[2]
        if rest == NEW_HOOK:
            return [_write(path, text, None, "removed", dry_run)]
        return [_write(path, text, rest, "restored", dry_run)]

    def _refuse_tracked(self, project: Project, path: Path, wanted: str) -> None:
        if gitrepo.is_tracked(project.root, path):
            lines = f": add these lines after its first line and commit them:\n{wanted}" if wanted else ""
            raise SteleError(f"{project.rel(path)} is tracked by git and Stele never writes tracked "
                             f"files{lines}")


def _project_scope_only(scope: str) -> None:
    if scope != "project":
        from ..errors import UsageError

        raise UsageError(f"--scope {scope}: a git hook belongs to one repository; pre-commit supports "
                         "project only")


def _write(path: Path, old: str | None, new: str | None, action: str, dry_run: bool,
           detail: str = "") -> Change:
    """Write (or with None delete) the hook; a dry run only describes it, with a diff."""
    from .. import atomic
    from .files import refuse_unwritable

    if dry_run:
        from .files import diff

        return Change(path, action, detail, diff(path, old, new))
    refuse_unwritable(path)
    if new is None:
        path.unlink()
    else:
        atomic.write(path, new)
        if old is None:
            path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return Change(path, action, detail)


TARGET = PreCommitTarget()
