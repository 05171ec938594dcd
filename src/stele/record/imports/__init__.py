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
    skipped: list[tuple[str, str]] = []
    drafts, notes = read(project, source, path, skipped)
    if len(drafts) > MAX_DRAFTS:
        raise UsageError(f"{len(drafts):,} facts in one import, over {MAX_DRAFTS:,}: nothing was written; import "
                         f"a folder or a file at a time (`stele import {source} PATH`)")
    out = apply(project, drafts, dry_run=dry_run)
    out.skipped = skipped + out.skipped
    if (out.written or out.changed) and not scaffold.set_up(project):
        # a first import is a new user's first command: leave a record set up as `stele init` would
        # (after the facts, so a failed import writes nothing at all)
        done = scaffold.missing(project) if dry_run else scaffold.init(project)
        out.set_up = [project.rel(p) for p in done]
    # a note can quote the file (a status, a flagged command with its URL): redacted like any output
    out.notes = _grouped(list(dict.fromkeys(shown_many(notes + out.notes))))
    return out


def _grouped(notes: list[str]) -> list[str]:
    """Notes that say the same of many files ("no status found: written as a draft", 63 times for
    JabRef's ADRs) as one line naming the first and the count; each such fact is listed above anyway."""
    said: dict[str, list[str]] = {}
    for note in notes:
        head, _, rest = note.partition(": ")
        if rest:
            said.setdefault(rest, []).append(head)
    out = []
    for note in notes:
        head, _, rest = note.partition(": ")
        heads = said.get(rest, [])
        if len(heads) <= 3:
            out.append(note)
        elif heads and heads[0] == head:
            out.append(f"{rest}: {textcut.counted(len(heads), 'file')} ({heads[0]}, {heads[1]}, ... {heads[-1]})")
    return out


def read(project: Project, source: str, path: str | None,
         skipped: list[tuple[str, str]] | None = None) -> tuple[list[Draft], list[str]]:
    """The drafts SOURCE's files give, and notes for the report; `skipped` gets each file of an ADR
    folder that is not read as an ADR, and why (an index, a template, an image)."""
    root = project.root
    if source == "adr":
        folder = _given(project, path) if path else _adr_folder(project)
        return _adrs(project, folder, skipped if skipped is not None else [])
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


def suggested(project: Project) -> list[str]:
    """The `stele import` commands this repository has something for (an ADR folder, AGENTS.md,
    CLAUDE.md, Cursor rules, Copilot instructions), for `stele init` to name. Cheap: a look at the few
    places each source lives, no file read but an ADR folder's listing."""
    out = []
    try:
        folder = _adr_folder(project)
    except UsageError:
        folder = None
    if folder is not None:
        out.append(f"stele import adr {project.rel(folder)}")
    for source, patterns in GUIDANCE.items():
        fixed = [p for p in patterns if "*" not in p]
        globbed = [p for p in patterns if "*" in p]
        if any((project.root / p).is_file() for p in fixed) or any(_has(project, p) for p in globbed):
            out.append(f"stele import {source}")
    return out


def _has(project: Project, pattern: str) -> bool:
    """Does a glob match a file, searched only in a folder inside the repository (`.cursor -> /` would
    have it walk the disk)?"""
    base = project.root / pattern.split("*", 1)[0]
    return base.is_dir() and project.contains(base) and any(not p.is_dir() for p in project.root.glob(pattern))


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


def _adrs(project: Project, folder: Path, skipped: list[tuple[str, str]]) -> tuple[list[Draft], list[str]]:
    """The drafts of the ADRs in `folder` (or of the one file), and one note per file not read; every
    other file of the folder goes to `skipped`, named, with why: none is left out without a word."""
    listed = sorted(folder.rglob("*")) if folder.is_dir() else []
    found = [folder] if not folder.is_dir() else [p for p in listed if adr.is_adr(p.name)]
    others = [p for p in listed if p.suffix.lower() in adr.OTHER_FORMATS]
    if not found:
        raise UsageError(f"{project.rel(folder)}: no ADR files (Markdown, *.md, other than README, index and "
                         "templates)" + (f"; {len(others)} in other formats ({_suffixes(others)}) are not read"
                                         if others else ""))
    for p in listed:
        if p in found or p in others or p.is_dir():
            continue
        why = adr.not_adr(p.name) if p.name.lower().endswith(adr.EXTENSIONS) else None
        skipped.append((files.shown(project.rel(p)), why or "not Markdown, not an ADR"))
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
            text = files.read(p, rel, project.root)
        except files.Unreadable as e:
            notes.append(files.skipped(rel, str(e)))
            continue
        if adr.is_template(text):
            skipped.append((files.shown(rel), "a template (it holds MADR's placeholders), not an ADR"))
            continue
        drafts.append(adr.read(rel, text, siblings))
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


__all__ = ["SOURCES", "Outcome", "run", "suggested"]
