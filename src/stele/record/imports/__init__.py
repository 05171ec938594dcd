"""`stele import SOURCE [PATH]`: what a team already wrote (ADRs, AGENTS.md, CLAUDE.md, Cursor rules,
Copilot instructions, the harnesses' per-user memories) as facts of the record, for review in a
pull request.

In data-flow order: `markdown` (sections, paragraphs and bullets with their lines), one reader per
format (`adr`, `guidance`, `memories`) turning files into `Draft`s, and `apply` (deduplication
against the record and earlier imports, anchors, ids, links, provenance and one journaled write).
This module finds the files a SOURCE means; docs/import.md documents each mapping.
"""
from __future__ import annotations

from pathlib import Path

from ...errors import SteleError, UsageError
from ...project import Project
from . import adr, guidance, memories
from .apply import Outcome, apply
from .draft import Draft

ADR_FOLDERS = ("docs/adr", "doc/adr", "docs/adrs", "docs/decisions", "docs/architecture/decisions",
               "docs/architecture/adr", "architecture/decisions", "adr", "adrs", "decisions", "docs/arch")
GUIDANCE = {  # source -> the files it reads when no PATH is given (globs under the repository root)
    "agents-md": ("AGENTS.md",),
    "claude-md": ("CLAUDE.md", ".claude/CLAUDE.md", ".claude/rules/**/*.md"),
    "cursor-rules": (".cursor/rules/**/*.mdc", ".cursorrules"),
    "copilot-instructions": (".github/copilot-instructions.md", ".github/instructions/**/*.instructions.md"),
}
SOURCES = ("adr", *GUIDANCE, "claude-memory", "codex-memories")


def run(project: Project, source: str, path: str | None = None, *, dry_run: bool = False) -> Outcome:
    if source not in SOURCES:
        raise UsageError(f"unknown source {source!r}: use one of {', '.join(SOURCES)}")
    drafts, notes = read(project, source, path)
    out = apply(project, drafts, dry_run=dry_run)
    out.notes = notes + out.notes
    return out


def read(project: Project, source: str, path: str | None) -> tuple[list[Draft], list[str]]:
    root = project.root
    if source == "adr":
        folder = _given(project, path) if path else _adr_folder(root)
        return _adrs(project, folder), []
    if source in GUIDANCE:
        files = _files(project, source, path)
        drafts: list[Draft] = []
        for file in files:
            drafts += guidance.read(project.rel(file), file.read_text(encoding="utf-8", errors="replace"), source)
        return drafts, []
    if source == "claude-memory":
        found = _outside(path) if path else memories.claude_folder(_roots(project))
        if found is None or not found.is_dir():
            raise SteleError("no Claude Code auto memory for this repository (looked in "
                             f"~/.claude/projects/{_slug(root)}/memory); pass its folder as PATH")
        return memories.read_claude(found)
    file = _outside(path) if path else memories.codex_file()
    if not file.is_file():
        raise SteleError(f"no Codex memories at {memories.shown(file)}; pass the MEMORY.md file as PATH")
    return memories.read_codex(file, root)


def _given(project: Project, path: str) -> Path:
    given = Path(path)
    full = (given if given.is_absolute() else Path.cwd() / given).resolve()
    if not full.exists():
        raise UsageError(f"{path}: no such file or folder")
    if not project.contains(full):
        raise UsageError(f"{path} is outside the repository at {project.root}: import files of this repository")
    return full


def _outside(path: str) -> Path:
    full = Path(path).expanduser()
    if not full.exists():
        raise UsageError(f"{path}: no such file or folder")
    return full


def _adr_folder(root: Path) -> Path:
    for rel in ADR_FOLDERS:
        if (root / rel).is_dir() and any(adr.is_adr(p.name) for p in (root / rel).iterdir()):
            return root / rel
    raise UsageError(f"no ADR folder found (looked for {', '.join(ADR_FOLDERS)}): give it, "
                     "e.g. `stele import adr docs/architecture/decisions`")


def _adrs(project: Project, folder: Path) -> list[Draft]:
    files = [folder] if folder.is_file() else sorted(p for p in folder.rglob("*.md") if adr.is_adr(p.name))
    if not files:
        raise UsageError(f"{project.rel(folder)}: no ADR files (*.md other than README, index and templates)")
    siblings: dict[str, str] = {}
    for p in (folder.parent.rglob("*.md") if folder.is_file() else files):
        n = adr.number(p.name)
        if n is not None:
            siblings.setdefault(n, project.rel(p))
    return [adr.read(project.rel(p), p.read_text(encoding="utf-8", errors="replace"), siblings) for p in files]


def _files(project: Project, source: str, path: str | None) -> list[Path]:
    if path:
        given = _given(project, path)
        if given.is_file():
            return [given]
        names = {"agents-md": "**/AGENTS.md", "claude-md": "**/CLAUDE.md", "cursor-rules": "**/*.mdc",
                 "copilot-instructions": "**/*.instructions.md"}
        found = sorted(p for p in given.glob(names[source]) if ".git" not in p.parts)
    else:
        found = sorted({p for pattern in GUIDANCE[source] for p in project.root.glob(pattern) if p.is_file()})
    if not found:
        where = path or " or ".join(GUIDANCE[source])
        raise UsageError(f"no {source} files found ({where}): pass the file as PATH")
    return found


def _roots(project: Project) -> list[Path]:
    """The repository's folder and its main worktree's (Claude Code keys memory by the git root)."""
    roots = [project.root]
    common = project.git_common_dir
    if common.name == ".git" and common.parent != project.root:
        roots.append(common.parent)
    return roots


def _slug(root: Path) -> str:
    import re

    return re.sub(r"[^A-Za-z0-9]", "-", str(root))


__all__ = ["SOURCES", "Outcome", "run"]
