"""The repository's own vocabulary: the terms of its tracked paths (folder and file names, split and
analyzed as the text index analyzes a prompt), so retrieval can tell a prompt about a part of the
repository the record never mentions (`retrieve.unrecorded`).

Derived and cached in `.stele/index/repo-words`, keyed by the stamp of git's index file (`.git/index`
changes whenever a tracked path is added, removed or renamed, and on every checkout), so a read costs
one stat and, when the tree changed, one `git ls-files`. What is tracked is what every clone of a commit
agrees on: untracked and ignored files never count, and neither do the record itself (`memory_dir`) or
`.stele/`.
"""
from __future__ import annotations

import re
import subprocess
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from ..project import Project
    from .text import TextIndex

CACHE = "repo-words"
VERSION = "1"  # bump when what is kept changes
_NAME = re.compile(r"[A-Za-z0-9_]+")
_MEMO: dict[tuple[str, str], frozenset[str]] = {}


def stamp(project: Project) -> str | None:
    """What the vocabulary is valid for: git's index file and the record folder, or None without one."""
    try:
        st = (project.git_dir / "index").stat()
    except OSError:
        return None
    return f"{VERSION} {st.st_mtime_ns} {st.st_size} {st.st_ino} {project.config['memory_dir']}"


def terms(project: Project, text: TextIndex) -> frozenset[str]:
    """The analyzed terms of the repository's tracked paths (empty outside a git work tree with an
    index, or when git cannot be run)."""
    key = stamp(project)
    if key is None:
        return frozenset()
    memo = (str(project.root), key)
    if memo in _MEMO:
        return _MEMO[memo]
    cache = project.index_dir / CACHE
    found = _read(cache, key)
    if found is None:
        found = _build(project, text)
        _write(cache, key, found)
    _MEMO.clear()  # one project per process in practice: keep one
    _MEMO[memo] = found
    return found


def _read(cache: Path, key: str) -> frozenset[str] | None:
    try:
        data = cache.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    head, _, body = data.partition("\n")
    return frozenset(body.split()) if head == key else None


def _write(cache: Path, key: str, found: frozenset[str]) -> None:
    from .. import atomic

    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        atomic.write(cache, key + "\n" + "\n".join(sorted(found)) + "\n", durable=False)
    except OSError:
        pass  # a read-only index folder: computed again next time


def _build(project: Project, text: TextIndex) -> frozenset[str]:
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=project.root, capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return frozenset()
    if out.returncode:
        return frozenset()
    memory = str(project.config["memory_dir"]).strip("/") + "/"
    names: set[str] = set()
    for raw in out.stdout.split(b"\0"):
        path = raw.decode("utf-8", "replace")
        if not path or path.startswith((memory, ".stele/")):
            continue
        names.update(_NAME.findall(path))
    found: set[str] = set()
    for name in names:
        found.update(text.terms(name))
    return frozenset(found)
