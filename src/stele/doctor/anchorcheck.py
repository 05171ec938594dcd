"""Anchors that no longer resolve, what git says happened to them, and where their code went.

`diagnose()` is shared with `--fix`: the message doctor prints and the repair `--fix` proposes come
from the same reasoning, so doctor never promises a fix that `--fix` then does not make. In order:
1. git renames (staged, unstaged and committed) explain where a file or folder went;
2. a Python symbol is re-found by its last name (the one definition left with that name);
3. the code is re-found by its content: a definition, or a file, whose fingerprint is the one the
   fact recorded (`anchors/fingerprint.py`), in the same file, the renamed file, or any source file
   of that language (those changed lately, untracked or uncommitted first). Exactly one match is a
   repair; two or more are named in the message and repaired by no one.
The search reads files only when a broken anchor has a fingerprint to look for, and at most
SEARCH_LIMIT of them.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import PurePosixPath

from .. import gitrepo
from ..anchors import fingerprint, symbols
from ..anchors.paths import is_glob, literal_dir, split
from ..anchors.resolve import Tree, explain_missing, resolve
from ..kinds import CLOSED_STATUSES as CLOSED
from ..record.load import Record
from ..record.model import Fact
from .findings import Finding

SEARCH_LIMIT = 3000  # source files read when looking for code by its content


@dataclass(frozen=True)
class Broken:
    anchor: str
    why: str  # what is wrong and what git says about it
    repair: str | None  # the anchor to write instead, when one is certain
    how: str = ""  # how the repair was found: "git", "name" or "content"


class ContentSearch:
    """Where code went, by fingerprint: each candidate file is read and fingerprinted once per run."""

    def __init__(self, root, tree: Tree) -> None:
        self.root, self.tree = root, tree
        self._defs: dict[str, dict[str, str]] = {}
        self._files: dict[str, str | None] = {}

    @cached_property
    def _order(self) -> list[str]:
        """Every file, lately changed ones first: a moved function is most likely in a file that
        changed since (or one git does not track yet)."""
        recent = gitrepo.recently_changed(self.root)
        files = self.tree.files()
        known = set(files)
        return list(dict.fromkeys([p for p in recent if p in known] + files))

    def candidates(self, like: str) -> list[str]:
        """Files of the language (or, for a file of no known language, the suffix) of `like`."""
        lang, suffix = symbols.language(like), PurePosixPath(like).suffix
        same = [p for p in self._order if (symbols.language(p) == lang if lang else PurePosixPath(p).suffix
                                           == suffix)]
        return same[:SEARCH_LIMIT]

    def symbol(self, print_: str, path: str, first: Sequence[str] = ()) -> list[str]:
        """Anchors (`file::Qualified.name`) of every definition with this fingerprint; the files in
        `first` are searched alone first, and a match there ends the search."""
        for files in ([f for f in first if f], None):
            found = []
            for p in files if files is not None else self.candidates(path):
                found += [f"{p}::{q}" for q, fp in self._definitions(p).items() if fp == print_]
            if found or files is None:
                return list(dict.fromkeys(found))
        return []

    def file(self, print_: str, path: str) -> list[str]:
        return [p for p in self.candidates(path) if self._file_print(p) == print_]

    def _definitions(self, path: str) -> dict[str, str]:
        if path not in self._defs:
            text = self.tree.read(path)
            self._defs[path] = fingerprint.definitions(text, path) if text is not None else {}
        return self._defs[path]

    def _file_print(self, path: str) -> str | None:
        if path not in self._files:
            text = self.tree.read(path)
            self._files[path] = fingerprint.of_file(text) if text is not None else None
        return self._files[path]


def refind(path: str, symbol: str, tree: Tree) -> str | None:
    """A Python symbol's new qualified name: the one definition left with the same last name."""
    if symbols.language(path) != "python":
        return None
    text = tree.read(path)
    defs = symbols.python_definitions(text) if text is not None else None
    name = symbol.rsplit(".", 1)[-1]
    matches = [q for q in (defs or {}) if q.rsplit(".", 1)[-1] == name]
    return matches[0] if len(matches) == 1 else None


def diagnose(anchor: str, tree: Tree, renames: Callable[[], dict[str, tuple[str, str]]],
             print_: str | None = None, search: ContentSearch | None = None,
             existed: Callable[[str], bool] | None = None) -> Broken | None:
    """None when `anchor` resolves; else why not, and the repair when git or the code makes it certain.
    `print_` is the fingerprint the fact recorded for this anchor, `search` where to look for it,
    `existed` whether git history ever held a path (a path that never did is a typo, not a loss)."""
    res = resolve(anchor, tree)
    if res.ok:
        return None
    path, symbol = split(anchor)
    if res.problem == "symbol gone" and symbol is not None:
        found = refind(path, symbol, tree)
        if found:
            return Broken(anchor, f"{symbol} is not defined in {path} any more, but {found} is",
                          f"{path}::{found}", "name")
        return _by_content(anchor, f"{symbol} is not defined in {path} any more", print_, search, [path])
    target = literal_dir(path) if is_glob(path) else path
    missing = "no file matches it" if is_glob(path) else f"{path} is gone"
    moved = explain_missing(target, tree, renames()) if target else None
    if moved is None:
        if target and existed is not None and not existed(target):
            never = ("no file matches it, and nothing under " + target + " ever existed in git history") \
                if is_glob(path) else f"{path} does not exist and never did in git history (a typo?)"
            return _by_content(anchor, never, print_, search, [])
        return _by_content(anchor, f"{missing} and no git rename explains it", print_, search, [])
    new_path, commit = moved
    where = "in uncommitted changes" if commit == "uncommitted" else f"in {commit}"
    why = f"{missing}: git renamed {'it' if target == path else target} to {new_path} {where}"
    new_file = new_path + path[len(target):]
    new_anchor = new_file + (f"::{symbol}" if symbol else "")
    if symbol and not resolve(new_anchor, tree).ok:
        again = refind(new_file, symbol, tree)
        if again is None:
            return _by_content(anchor, f"{why}, and {symbol} is not defined there", print_, search, [new_file])
        new_anchor = f"{new_file}::{again}"
    return Broken(anchor, why, new_anchor, "git") if resolve(new_anchor, tree).ok else Broken(anchor, why, None)


def _by_content(anchor: str, why: str, print_: str | None, search: ContentSearch | None,
                first: list[str]) -> Broken:
    """The broken anchor repaired by its fingerprint when exactly one definition or file has it."""
    path, symbol = split(anchor)
    if print_ is None or search is None or is_glob(path):
        return Broken(anchor, why, None)
    found = search.symbol(print_, path, first) if symbol else search.file(print_, path)
    found = [f for f in found if f != anchor]
    if len(found) == 1:
        what = "definition" if symbol else "file"
        return Broken(anchor, f"{why}, but {found[0]} is a {what} with the same content (its fingerprint)",
                      found[0], "content")
    if found:
        listed = ", ".join(found[:4]) + (", ..." if len(found) > 4 else "")
        return Broken(anchor, f"{why}; {len(found)} places have its content ({listed}): choose one", None)
    return Broken(anchor, f"{why}, and no code with its content was found", None)


def broken_anchors(record: Record, tree: Tree) -> list[tuple[Fact, int, Broken]]:
    """(fact, index of the anchor, diagnosis) for every anchor of a live fact that does not resolve."""
    cache: dict[str, dict] = {}

    def renames() -> dict[str, tuple[str, str]]:
        if "r" not in cache:
            cache["r"] = gitrepo.renames(record.project.root)
        return cache["r"]

    search = ContentSearch(record.project.root, tree)
    # history (ended facts) describes the code as it was; by file, so each file is parsed once
    live = [f for f in record.facts.values() if f.status not in CLOSED]
    todo = sorted(((split(a)[0], f.id, i, f) for f in live for i, a in enumerate(f.anchors)),
                  key=lambda t: t[:3])
    found: list[tuple[Fact, int, Broken]] = []
    for _, _, i, fact in todo:
        anchor = fact.anchors[i]
        broken = diagnose(anchor, tree, renames, fact.fingerprints.get(anchor), search,
                          lambda p: gitrepo.ever_existed(record.project.root, p))
        if broken is not None:
            found.append((fact, i, broken))
    return sorted(found, key=lambda t: (t[0].id, t[1]))


def by_words(record: Record, tree: Tree) -> list[Finding]:
    """Symbol anchors that resolve only as the first whole word of their name (a file with no
    definition rule: Markdown, YAML, a language Stele does not read): a mention may be what they name."""
    found = []
    for fact in sorted(record.facts.values(), key=lambda f: f.id):
        if fact.status in CLOSED:
            continue
        for i, anchor in enumerate(fact.anchors):
            path, symbol = split(anchor)
            if symbol is None or is_glob(path) or not symbols.by_words(path):
                continue
            res = resolve(anchor, tree)
            if res.ok and res.lines:
                line = fact.doc.line_of("anchors", i) if fact.doc else 1
                found.append(Finding("word-anchor", fact.path, line,
                                     f"anchor {anchor} resolves only by the word {symbol!r} (line {res.lines[0]} "
                                     f"of {path}): Stele has no definition rule for this kind of file, so it may "
                                     "name a mention; anchor the file alone if the symbol is not a definition",
                                     fact.id))
    return found


def check(record: Record, tree: Tree) -> list[Finding]:
    findings = by_words(record, tree)
    for fact, i, broken in broken_anchors(record, tree):
        hint = f"; `stele doctor --fix` rewrites it to {broken.repair}" if broken.repair else \
            "; point it at the code it is about, or retire the fact"
        line = fact.doc.line_of("anchors", i) if fact.doc else 1
        findings.append(Finding("broken-anchor", fact.path, line,
                                f"anchor {broken.anchor} no longer resolves: {broken.why}{hint}", fact.id))
    return findings
