"""The anchors table: which facts are anchored where, answered without parsing 10k fact files.

The pre-commit hook must answer "which facts are anchored to these files?" in well under 300 ms with
10k facts; parsing 10k YAML frontmatters takes seconds and even loading them all from a JSON cache
takes ~90 ms. So the headers (id, kind, title, status, anchors) live in a derived SQLite file,
`.stele/index/anchors.sqlite`, with anchors keyed by path (globs by the folder they cannot leave): a
lookup reads a few pages. Freshness is per file, by (mtime_ns, size): a run stats every fact file,
compares one fingerprint of all of them, and re-parses only files that changed. Like git's index, a
file modified within two seconds of the table's own update is "racy" (a same-size edit in the same
clock tick would look unchanged) and is re-read next time. The file is derived: delete it at will.

`facts_anchored_to()` is the one question callers ask; when the retrieval index grows an anchors table,
it can answer it instead and this module goes away.
"""
from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from .anchors import AnchorIndex, glob_regex, is_glob, literal_dir, normalize, split
from .project import Project

TABLE_FILE = "anchors.sqlite"
SCHEMA_VERSION = "1"
RACY_NS = 2_000_000_000
_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE files (rel TEXT PRIMARY KEY, mtime INTEGER, size INTEGER);
CREATE TABLE facts (rel TEXT PRIMARY KEY, id TEXT, kind TEXT, title TEXT, status TEXT, priority TEXT);
CREATE TABLE anchors (key TEXT, pattern TEXT, anchor TEXT, rel TEXT, pos INTEGER);
CREATE INDEX anchors_key ON anchors (key);
CREATE INDEX anchors_rel ON anchors (rel);
"""


@dataclass(frozen=True)
class FactHead:
    """What anchor lookups need of a fact, without its body."""
    id: str
    kind: str
    title: str
    status: str
    priority: str
    path: str
    anchors: tuple[str, ...]

    @classmethod
    def of(cls, fact) -> "FactHead":
        return cls(fact.id, fact.kind, fact.title, fact.status, fact.priority, fact.path, tuple(fact.anchors))


def scan(memory_dir: Path, root: Path) -> dict[str, tuple[int, int]]:
    """rel path -> (mtime_ns, size) of every candidate fact file (the set `record.fact_files` reads)."""
    found: dict[str, tuple[int, int]] = {}
    if not memory_dir.is_dir():
        return found
    todo = [(memory_dir, memory_dir.relative_to(root).as_posix())]
    while todo:
        folder, rel = todo.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            if entry.is_dir():
                todo.append((Path(entry.path), f"{rel}/{entry.name}"))
            elif entry.name.endswith(".md") and entry.name.lower() != "readme.md" and entry.is_file():
                st = entry.stat()
                found[f"{rel}/{entry.name}"] = (st.st_mtime_ns, st.st_size)
    return found


def _fingerprint(stats: dict[str, tuple[int, int]], memory_dir: str) -> str:
    text = repr((SCHEMA_VERSION, memory_dir, sorted(stats.items())))  # repr: C-speed, ~10x a join
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def _parse_head(root: Path, rel: str) -> FactHead | None:
    from .model import parse_fact
    from .record import looks_like_fact

    try:
        text = (root / rel).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if not looks_like_fact(text):
        return None
    fact, _ = parse_fact(text, rel)
    return FactHead.of(fact) if fact is not None else None


def _key(anchor: str) -> tuple[str, str | None]:
    """(lookup key, glob pattern or None): a path anchor by its path, a glob by its fixed folder."""
    path, _ = split(anchor)
    return (literal_dir(path), path) if is_glob(path) else (path, None)


class AnchorTable:
    """The SQLite-backed table. `lookup` has the same contract as `AnchorIndex.lookup`."""

    def __init__(self, db) -> None:
        self.db = db

    def lookup(self, file_path: str) -> list[tuple[str, FactHead]]:
        file_path = normalize(file_path)
        chain = [file_path]
        while "/" in chain[-1]:
            chain.append(chain[-1].rsplit("/", 1)[0])
        chain.append("")
        marks = ",".join("?" * len(chain))
        rows = self.db.execute(
            "SELECT a.pattern, a.anchor, f.id, f.kind, f.title, f.status, f.priority, f.rel FROM anchors a "
            f"JOIN facts f ON f.rel = a.rel WHERE a.key IN ({marks}) ORDER BY a.rel, a.pos", chain).fetchall()
        out = []
        for pattern, anchor, *head in rows:
            if pattern is None or glob_regex(pattern).match(file_path):
                out.append((anchor, FactHead(*head, anchors=())))
        return out

    def heads(self) -> list[FactHead]:
        anchors: dict[str, list[str]] = {}
        for rel, anchor in self.db.execute("SELECT rel, anchor FROM anchors ORDER BY rel, pos"):
            anchors.setdefault(rel, []).append(anchor)
        rows = self.db.execute("SELECT id, kind, title, status, priority, rel FROM facts ORDER BY rel")
        return [FactHead(*row, tuple(anchors.get(row[-1], ()))) for row in rows]


def _connect(path: Path | None):
    import sqlite3

    db = sqlite3.connect(str(path) if path else ":memory:", timeout=5, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL" if path else "PRAGMA journal_mode=OFF")
    if db.execute("SELECT count(*) FROM sqlite_master WHERE name='meta'").fetchone()[0] == 0:
        db.executescript(_SCHEMA)
    return db


def _refresh(db, project: Project, stats: dict[str, tuple[int, int]], fingerprint: str) -> None:
    meta = dict(db.execute("SELECT key, value FROM meta"))
    racy = set(meta.get("racy", "").split("\0")) - {""}
    if meta.get("fingerprint") == fingerprint and not racy:
        return
    known = {rel: (m, s) for rel, m, s in db.execute("SELECT rel, mtime, size FROM files")}
    stale = [rel for rel, st in stats.items() if known.get(rel) != st or rel in racy]
    gone = [rel for rel in known if rel not in stats]
    now = time.time_ns()
    db.execute("BEGIN IMMEDIATE")
    try:
        for rel in gone + stale:
            for table in ("files", "facts", "anchors"):
                db.execute(f"DELETE FROM {table} WHERE rel = ?", (rel,))
        for rel in stale:
            mtime, size = stats[rel]
            db.execute("INSERT INTO files VALUES (?, ?, ?)", (rel, mtime, size))
            head = _parse_head(project.root, rel)
            if head is None:
                continue
            db.execute("INSERT INTO facts VALUES (?, ?, ?, ?, ?, ?)",
                       (rel, head.id, head.kind, head.title, head.status, head.priority))
            db.executemany("INSERT INTO anchors VALUES (?, ?, ?, ?, ?)",
                           [(*_key(a), a, rel, i) for i, a in enumerate(head.anchors)])
        still_racy = [rel for rel, (m, _) in stats.items() if m >= now - RACY_NS]
        db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                       [("fingerprint", fingerprint), ("racy", "\0".join(still_racy))])
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def table(project: Project) -> AnchorTable:
    """The fresh anchors table of `project` (in memory when `.stele/` is missing or unwritable)."""
    import sqlite3

    stats = scan(project.memory_dir, project.root)
    fingerprint = _fingerprint(stats, project.config["memory_dir"])
    if project.stele_dir.is_dir():
        path = project.index_dir / TABLE_FILE
        for _ in range(2):
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                return _open(path, project, stats, fingerprint)
            except (sqlite3.Error, OSError):
                _remove(path)  # corrupt, or from another version: it is derived, so start over
    return _open(None, project, stats, fingerprint)


def _open(path: Path | None, project: Project, stats: dict[str, tuple[int, int]],
          fingerprint: str) -> AnchorTable:
    db = _connect(path)
    _refresh(db, project, stats, fingerprint)
    return AnchorTable(db)


def _remove(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        try:
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        except OSError:
            pass


def heads(project: Project) -> list[FactHead]:
    return table(project).heads()


def index_of(facts: Iterable[FactHead]) -> AnchorIndex[FactHead]:
    """An in-memory index over facts already loaded (a record at some revision)."""
    index: AnchorIndex[FactHead] = AnchorIndex()
    for head in facts:
        for anchor in head.anchors:
            index.add(anchor, head)
    return index


def facts_anchored_to(project: Project, paths: Iterable[str]) -> dict[str, list[tuple[str, FactHead]]]:
    """file -> [(anchor, fact header)] for every anchor covering it (symbol anchors by their file)."""
    t = table(project)
    return {path: t.lookup(path) for path in paths}
