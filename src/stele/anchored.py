"""Which facts are anchored to a set of files, or to a change: `stele anchored`, the pre-commit hook,
the co-change gate and `stele review` all ask this.

For named files every anchor covering them counts. For a change (staged, or between two revisions) a
symbol anchor counts only when a hunk touches the symbol's lines, on either side of the change: an
edit inside `RateLimiter.check` counts, an edit elsewhere in the same file does not, and deleting the
method counts too. Risks and constraints come first: they are what a change can break.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from . import gitrepo, symbols
from .anchors import normalize, path_matches, split
from . import anchortable
from .anchortable import FactHead, index_of
from .gitrepo import FileDiff
from .kinds import ENDED_STATUSES
from .project import Project

FIRST_KINDS = ("risk", "constraint")
# no longer about the code: ended facts, and tasks that are over
CLOSED = ENDED_STATUSES | {"done", "cancelled"}
_PRIORITY = {"critical": 0, "high": 1, "normal": 2, "low": 3}


@dataclass(frozen=True)
class Hit:
    anchor: str
    file: str
    lines: tuple[int, int] | None = None  # the symbol's lines (new side when it still exists)


@dataclass
class Anchored:
    fact: FactHead
    hits: list[Hit] = field(default_factory=list)

    def as_dict(self) -> dict:
        f = self.fact
        return {"id": f.id, "kind": f.kind, "title": f.title, "status": f.status, "priority": f.priority,
                "path": f.path, "anchors": [{"anchor": h.anchor, "file": h.file,
                                             "lines": list(h.lines) if h.lines else None} for h in self.hits]}


@dataclass(frozen=True)
class Change:
    """A diff plus where to read both sides: `new` is None (working tree), ":" (the index) or a commit;
    `old` is a commit, or None before the first commit."""
    files: list[FileDiff]
    new: str | None
    old: str | None


def staged(root: Path) -> Change:
    return Change(gitrepo.diff(root, staged=True), ":", gitrepo.rev_parse(root, "HEAD"))


def since(root: Path, ref: str, flag: str = "--diff") -> Change:
    """`ref` vs the working tree; `A..B` compares two commits, `A...B` B with its merge base with A."""
    old, new = revisions(root, ref, flag)
    return Change(gitrepo.diff(root, ref=f"{old}..{new}" if new else old), new, old)


def revisions(root: Path, ref: str, flag: str) -> tuple[str, str | None]:
    """(old sha, new sha or None for the working tree) for `REF`, `A..B` or `A...B` (merge base)."""
    if ".." not in ref:
        return gitrepo.require_commit(root, ref, flag), None
    three = "..." in ref
    a, b = ref.split("..." if three else "..", 1)
    new = gitrepo.require_commit(root, b or "HEAD", flag)
    old = gitrepo.require_commit(root, a or "HEAD", flag)
    return (gitrepo.merge_base(root, old, new) if three else old), new


def order(found: Iterable[Anchored]) -> list[Anchored]:
    return sorted(found, key=lambda a: (a.fact.kind not in FIRST_KINDS, _PRIORITY.get(a.fact.priority, 2),
                                        a.fact.kind, a.fact.id))


def _code_only(project: Project, paths: Iterable[str]) -> list[str]:
    """Changes to the record itself are not code changes anchored facts should react to."""
    memory = normalize(project.config["memory_dir"])
    return [p for p in paths if not path_matches(memory, p)]


def for_paths(project: Project, paths: Iterable[str], *, include_ended: bool = False,
              facts: Iterable[FactHead] | None = None) -> list[Anchored]:
    """Facts anchored to files or folders (a folder matches anchors inside it too)."""
    facts = list(facts) if facts is not None else None
    table = anchortable.table(project) if facts is None else None
    index = table if table is not None else index_of(facts)
    found: dict[str, Anchored] = {}
    texts: dict[str, str | None] = {}
    for raw in _code_only(project, [normalize(p) for p in paths]):
        pairs = index.lookup(raw)
        if not raw or (project.root / raw).is_dir():
            everything = table.heads() if table else facts
            pairs += [(a, f) for f in everything for a in f.anchors if path_matches(raw, split(a)[0])]
        for anchor, fact in pairs:
            if fact.status in CLOSED and not include_ended:
                continue
            path, symbol = split(anchor)
            lines = None
            if symbol is not None:
                if path not in texts:
                    texts[path] = _read(project.root / path)
                lines = symbols.find(texts[path], symbol, path) if texts[path] is not None else None
            _add(found, fact, Hit(anchor, raw if (project.root / raw).is_file() else path, lines))
    return order(found.values())


def for_change(project: Project, change: Change, *, include_ended: bool = False, kinds: Iterable[str] = (),
               facts: Iterable[FactHead] | None = None) -> list[Anchored]:
    """Facts anchored to what `change` touches; symbol anchors only when a hunk hits the symbol.
    `facts` (a record at some revision) replaces the anchors table of the working tree."""
    wanted = set(kinds)
    index = anchortable.table(project) if facts is None else index_of(facts)
    memory = normalize(project.config["memory_dir"])
    candidates: list[tuple[FileDiff, str, FactHead]] = []
    for diff in change.files:
        if all(path_matches(memory, p) for p in diff.paths):
            continue
        seen = set()
        for path in diff.paths:
            for anchor, fact in index.lookup(path):
                if (fact.status in CLOSED and not include_ended) or (wanted and fact.kind not in wanted):
                    continue
                if (anchor, fact.id) not in seen:
                    seen.add((anchor, fact.id))
                    candidates.append((diff, anchor, fact))
    texts = _sides(project.root, change, [(d, a) for d, a, _ in candidates if split(a)[1] is not None])
    found: dict[str, Anchored] = {}
    for diff, anchor, fact in candidates:
        symbol = split(anchor)[1]
        if symbol is None:
            _add(found, fact, Hit(anchor, diff.path))
            continue
        new_text, old_text = texts.get((diff.path, "new")), texts.get((diff.old_path or diff.path, "old"))
        span = symbols.find(new_text, symbol, diff.path) if new_text is not None else None
        if not diff.touches(span, None):  # only then is the old side worth parsing
            old_path = diff.old_path or diff.path
            old_span = None if old_text is None else symbols.find(old_text, symbol, old_path)
            if not diff.touches(None, old_span):
                continue
            span = span or old_span
        _add(found, fact, Hit(anchor, diff.path, span))
    return order(found.values())


def _add(found: dict[str, Anchored], fact: FactHead, hit: Hit) -> None:
    entry = found.setdefault(fact.id + "\0" + fact.path, Anchored(fact))
    if hit not in entry.hits:
        entry.hits.append(hit)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _sides(root: Path, change: Change,
           wanted: list[tuple[FileDiff, str]]) -> dict[tuple[str, str], str | None]:
    """Both versions of every file with a symbol anchor in play, read in one `git cat-file` call."""
    texts: dict[tuple[str, str], str | None] = {}
    specs: dict[str, tuple[str, str]] = {}
    for diff, _ in wanted:
        if diff.status != "D":
            if change.new is None:
                texts[(diff.path, "new")] = _read(root / diff.path)
            else:
                rev = "" if change.new == ":" else change.new  # `:path` is the index
                specs[f"{rev}:{diff.path}"] = (diff.path, "new")
        if diff.status != "A" and change.old is not None:
            old = diff.old_path or diff.path
            specs[f"{change.old}:{old}"] = (old, "old")
    for spec, blob in gitrepo.read_blobs(root, list(specs)).items():
        texts[specs[spec]] = blob.decode("utf-8", "replace") if blob is not None else None
    return texts
