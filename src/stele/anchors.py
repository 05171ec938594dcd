"""Anchors: which facts are about which files.

An anchor is a repo-relative path, a glob (`src/api/**/*.py`) or `path::Symbol`. This module answers
the path question (does an anchor cover a file?) with no I/O; resolving symbols to line ranges lives
in `symbols.py`.
"""
from __future__ import annotations

import re
from functools import lru_cache

GLOB_CHARS = frozenset("*?[")


def split(anchor: str) -> tuple[str, str | None]:
    """`src/a.py::Cls.m` -> ("src/a.py", "Cls.m"); a plain path has no symbol."""
    path, sep, symbol = anchor.partition("::")
    return normalize(path), (symbol if sep else None)


def normalize(path: str) -> str:
    path = path.replace("\\", "/").strip()
    while path.startswith("./"):
        path = path[2:]
    return path.rstrip("/") if path not in ("", "/") else path


def is_glob(path: str) -> bool:
    return any(c in GLOB_CHARS for c in path)


@lru_cache(maxsize=4096)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    """Shell-style glob where `**` spans directories and `*` does not (fnmatch lets `*` cross `/`)."""
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
        return bool(_glob_regex(anchor_path).match(file_path))
    return file_path == anchor_path or file_path.startswith(anchor_path + "/")


def covers(anchor: str, file_path: str) -> bool:
    return path_matches(split(anchor)[0], file_path)


def about(anchor: str, path: str) -> bool:
    """Is the anchor about `path`, or (when `path` is a folder) about something inside it?"""
    want = normalize(path)
    return covers(anchor, want) or path_matches(want, split(anchor)[0])
