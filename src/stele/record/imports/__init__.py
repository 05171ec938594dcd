"""`stele import SOURCE [PATH]`: what a team already wrote (ADRs, AGENTS.md, CLAUDE.md, Cursor rules,
Copilot instructions, the harnesses' per-user memories) as facts of the record, for review in a
pull request.

In data-flow order: `markdown` (sections, paragraphs and bullets with their lines), one reader per
format (`adr`, `guidance`, `memories`) turning files into `Draft`s, and `apply` (deduplication
against the record and earlier imports, anchors, ids, links, provenance and one journaled write).
This module finds the files a SOURCE means; docs/import.md documents each mapping.
"""
from __future__ import annotations

from pathlib import Path, PurePosixPath

from ... import textcut
from ...errors import SteleError, UsageError
from ...neutralize import shown_many
from ...project import Project
from .. import scaffold
from . import adr, files, guidance, memories
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
# Each draft is compared with every fact and every draft before it: 3,000 bullets took 28 s, and a 1 MB
# AGENTS.md of one-line bullets (20,000) would take the better part of an hour. No guidance file has
# this many rules (Codex reads 32 KiB of AGENTS.md); an ADR folder of 2,000 is imported a part at a time.
MAX_PER_FILE = 500
MAX_DRAFTS = 2000


def run(project: Project, source: str, path: str | None = None, *, dry_run: bool = False) -> Outcome:
    if source not in SOURCES:
        raise UsageError(f"unknown source {source!r}: use one of {', '.join(SOURCES)}")
    drafts, notes = read(project, source, path)
    if len(drafts) > MAX_DRAFTS:
        raise UsageError(f"{len(drafts):,} facts in one import, over {MAX_DRAFTS:,}: nothing was written; import "
                         f"a folder or a file at a time (`stele import {source} PATH`)")
    out = apply(project, drafts, dry_run=dry_run)
    if (out.written or out.changed) and not scaffold.set_up(project):
        # a first import is a new user's first command: leave a record set up as `stele init` would
        # (after the facts, so a failed import writes nothing at all)
        done = scaffold.missing(project) if dry_run else scaffold.init(project)
        out.set_up = [project.rel(p) for p in done]
    # a note can quote the file (a status, a flagged command with its URL): redacted like any output
    out.notes = list(dict.fromkeys(shown_many(notes + out.notes)))
    return out


def read(project: Project, source: str, path: str | None) -> tuple[list[Draft], list[str]]:
    root = project.root
    if source == "adr":
        folder = _given(project, path) if path else _adr_folder(project)
        return _adrs(project, folder)
    if source in GUIDANCE:
        found, notes = _files(project, source, path)
        drafts: list[Draft] = []
        for file in found:
            rel = project.rel(file)
            try:
                drafts += _bounded(guidance.read(rel, files.read(file, rel, root), source))
            except files.Unreadable as e:
                notes.append(files.skipped(rel, str(e)))
        return drafts, notes
    if source == "claude-memory":
        found_folder = _outside(path) if path else memories.claude_folder(_roots(project))
        if found_folder is None or not found_folder.is_dir():
            raise SteleError("no Claude Code auto memory for this repository (looked in "
                             f"~/.claude/projects/{_slug(root)}/memory); pass its folder as PATH")
        return memories.read_claude(found_folder)
    file = _outside(path) if path else memories.codex_file()
    if not file.is_file():
        raise SteleError(f"no Codex memories at {memories.shown(file)}; pass the MEMORY.md file as PATH")
    return memories.read_codex(file, root)


def _bounded(drafts: list[Draft]) -> list[Draft]:
    if len(drafts) > MAX_PER_FILE:
        raise files.Unreadable(f"{len(drafts):,} rules in one file, over {MAX_PER_FILE}: split it, or `stele "
                               "remember` the ones that matter")
    return drafts


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


def _adr_folder(project: Project) -> Path:
    for rel in ADR_FOLDERS:
        folder = project.root / rel
        if folder.is_dir() and project.contains(folder) and any(adr.is_adr(p.name) for p in folder.iterdir()):
            return folder
    raise UsageError(f"no ADR folder found (looked for {', '.join(ADR_FOLDERS)}): give it, "
                     "e.g. `stele import adr docs/architecture/decisions`")


def _adrs(project: Project, folder: Path) -> tuple[list[Draft], list[str]]:
    """The drafts of the ADRs in `folder` (or of the one file), and one note per file not read."""
    listed = sorted(folder.rglob("*")) if folder.is_dir() else []
    found = [folder] if not folder.is_dir() else [p for p in listed if adr.is_adr(p.name)]
    others = [p for p in listed if p.suffix.lower() in adr.OTHER_FORMATS]
    if not found:
        raise UsageError(f"{project.rel(folder)}: no ADR files (Markdown, *.md, other than README, index and "
                         "templates)" + (f"; {len(others)} in other formats ({_suffixes(others)}) are not read"
                                         if others else ""))
    siblings: dict[str, str] = {}
    for p in (sorted(folder.parent.rglob("*")) if not folder.is_dir() else found):
        n = adr.number(p.name)
        if n is not None and adr.is_adr(p.name):
            siblings.setdefault(n, project.rel(p))
    drafts: list[Draft] = []
    notes: list[str] = [f"{project.rel(folder)}: {textcut.counted(len(others), 'file')} in other formats "
                        f"({_suffixes(others)}) not read: only Markdown is imported"] if others else []
    for p in found:
        rel = project.rel(p)
        try:
            drafts.append(adr.read(rel, files.read(p, rel, project.root), siblings))
        except files.Unreadable as e:
            notes.append(files.skipped(rel, str(e)))
    return drafts, notes


def _suffixes(paths: list[Path]) -> str:
    return ", ".join(dict.fromkeys(p.suffix.lower() for p in paths))


def _files(project: Project, source: str, path: str | None) -> tuple[list[Path], list[str]]:
    """The files SOURCE reads (anything but a folder: `files.read` names what it refuses), and a note
    per default place that is a link out of the repository (never searched: `.cursor -> /` would have
    the glob walk the whole disk)."""
    notes: list[str] = []
    if path:
        given = _given(project, path)
        if not given.is_dir():
            return [given], notes
        names = {"agents-md": "**/AGENTS.md", "claude-md": "**/CLAUDE.md", "cursor-rules": "**/*.mdc",
                 "copilot-instructions": "**/*.instructions.md"}
        found = sorted(p for p in given.glob(names[source]) if ".git" not in p.parts and not p.is_dir())
    else:
        hits: set[Path] = set()
        for pattern in GUIDANCE[source]:
            fixed = PurePosixPath(pattern.split("*", 1)[0]) if "*" in pattern else PurePosixPath(pattern).parent
            out = next((str(PurePosixPath(*fixed.parts[:n])) for n in range(1, len(fixed.parts) + 1)
                        if not project.contains(project.root.joinpath(*fixed.parts[:n]))), None)
            if out is not None:
                notes.append(files.skipped(out, "a link out of the repository (import files of this repository, "
                                                "not what they point to)"))
                continue
            hits |= {p for p in project.root.glob(pattern) if not p.is_dir()}
        found = sorted(hits)
        notes = list(dict.fromkeys(notes))
    if not found and not notes:
        where = path or " or ".join(GUIDANCE[source])
        raise UsageError(f"no {source} files found ({where}): pass the file as PATH")
    return found, notes


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
