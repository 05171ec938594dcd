"""Anchors: which facts are about which files.

An anchor is a repo-relative path, a glob (`src/api/**/*.py`) or `path::Symbol`. This module answers
the path question with no I/O, and is the one place the answer is written: `path_matches` (does an
anchor cover a file?) and `inside` (does an anchor lie in a folder?). Both indexes of anchors, the
in-memory `AnchorIndex` below and the catalog's `anchors` table (`index/catalog.py`), file each anchor
under `filed_under(path)` and look a file up under its `ancestors`, so neither scans every anchor, and
both let `path_matches` and `inside` decide what the lookup found. Resolving symbols to line ranges
lives in `symbols.py`.
"""
from __future__ import annotations

import re
from functools import lru_cache

GLOB_CHARS = frozenset("*?[")
TYPE_CHECKING = False
if TYPE_CHECKING:  # `typing` is ~2 ms of a hook's imports: the checker reads a generic class, Python a plain one
    from typing import Generic, TypeVar

    T = TypeVar("T")

    class _Payloads(Generic[T]):
        pass
else:
    T = None

    class _Payloads:
        def __class_getitem__(cls, item):
            return cls


def split(anchor: str) -> tuple[str, str | None]:
    """`src/a.py::Cls.m` -> ("src/a.py", "Cls.m"); a plain path has no symbol."""
    path, sep, symbol = anchor.partition("::")
    return normalize(path), (symbol if sep else None)


def normalize(path: str) -> str:
    path = path.replace("\\", "/").strip()
    while path.startswith("./"):
        path = path[2:]
    return path.rstrip("/") if path not in ("", "/") else path


def leaves_root(path: str) -> str | None:
    """Why an anchor's path names no file of the repository (absolute, or through `..`), or None."""
    if path.startswith("/") or re.match(r"^[A-Za-z]:[\\/]", path):
        return "absolute path; write it relative to the repository root"
    if ".." in path.replace("\\", "/").split("/"):
        return "`..` leaves the repository; write it relative to the repository root"
    return None


def is_glob(path: str) -> bool:
    return any(c in GLOB_CHARS for c in path)


@lru_cache(maxsize=4096)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """Shell-style glob where `**` spans directories and `*` does not (fnmatch lets `*` cross `/`).
    Compiled once per pattern, for callers that match one pattern against many paths."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            end = pattern.find("]", i + 1)
            if end == -1:
                out.append(re.escape(c))
                i += 1
            else:
                body = pattern[i + 1:end].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = end + 1
        else:
            out.append(re.escape(c))
            i += 1
    return re.compile("^" + "".join(out) + "$")


def path_matches(anchor_path: str, file_path: str) -> bool:
    """Does the path part of an anchor cover `file_path`? A directory anchor covers what is inside it."""
    anchor_path, file_path = normalize(anchor_path), normalize(file_path)
    if is_glob(anchor_path):
        return bool(glob_regex(anchor_path).match(file_path))
    return file_path == anchor_path or file_path.startswith(anchor_path + "/")


def covers(anchor: str, file_path: str) -> bool:
    return path_matches(split(anchor)[0], file_path)


def inside(anchor_path: str, folder: str) -> bool:
    """Does an anchor's path (a glob's pattern) lie in `folder`, or is it the folder? "" is the
    repository: every anchor lies in it."""
    folder = normalize(folder)
    return not folder or path_matches(folder, anchor_path)


def filed_under(anchor_path: str) -> str:
    """The key an index files an anchor under: a plain path under itself, a glob under the folder it
    cannot leave. Every anchor that can cover a file is filed under one of the file's `ancestors`."""
    anchor_path = normalize(anchor_path)
    return literal_dir(anchor_path) if is_glob(anchor_path) else anchor_path


def literal_dir(pattern: str) -> str:
    """The folder a glob cannot leave: `src/api/**/*.py` -> `src/api`, `*.md` -> ``."""
    parts = normalize(pattern).split("/")
    fixed = []
    for part in parts[:-1]:
        if is_glob(part):
            break
        fixed.append(part)
    return "/".join(fixed)


def ancestors(path: str) -> list[str]:
    """`a/b/c.py` -> [`a/b/c.py`, `a/b`, `a`, ``]; `` -> [``]."""
    out = [path]
    while "/" in path:
        path = path.rsplit("/", 1)[0]
        out.append(path)
    return out + [""] if path else out


class AnchorIndex(_Payloads[T]):
    """Anchors -> payloads, answering "what is anchored to this file?" without scanning every anchor:
    the same lookup as the catalog's, over facts in memory (a record at a revision, or no index).
    10k facts and 20 files: ~1 ms."""

    def __init__(self) -> None:
        self._filed: dict[str, list[tuple[str, str, T]]] = {}  # key -> [(anchor path, anchor, payload)]

    def add(self, anchor: str, payload: T) -> None:
        path, _ = split(anchor)
        self._filed.setdefault(filed_under(path), []).append((path, anchor, payload))

    def lookup(self, file_path: str) -> list[tuple[str, T]]:
        """(anchor, payload) for every anchor covering `file_path`: the file's own first, then each
        folder up to the repository's, each in the order added."""
        file_path = normalize(file_path)
        return [(anchor, payload) for key in ancestors(file_path)
                for path, anchor, payload in self._filed.get(key, ()) if path_matches(path, file_path)]


def about(anchor: str, path: str) -> bool:
    """Is the anchor about `path`, or (when `path` is a folder) about something inside it?"""
    want = normalize(path)
    return covers(anchor, want) or inside(split(anchor)[0], want)
