"""The harnesses' per-user memories of this repository (outside git) as draft notes for review.

- Claude Code's auto memory: `<config>/projects/<the repository's path, every character other than a
  letter or digit as '-'>/memory/`, where `<config>` is `$CLAUDE_CONFIG_DIR` or `~/.claude`. One file
  per memory with `name`, `description` and `type` (user, feedback, project, reference) in its
  frontmatter, and `MEMORY.md`, an index of them. A `feedback` memory is an instruction, `project` a
  note, `reference` an fyi; `user` memories describe the person, not the project, and are skipped.
- Codex memories: `$CODEX_HOME/memories/MEMORY.md` (default `~/.codex`), one handbook for every
  project the user works on; only the sections that name this repository (its folder name or path)
  are read, each bullet a note.

Everything imported from here is a draft: no one reviewed what an agent wrote down for itself.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from ... import textcut
from ...kinds import TITLE_MAX
from . import files, guidance
from . import markdown as md
from .draft import Draft

CLAUDE_TYPES = {"feedback": "instruction", "project": "note", "reference": "fyi"}
SKIPPED_TYPES = ("user",)


def claude_folder(roots: list[Path], home: Path | None = None) -> Path | None:
    """Claude Code's auto memory folder for the first of `roots` that has one."""
    base = Path(os.environ.get("CLAUDE_CONFIG_DIR") or (home or Path.home()) / ".claude")
    for root in roots:
        folder = base / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(root)) / "memory"
        if folder.is_dir():
            return folder
    return None


def codex_file(home: Path | None = None) -> Path:
    return Path(os.environ.get("CODEX_HOME") or (home or Path.home()) / ".codex") / "memories" / "MEMORY.md"


def shown(path: Path) -> str:
    """A per-user path as the provenance names it: `~/...` under the home folder."""
    try:
        return "~/" + path.relative_to(Path.home()).as_posix()
    except ValueError:
        return path.as_posix()


def read_claude(folder: Path) -> tuple[list[Draft], list[str]]:
    drafts: list[Draft] = []
    notes: list[str] = []
    found = sorted(p for p in folder.glob("*.md") if p.name != "MEMORY.md")
    for path in found:
        try:
            text = md.strip_comments(files.read(path, shown(path), None))
        except files.Unreadable as e:
            notes.append(files.skipped(shown(path), str(e)))
            continue
        front, body, before = md.split_frontmatter(text)
        problems: list[str] = []
        meta = md.frontmatter(front, shown(path), problems)
        notes += [f"{shown(path)}: {p}" for p in problems]
        nested = meta.get("metadata")
        kind_word = str(meta.get("type") or (nested.get("type") if isinstance(nested, dict) else None)
                        or "project").lower()
        if kind_word in SKIPPED_TYPES:
            notes.append(f"{shown(path)}: a `{kind_word}` memory is about you, not the project: skipped")
            continue
        body = body.strip()
        if not body:
            continue
        title = str(meta.get("description") or meta.get("name") or body.split("\n")[0])
        drafts.append(Draft(path=shown(path), start=before + 1, end=text.count("\n") or 1,
                            kind=CLAUDE_TYPES.get(kind_word, "note"), title=textcut.words(md.plain(title), TITLE_MAX),
                            body=md.cut(body, guidance.RULE_CHARS) + "\n", status="draft", delivery="ranked" if kind_word == "feedback" else "",
                            tags=["claude-memory"], whole_file=True))
    index = folder / "MEMORY.md"
    if not found and index.exists():  # only the index: its own lines are the memories
        try:
            drafts += _as_notes(index, files.read(index, shown(index), None), "claude-memory")
        except files.Unreadable as e:
            notes.append(files.skipped(shown(index), str(e)))
    return drafts, notes


def read_codex(path: Path, root: Path) -> tuple[list[Draft], list[str]]:
    try:
        text = md.strip_comments(files.read(path, shown(path), None))
    except files.Unreadable as e:
        return [], [files.skipped(shown(path), str(e))]
    names = {root.name.lower(), str(root).lower()}
    kept, skipped = [], 0
    for sec in md.sections(text):
        words = (sec.heading + "\n" + sec.text()).lower()
        if any(n in words for n in names):
            kept.append(sec)
        elif sec.blocks:
            skipped += 1
    drafts = []
    for sec in kept:
        drafts += [_note(shown(path), b.text, b.start, b.end, "codex-memories") for b in sec.blocks if b.bullet]
    notes = [f"{shown(path)}: left out {textcut.counted(skipped, 'section')} naming no file or folder of this "
             "repository"] if skipped else []
    return drafts, notes


def _as_notes(path: Path, text: str, tag: str) -> list[Draft]:
    drafts = guidance.read(shown(path), text, tag)
    for d in drafts:
        d.kind, d.status, d.delivery = "note", "draft", ""
    return drafts


def _note(rel: str, text: str, start: int, end: int, tag: str) -> Draft:
    first = md.plain(text.split("\n")[0])
    return Draft(path=rel, start=start, end=end, kind="note", title=textcut.words(first, TITLE_MAX),
                 body=md.cut(text.strip(), guidance.RULE_CHARS) + "\n", status="draft", tags=[tag])

