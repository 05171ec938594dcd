"""The repository's own vocabulary: the terms of its tracked paths (folder and file names, split and
analyzed as the text index analyzes a prompt), so retrieval can tell a prompt about a part of the
repository the record never mentions (`retrieve.unrecorded`).

Derived and cached in `.stele/index/repo-words`, keyed by the commit checked out (read from git's
files, no process), so a read costs two small file reads and a binary search per word; after a new
commit one `git ls-tree`, and the words are analyzed again only when the commit's paths changed. The paths of the commit are what every clone of it agrees on: staged,
untracked and ignored files never count, and neither do the record itself (`memory_dir`) or `.stele/`.
"""
from __future__ import annotations

import re
import subprocess
from collections.abc import Iterable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

    from ..project import Project
    from .text import TextIndex

CACHE = "repo-words"
VERSION = "1"  # bump when what is kept changes
_NAME = re.compile(r"[A-Za-z0-9_]+")
_MEMO: dict[tuple[str, str], bytes] = {}


def stamp(project: Project) -> str | None:
    """What the vocabulary is valid for: the commit checked out and the record folder, or None before
    the first commit. Committed paths only: the same commit gives the same vocabulary on every clone."""
    from ..gitrepo import head_id

    head = head_id(project.git_dir, project.git_common_dir)
    return None if head is None else f"{VERSION} {head} {project.config['memory_dir']}"


def known(project: Project, text: TextIndex, terms: Iterable[str]) -> set[str]:
    """Which of `terms` (analyzed) the paths of the commit checked out hold. None before the first
    commit, or when git cannot be run."""
    table = _table(project, text)
    return {t for t in terms if _holds(table, t.encode("utf-8"))}


def _table(project: Project, text: TextIndex) -> bytes:
    """The sorted terms, one a line, as cached (built again when the commit's paths changed)."""
    key = stamp(project)
    if key is None:
        return b""
    memo = (str(project.root), key)
    if memo in _MEMO:
        return _MEMO[memo]
    cache = project.index_dir / CACHE
    head, digest, found = _read(cache)
    if head != key:
        import hashlib  # only when the commit moved: a hook's usual answer loads no libcrypto

        paths = _paths(project)
        now = hashlib.sha1(b"\0".join(p.encode("utf-8") for p in paths)).hexdigest()
        if now != digest:  # most commits change files, not names: then only the stamp is rewritten
            found = _terms(paths, text)
        _write(cache, key, now, found)
    _MEMO.clear()  # one project per process in practice: keep one
    _MEMO[memo] = found
    return found


def _holds(table: bytes, term: bytes) -> bool:
    """Binary search of the sorted lines of `table` for `term`."""
    lo, hi = 0, len(table)
    while lo < hi:
        mid = (lo + hi) // 2
        start = table.rfind(b"\n", 0, mid) + 1
        end = table.find(b"\n", start)
        end = len(table) if end < 0 else end
        line = table[start:end]
        if line == term:
            return True
        if line < term:
            lo = end + 1
        else:
            hi = start
    return False


def _read(cache: Path) -> tuple[str, str, bytes]:
    """(stamp, digest of the paths, terms) as cached; empty when there is no readable cache."""
    try:
        data = cache.read_bytes()
    except OSError:
        return "", "", b""
    head, _, rest = data.partition(b"\n")
    digest, _, body = rest.partition(b"\n")
    try:
        return head.decode("utf-8"), digest.decode("ascii"), body
    except UnicodeDecodeError:
        return "", "", b""


def _write(cache: Path, key: str, digest: str, found: bytes) -> None:
    from .. import atomic

    try:
        atomic.write(cache, f"{key}\n{digest}\n".encode() + found, durable=False)
    except OSError:
        pass  # a read-only index folder: built again next time


def _paths(project: Project) -> list[str]:
    """The paths of the commit checked out, but the record's and `.stele/`'s (none when git fails)."""
    try:
        out = subprocess.run(["git", "ls-tree", "-r", "-z", "--name-only", "HEAD"], cwd=project.root,
                             capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return []
    if out.returncode:
        return []
    memory = str(project.config["memory_dir"]).strip("/") + "/"
    return [p for p in out.stdout.decode("utf-8", "replace").split("\0")
            if p and not p.startswith((memory, ".stele/"))]


def _terms(paths: list[str], text: TextIndex) -> bytes:
    """The terms of the paths' words, analyzed in one pass, sorted, one a line."""
    names = sorted(set(_NAME.findall("\n".join(paths))))
    found = sorted({t.encode("utf-8") for t in text.terms("\n".join(names))} - {b""})
    return b"".join(t + b"\n" for t in found)
