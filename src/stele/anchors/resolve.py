"""Does an anchor still point at something? Resolution against the working tree or any commit.

A tree is anything with `files()` (sorted), `under(folder)`, `exists(path)` and `read(path)`:
`WorkTree` (what `doctor` checks) and `CommitTree` (what `review` compares). Resolution is the same for
both, so "broken at HEAD" and "broken in my checkout" can never disagree. A glob is matched only
against the files under the folder it cannot leave, found by bisection in the sorted listing: doctor
resolves thousands of anchors against thousands of files.
"""
from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Protocol

from .. import gitrepo, treefile
from . import symbols
from .paths import glob_regex, is_glob, leaves_root, literal_dir, split


class Tree(Protocol):
    def files(self) -> list[str]: ...

    def under(self, folder: str) -> list[str]: ...

    def exists(self, path: str) -> bool: ...

    def read(self, path: str) -> str | None: ...


class _Listing:
    """`under()` for a tree whose `files()` is sorted."""

    def files(self) -> list[str]:
        raise NotImplementedError

    def under(self, folder: str) -> list[str]:
        """The files inside `folder` (every file for ``), by bisection."""
        files = self.files()
        if not folder:
            return files
        prefix = folder.rstrip("/") + "/"
        return files[bisect_left(files, prefix):bisect_left(files, prefix + "\U0010ffff")]


class WorkTree(_Listing):
    """The checkout: tracked and untracked-but-not-ignored files, read from disk."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._texts: dict[str, str | None] = {}

    @cached_property
    def _files(self) -> list[str]:
        return gitrepo.ls_files(self.root)

    def files(self) -> list[str]:
        return self._files

    def exists(self, path: str) -> bool:
        return bool(path) and not leaves_root(path) and (self.root / path).exists()

    def read(self, path: str) -> str | None:
        if path not in self._texts:  # `../x`, `/etc/x` or a link out: outside the root, not read
            try:
                self._texts[path] = treefile.read_text(self.root / path, errors="replace", root=self.root)
            except OSError:
                self._texts[path] = None
        return self._texts[path]


class CommitTree(_Listing):
    """The files of one commit, read through `git cat-file` (prefetch in one call with `prefetch`)."""

    def __init__(self, root: Path, rev: str) -> None:
        self.root, self.rev = root, rev
        self._texts: dict[str, str | None] = {}

    @cached_property
    def _blobs(self) -> dict[str, str]:
        return gitrepo.tree_blobs(self.root, self.rev)

    @cached_property
    def _files(self) -> list[str]:
        return sorted(self._blobs)

    @cached_property
    def _paths(self) -> set[str]:
        found = set(self._files)
        for f in self._files:
            while "/" in f:
                f = f.rsplit("/", 1)[0]
                found.add(f)
        return found

    def files(self) -> list[str]:
        return self._files

    def exists(self, path: str) -> bool:
        return path in self._paths

    def prefetch(self, paths: list[str]) -> None:
        missing = [p for p in dict.fromkeys(paths) if p not in self._texts and p in self._blobs]
        blobs = gitrepo.read_blobs(self.root, [self._blobs[p] for p in missing])  # by id: see tree_blobs
        for p in missing:
            blob = blobs.get(self._blobs[p])
            self._texts[p] = blob.decode("utf-8", "replace") if blob is not None else None

    def read(self, path: str) -> str | None:
        if path not in self._texts:
            self.prefetch([path])
        return self._texts.get(path)


@dataclass(frozen=True)
class Resolution:
    ok: bool
    problem: str = ""  # why not: "file gone", "symbol gone", "no match"
    lines: tuple[int, int] | None = None
    by_words: bool = False  # the symbol was found as a word, not a definition (no rule for the language)


def resolve(anchor: str, tree: Tree) -> Resolution:
    path, symbol = split(anchor)
    if is_glob(path):
        rx = glob_regex(path)
        hit = any(rx.match(f) for f in tree.under(literal_dir(path)))
        return Resolution(True) if hit else Resolution(False, "no match")
    if not tree.exists(path):
        return Resolution(False, "file gone")
    if symbol is None:
        return Resolution(True)
    text = tree.read(path)
    lines = symbols.find(text, symbol, path) if text is not None else None
    return Resolution(True, lines=lines, by_words=symbols.by_words(path)) if lines else \
        Resolution(False, "symbol gone")


def explain_missing(path: str, tree: Tree, renames: dict[str, tuple[str, str]]) -> tuple[str, str] | None:
    """(new path, commit) when git renames explain where a missing file or folder went."""
    seen, current, where = {path}, path, ""
    while current in renames:
        current, where = renames[current]
        if current in seen:
            break
        seen.add(current)
        if tree.exists(current):
            return current, where
    prefix = path.rstrip("/") + "/"
    for old, (new, commit) in renames.items():  # a folder moved: some file inside it was renamed
        if old.startswith(prefix):
            rest = old[len(prefix):]
            if new.endswith("/" + rest) and tree.exists(new[: -len(rest) - 1]):
                return new[: -len(rest) - 1], commit
    return None
