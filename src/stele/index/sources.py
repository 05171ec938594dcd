"""The sources of the index: which files they are, how fresh they are, and the items each holds.

`scan` and `digest` run on every read (a stat per file, no parsing); `read_items` runs only for the
files that changed. A fact file modified within `RACY_NS` of a refresh is "racy" (git's word):
rewritten in the same clock tick at the same size it would keep its (mtime, size), so the refresh
records a hash of its content and the next read checks it by content instead. Facts are parsed and
validated exactly as `stele doctor` does; a file that does not load is left out and reported. Session
logs are read whole, live and compacted (`archive/`).
"""
from __future__ import annotations

import os

from ..project import Project
from .items import Item, from_entry, from_fact

ARCHIVE_DIR = "archive"  # wal.ARCHIVE_DIR (not imported: wal.py is only needed when a log changed)
TEAM_DIR = "team"  # wal.TEAM_DIR: segments pulled from the team store, team/<session>/<seq>.jsonl
RACY_NS = 2_000_000_000  # the coarsest mtime in common use (FAT) is 2 s


def scan(project: Project) -> dict[str, tuple[int, int]]:
    """Every source file (fact candidates and WAL logs): repo-relative path -> (mtime_ns, size).

    This runs on every read, so it is plain `os.scandir` with paths built by concatenation."""
    out: dict[str, tuple[int, int]] = {}

    def walk(folder: str, rel: str, suffix: str, recurse: bool) -> None:
        try:
            entries = os.scandir(folder)
        except OSError:
            return
        with entries:
            for e in entries:
                name = e.name
                if name.startswith("."):
                    continue
                try:
                    if recurse and e.is_dir(follow_symlinks=False):
                        walk(e.path, f"{rel}{name}/", suffix, recurse)
                    elif name.endswith(suffix) and name.lower() != "readme.md" and e.is_file():
                        st = e.stat()
                        out[rel + name] = (st.st_mtime_ns, st.st_size)
                except OSError:
                    continue

    walk(str(project.memory_dir), project.rel(project.memory_dir).rstrip("/") + "/", ".md", True)
    wal_rel = project.rel(project.wal_dir).rstrip("/") + "/"
    walk(str(project.wal_dir), wal_rel, ".jsonl", False)
    walk(str(project.wal_dir / ARCHIVE_DIR), f"{wal_rel}{ARCHIVE_DIR}/", ".jsonl.gz", False)  # compacted logs
    walk(str(project.wal_dir / TEAM_DIR), f"{wal_rel}{TEAM_DIR}/", ".jsonl", True)  # the team's, pulled
    return out


def is_wal(project: Project, rel: str) -> bool:
    parent = (project.root / rel).parent
    return rel.endswith((".jsonl", ".jsonl.gz")) and (
        parent in (project.wal_dir, project.wal_dir / ARCHIVE_DIR) or parent.parent == project.wal_dir / TEAM_DIR)


def read_items(project: Project, rel: str, skipped: list[str]) -> list[Item]:
    """The items one source file holds now (none when unreadable or not a fact). A log that grew costs
    no record parser (PyYAML): the hooks append to logs on every turn."""
    path = project.root / rel
    if is_wal(project, rel):
        from ..session.sessions import is_bookkeeping
        from ..session.wal import ReadReport, read_file

        wal_report = ReadReport()
        items = [from_entry(e, rel) for e in read_file(path, wal_report) if not is_bookkeeping(e)]
        skipped += wal_report.skipped
        return items
    from ..record.load import looks_like_fact
    from ..record.model import parse_fact

    if path.is_symlink() and not project.contains(path):
        from ..record.load import OUTSIDE

        skipped.append(f"{rel}:1: {OUTSIDE}")
        return []
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        skipped.append(f"{rel}:1: cannot read the file ({e})")
        return []
    if not looks_like_fact(text):
        return []
    fact, problems = parse_fact(text, rel)
    errors = [p for p in problems if p.severity == "error"]
    if fact is None or errors:
        skipped += [str(p) for p in errors] or [f"{rel}:1: not a valid fact"]
        return []
    return [from_fact(fact)]


def racy(project: Project, stats: dict[str, tuple[int, int]], now_ns: int) -> dict[str, str]:
    """Fact files modified within RACY_NS before `now_ns` -> a hash of their content. (WAL logs are
    only appended to, so their size always changes.)"""
    return {p: content_hash(project, p) for p, (mtime, _) in stats.items()
            if mtime >= now_ns - RACY_NS and not is_wal(project, p)}


def rewritten(project: Project, hashes: dict[str, str]) -> list[str]:
    """Those of `hashes`' files whose content is no longer what was hashed."""
    return [p for p, h in hashes.items() if content_hash(project, p) != h]


def content_hash(project: Project, rel: str) -> str:
    import hashlib

    try:
        return hashlib.sha1((project.root / rel).read_bytes()).hexdigest()
    except OSError:
        return ""


def digest(stats: dict[str, tuple[int, int]]) -> str:
    """One hash of every source file's path, mtime and size: a fresh index is one comparison away.
    (In scan order: directory order only changes when a directory does, and a spurious mismatch
    costs one refresh that finds nothing to do.)"""
    import hashlib

    return hashlib.sha1(repr(stats).encode()).hexdigest()
