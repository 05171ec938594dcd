"""Which facts are anchored to a set of files, or to a change: `stele anchored`, the pre-commit hook,
the co-change gate and `stele review` all ask this, through `facts_anchored_to()`.

For named files every anchor covering them counts. For a change (staged, or between two revisions) a
symbol anchor counts only when a hunk touches the symbol's lines, on either side of the change: an
edit inside `RateLimiter.check` counts, an edit elsewhere in the same file does not, and deleting the
method counts too. Risks and constraints come first: they are what a change can break.

The working tree's facts are looked up in the index's catalog (kept fresh by `open_index`, which
re-reads only the fact files that changed): the pre-commit hook must answer in well under 300 ms with
10,000 facts, and parsing that many frontmatters takes seconds. A record at another revision (review,
the co-change gate) is already in memory and is looked up there.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .. import gitrepo, treefile
from ..anchors import symbols
from ..anchors.paths import AnchorIndex, normalize, path_matches, split
from ..anchors.paths import inside as lies_in  # `inside` is a parameter below
from ..delivery import anchored_order
from ..gitrepo import FileDiff
from ..kinds import CLOSED_STATUSES as CLOSED
from ..project import Project

if TYPE_CHECKING:
    from ..index.catalog import Node
    from ..record.model import Fact

    # A fact as parsed, or its catalog row: both have the id, kind, title, status, priority and path.
    Head = Fact | Node

@dataclass(frozen=True)
class Hit:
    anchor: str
    file: str
    lines: tuple[int, int] | None = None  # the symbol's lines (new side when it still exists)


@dataclass
class Anchored:
    fact: Head
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
    return sorted(found, key=lambda a: anchored_order(a.fact))


def _code_only(project: Project, paths: Iterable[str]) -> list[str]:
    """Changes to the record itself are not code changes anchored facts should react to."""
    memory = normalize(project.config["memory_dir"])
    return [p for p in paths if not path_matches(memory, p)]


def facts_anchored_to(project: Project, paths: Iterable[str], *, inside: Iterable[str] = (),
                      facts: Iterable[Fact] | None = None) -> dict[str, list[tuple[str, Head]]]:
    """normalized path -> [(anchor, fact)] for every anchor covering it (symbol anchors by their file);
    a path also in `inside` (a folder; "" is the repository) gets the anchors inside it too. `facts` (a
    record at some revision) answers instead of the working tree."""
    paths, inside = [normalize(p) for p in paths], {normalize(p) for p in inside}
    if not paths:
        return {}
    if facts is None:
        found = _from_catalog(project, paths, inside)
        if found is not None:
            return found
        from ..record.load import load  # no index here (Stele is not set up): read the record itself

        facts = load(project).facts.values()
    facts = list(facts)
    index: AnchorIndex[Head] = AnchorIndex()
    for fact in facts:
        for anchor in fact.anchors:
            index.add(anchor, fact)
    within: dict[str, list[tuple[str, Head]]] = {
        p: [(a, f) for f in facts for a in f.anchors if lies_in(split(a)[0], p)] for p in inside}
    return {p: index.lookup(p) + within.get(p, []) for p in paths}


def _from_catalog(project: Project, paths: list[str],
                  inside: set[str]) -> dict[str, list[tuple[str, Head]]] | None:
    from ..index.build import open_index
    from ..index.catalog import IndexUnavailable
    from ..index.items import COMMITTED

    try:
        index = open_index(project)
    except IndexUnavailable:
        return None
    with index:
        rows = index.catalog.covering(paths)
        for p in inside:
            rows[p] = rows.get(p, []) + index.catalog.anchors_inside(p)
        nodes = index.catalog.nodes({r[0] for found in rows.values() for r in found})
    return {p: [(path if symbol is None else f"{path}::{symbol}", nodes[i]) for i, path, symbol, _ in rows[p]
                if i in nodes and nodes[i].source == COMMITTED] for p in paths}


def for_paths(project: Project, paths: Iterable[str], *, include_ended: bool = False,
              facts: Iterable[Fact] | None = None) -> list[Anchored]:
    """Facts anchored to files or folders (a folder matches anchors inside it too)."""
    paths = _code_only(project, [normalize(p) for p in paths])
    folders = [p for p in paths if not p or (project.root / p).is_dir()]
    found: dict[str, Anchored] = {}
    texts: dict[str, str | None] = {}
    for raw, pairs in facts_anchored_to(project, paths, inside=folders, facts=facts).items():
        for anchor, fact in pairs:
            if fact.status in CLOSED and not include_ended:
                continue
            path, symbol = split(anchor)
            lines = None
            if symbol is not None:
                if path not in texts:
                    texts[path] = _read(project.root, path)
                text = texts[path]
                lines = symbols.find(text, symbol, path) if text is not None else None
            _add(found, fact, Hit(anchor, raw if (project.root / raw).is_file() else path, lines))
    return order(found.values())


def for_change(project: Project, change: Change, *, include_ended: bool = False, kinds: Iterable[str] = (),
               facts: Iterable[Fact] | None = None) -> list[Anchored]:
    """Facts anchored to what `change` touches; symbol anchors only when a hunk hits the symbol.
    `facts` (a record at some revision) answers instead of the working tree."""
    wanted = set(kinds)
    memory = normalize(project.config["memory_dir"])
    diffs = [d for d in change.files if not all(path_matches(memory, p) for p in d.paths)]
    covering = facts_anchored_to(project, [p for d in diffs for p in d.paths], facts=facts)
    candidates: list[tuple[FileDiff, str, Head]] = []
    for diff in diffs:
        seen = set()
        for path in diff.paths:
            for anchor, fact in covering[normalize(path)]:
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


def _add(found: dict[str, Anchored], fact: Head, hit: Hit) -> None:
    entry = found.setdefault(fact.id + "\0" + fact.path, Anchored(fact))
    if hit not in entry.hits:
        entry.hits.append(hit)


def _read(root: Path, path: str) -> str | None:
    try:
        return treefile.read_text(root / path, errors="replace", root=root)
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
                texts[(diff.path, "new")] = _read(root, diff.path)
            else:
                rev = "" if change.new == ":" else change.new  # `:path` is the index
                specs[f"{rev}:{diff.path}"] = (diff.path, "new")
        if diff.status != "A" and change.old is not None:
            old = diff.old_path or diff.path
            specs[f"{change.old}:{old}"] = (old, "old")
    for spec, blob in gitrepo.read_blobs(root, list(specs)).items():
        texts[specs[spec]] = blob.decode("utf-8", "replace") if blob is not None else None
    return texts
