"""The sources of the index: which files they are, how fresh they are, and the items each holds.

`scan` runs on every read, so it is shaped for speed: one `stat` per file and no parsing, with a result
compared with the manifest as a few byte strings (`Scan.parts`), without building a dict or hashing. A
stat per file is the price of freshness without an editor's cooperation: an editor that saves in
place (VS Code does) changes only the file, not its folder, so folder mtimes or a journal of Stele's
own writes would miss it. A file's stamp is (mtime_ns, size, inode): a save by rename, a `git
checkout` or a `mv` over it gives a new inode even when mtime and size come out the same.

What folder mtimes do tell is which folders gained or lost a name (a new file, a delete, a rename
over a file, git writing a file anew), so a folder is listed (`scandir`) only when its own (mtime,
inode) differs from what the last listing recorded, or that listing was taken within RACY_NS of the
folder's last change (a change in the same clock tick would keep the mtime); otherwise its files
are stat'ed by the names kept in `LISTING`, through the folder's descriptor. That saves the listing,
about a third of the scan's system time; the stat of every file stays. (What it cannot see: a tool
that adds a file and then sets the folder's mtime back to exactly the nanosecond recorded, which
`rsync -t` of an identical tree aside, nothing does.)

`read_items` runs only for the files that changed. A fact file modified within `RACY_NS` of a refresh
is "racy" (git's word): rewritten in the same clock tick at the same size it would keep its stamp, so
the refresh records a hash of its content and the next read checks it by content instead. Facts are
parsed and validated exactly as `stele doctor` does; a file that does not load is left out and
reported. Session logs are read whole (live, compacted in `archive/`, pulled from the team store in
`team/`), or from where the last refresh stopped when a live log only grew (`read_items(start=...)`).

Adding a source is one line in `folders()` and, if its files are not facts or session logs, one branch
in `read_items`.
"""
from __future__ import annotations

import marshal
import os
import time
from array import array
from collections.abc import Iterable
from pathlib import Path

from ..project import Project
from . import early
from .items import Item, from_entry, from_fact

ARCHIVE_DIR = "archive"  # wal.ARCHIVE_DIR (not imported: wal.py is only needed when a log changed)
TEAM_DIR = "team"  # wal.TEAM_DIR: segments pulled from the team store, team/<session>/<seq>.jsonl
RACY_NS = 2_000_000_000  # the coarsest mtime in common use (FAT) is 2 s
LISTING = "listing.marshal"  # each source folder's stamp and names, as the last listing found them
LISTING_VERSION = 1
PART = 1024  # paths per part of the manifest (`Scan.parts`)
Stamp = tuple  # (mtime_ns, size, inode) of one source file


def folders(project: Project) -> list[tuple[str, str, str, bool]]:
    """Where the sources are: (folder, its repo-relative prefix, file suffix, recurse into subfolders)."""
    wal_rel = project.rel(project.wal_dir).rstrip("/") + "/"
    return [
        (str(project.memory_dir), project.rel(project.memory_dir).rstrip("/") + "/", ".md", True),  # facts
        (str(project.wal_dir), wal_rel, ".jsonl", False),  # live session logs
        (str(project.wal_dir / ARCHIVE_DIR), f"{wal_rel}{ARCHIVE_DIR}/", ".jsonl.gz", False),  # compacted
        (str(project.wal_dir / TEAM_DIR), f"{wal_rel}{TEAM_DIR}/", ".jsonl", True),  # the team's, pulled
    ]


class Scan:
    """Every source file's repo-relative path and stamp, in scan order. `parts` is the scan as the
    catalog's manifest keeps it: equal parts mean nothing changed (a file's folder order only changes
    when the folder does, and a spurious difference costs one refresh that finds nothing to do)."""

    __slots__ = ("_parts", "_where", "numbers", "paths")

    def __init__(self, paths: list[str], numbers: array) -> None:
        self.paths = paths
        self.numbers = numbers  # three per path: mtime_ns, size, inode
        self._where: dict[str, int] | None = None
        self._parts: list[bytes] | None = None

    @property
    def parts(self) -> list[bytes]:
        """The scan in blobs of PART paths each (`_part`), so that a refresh after a session log grew
        rewrites the one blob that holds it, not the stamps of 50,000 files (3 MB, and as much again
        when SQLite checkpoints it)."""
        if self._parts is None:
            paths, n = self.paths, self.numbers
            self._parts = [_part(paths[i:i + PART], n[3 * i:3 * (i + PART)])
                           for i in range(0, len(paths), PART)] or [_part([], n[:0])]
        return self._parts

    def stats(self) -> dict[str, Stamp]:
        n = self.numbers
        return {p: (n[3 * i], n[3 * i + 1], n[3 * i + 2]) for i, p in enumerate(self.paths)}

    def stamps(self, paths: Iterable[str]) -> dict[str, Stamp]:
        """The stamps of those of `paths` this scan found (a refresh needs only the changed ones:
        a dict of every file costs ~10 ms at 10,000 facts)."""
        paths = list(paths)
        if self._where is None or not all(p in self._where for p in paths):
            self._where = {p: i for i, p in enumerate(self.paths)}
        where, n = self._where, self.numbers
        return {p: (n[3 * i], n[3 * i + 1], n[3 * i + 2]) for p in paths if (i := where.get(p)) is not None}

    def modified_since(self, ns: int) -> list[str]:
        """The paths whose mtime is `ns` or later (the racy candidates), read off the array."""
        mtimes = self.numbers[0::3]
        if not mtimes or max(mtimes) < ns:  # the usual answer, in C
            return []
        return [self.paths[i] for i, m in enumerate(mtimes) if m >= ns]

    def changed_since(self, old_parts: list[bytes] | None) -> tuple[list[str], list[str]] | None:
        """(paths added or whose stamp differs, paths gone) against `old_parts`, an earlier scan's
        `parts`; None when there are none. A part equal to this scan's is skipped unread, and one
        that holds the same paths (a log grew, a fact was edited in place) has its stamps compared;
        from the first part whose paths differ (a new session log, a fact added or deleted), the rest
        of both scans is compared as a whole (`_diff`)."""
        if not old_parts:
            return None
        new = self.parts
        out: list[str] = []
        found: dict[str, int] = {}  # where the changed paths are in this scan, for `stamps`
        self._where = found
        for k in range(min(len(old_parts), len(new))):  # parts before k hold PART paths, in both
            if old_parts[k] == new[k]:
                continue
            old = _unpart(old_parts[k])
            if old is None:
                return None
            start = k * PART
            names = self.paths[start:start + PART]
            if old[0] != names:
                break
            _diff(old[0], old[1], names, self.numbers[3 * start:3 * (start + PART)], start, out, found)
        else:
            if len(old_parts) == len(new):
                return out, []
            k = min(len(old_parts), len(new))
        rest = [_unpart(b) for b in old_parts[k:]]
        old_paths: list[str] = []
        old_numbers = array("q")
        for r in rest:
            if r is None:
                return None
            old_paths += r[0]
            old_numbers.extend(r[1])
        start = k * PART
        gone = _diff(old_paths, old_numbers, self.paths[start:], self.numbers[3 * start:], start, out, found)
        return out, gone


def _part(paths: list[str], numbers: array) -> bytes:
    return "\0".join(paths).encode("utf-8", "surrogateescape") + b"\0\0" + numbers.tobytes()


def _unpart(blob: bytes) -> tuple[list[str], array] | None:
    """A part's (paths, stamps), or None when it is not one."""
    cut = blob.find(b"\0\0") if blob[:2] != b"\0\0" else 0
    if cut < 0:
        return None
    paths = blob[:cut].decode("utf-8", "surrogateescape").split("\0") if cut else []
    numbers = array("q")
    numbers.frombytes(blob[cut + 2:])
    return (paths, numbers) if len(numbers) == 3 * len(paths) else None


def _diff(old_paths: list[str], old: array, paths: list[str], new: array, base: int, out: list[str],
          found: dict[str, int]) -> list[str]:
    """Add to `out` the paths of `paths` (at `base` in the whole scan) that `old_paths` lacks or whose
    stamp differs, and return the paths only `old_paths` has. Where both list the same paths in the
    same order, halves that differ are split until the differing stamps are found: one change among
    50,000 files costs a few dozen comparisons of array slices, not a dict of every file. Where the
    lists differ, only the stretch between their common head and common tail is compared name by
    name; head and tail are split as above."""

    def split(lo: int, hi: int, shift: int) -> None:  # in whole files: three numbers each
        if old[3 * (lo + shift):3 * (hi + shift)] == new[3 * lo:3 * hi]:
            return
        if hi - lo == 1:
            out.append(paths[lo])
            found[paths[lo]] = base + lo
            return
        mid = (lo + hi) // 2
        split(lo, mid, shift)
        split(mid, hi, shift)

    if old_paths == paths:
        split(0, len(paths), 0)
        return []
    head = _head(old_paths, paths)
    tail = _tail(old_paths[head:], paths[head:])
    split(0, head, 0)
    if tail:
        split(len(paths) - tail, len(paths), len(old_paths) - len(paths))
    old_mid = old_paths[head:len(old_paths) - tail]
    where = {p: head + j for j, p in enumerate(old_mid)}
    for i in range(head, len(paths) - tail):
        p = paths[i]
        j = where.get(p)
        if j is None or old[3 * j:3 * j + 3] != new[3 * i:3 * i + 3]:
            out.append(p)
            found[p] = base + i
    now = set(paths[head:len(paths) - tail])
    return [p for p in old_mid if p not in now]


def _head(a: list[str], b: list[str]) -> int:
    """How many paths `a` and `b` share at their start: found by halving, each step one list
    comparison in C."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _tail(a: list[str], b: list[str]) -> int:
    """How many paths `a` and `b` share at their end."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[len(a) - mid:] == b[len(b) - mid:]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def is_source(name: str, suffix: str) -> bool:
    """Whether a file of this name in a source folder is a source (a fact, a session log)."""
    return name[0] != "." and name.endswith(suffix) and not (suffix == ".md" and name.lower() == "readme.md")


# In a process forked by the resident server (`cli/resident/`): (root, folders, its live scan), which
# `scan` returns instead of stat-ing every file when the project and its folders are the same (`adopt`).
_adopted: tuple[Path, list, Scan] | None = None


def adopt(root: Path, roots: list, live: Scan) -> None:
    """The seam for the resident server's forked children: from now on, in this process, `scan` of the
    project at `root` watching `roots` returns `live` (the server's inotify-kept scan, `index/watch.py`)
    instead of stat-ing every file."""
    global _adopted
    _adopted = (root, roots, live)


def scan(project: Project) -> Scan:
    """Every source file and its stamp. In a process forked by the resident server, that server's
    live scan (`index/watch.py`), when it watches this project's folders. Otherwise: a folder whose
    own stamp (mtime, inode) is what the last listing recorded, and that was listed more than RACY_NS
    after it last changed, is not listed again: its files are stat'ed by the names the listing holds
    (`LISTING`, in the index folder)."""
    where_ = folders(project)
    if _adopted is not None and _adopted[0] == project.root and _adopted[1] == where_:
        return _adopted[2]
    started = early.take(project, where_)  # the scan a hook forked at its start (`scan_early`)
    if started is not None:
        return Scan(*started)
    paths: list[str] = []
    numbers = array("q")
    where = project.index_dir / LISTING
    old = _load_listing(where)
    new: dict[str, tuple] = {}
    now = time.time_ns()  # before any folder is read: a change during the scan is newer than this
    changed = False
    for folder, rel, suffix, recurse in where_:
        changed |= _walk(folder, rel, suffix, recurse, paths, numbers, old, new, now)
    if (changed or new.keys() != old.keys()) and where.parent.is_dir():
        from .. import atomic

        try:
            atomic.write(where, marshal.dumps((LISTING_VERSION, new)), durable=False)
        except OSError:
            pass  # a listing that cannot be kept costs the next scan a full listing, nothing else
    return Scan(paths, numbers)


def scan_early(project: Project) -> bool:
    """Start `scan(project)` in a forked child, for the first `scan` of this process to take
    (`index/early.py` says when it pays and when it is not done); whether it was started."""
    try:
        where = folders(project)
    except Exception:  # a config that does not load: the hook reports it where it reads it
        return False
    return early.start(project, scan, where)


def _load_listing(where: Path) -> dict[str, tuple]:
    try:
        version, folders_ = marshal.loads(where.read_bytes())
    except (OSError, ValueError, EOFError, TypeError):
        return {}
    return folders_ if version == LISTING_VERSION and isinstance(folders_, dict) else {}


def _walk(folder: str, rel: str, suffix: str, recurse: bool, paths: list[str], numbers: array,
          old: dict[str, tuple], new: dict[str, tuple], now: int) -> bool:
    """Add `folder`'s source files (and its subfolders', when `recurse`); whether its listing changed."""
    try:
        here = os.stat(folder)
    except OSError:
        return folder in old
    add, extend = paths.append, numbers.extend
    known = old.get(folder)
    if (known is not None and known[0] == here.st_mtime_ns and known[1] == here.st_ino
            and known[2] - known[0] > RACY_NS):
        names, below = known[3], known[4]
        try:
            fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            return True
        try:
            for name in names:
                try:
                    st = os.stat(name, dir_fd=fd)  # follows a symlink, as reading the file will
                except OSError:  # vanished (its folder changed too) or a dangling link
                    continue
                if st.st_mode & 0o170000 == 0o100000:  # a regular file
                    add(rel + name)
                    extend((st.st_mtime_ns, st.st_size, st.st_ino))
        finally:
            os.close(fd)
        new[folder] = known
        changed = False
    else:
        names, below = [], []
        try:
            entries = os.scandir(folder)
        except OSError:
            return folder in old
        with entries:
            for e in entries:
                name = e.name
                if name[0] == ".":
                    continue
                try:
                    if is_source(name, suffix):
                        names.append(name)  # kept even when it cannot be stat'ed: a link may come to life
                        st = e.stat()
                        if st.st_mode & 0o170000 == 0o100000:
                            add(rel + name)
                            extend((st.st_mtime_ns, st.st_size, st.st_ino))
                    elif recurse and e.is_dir(follow_symlinks=False):
                        below.append(name)
                except OSError:  # vanished while we looked: as if it were not there
                    continue
        entry = (here.st_mtime_ns, here.st_ino, now, names, below)
        changed = known is None or known[:2] != entry[:2] or known[3] != names or known[4] != below or (
            known[2] - known[0] <= RACY_NS < now - here.st_mtime_ns)  # listed in the racy window, no longer
        new[folder] = known if known is not None and not changed else entry
    for name in below:
        changed |= _walk(f"{folder}/{name}", f"{rel}{name}/", suffix, recurse, paths, numbers, old, new, now)
    return changed


def is_wal(project: Project, rel: str) -> bool:
    parent = (project.root / rel).parent
    return rel.endswith((".jsonl", ".jsonl.gz")) and (
        parent in (project.wal_dir, project.wal_dir / ARCHIVE_DIR)
        or parent.parent == project.wal_dir / TEAM_DIR)


def read_items(project: Project, rel: str, skipped: list[str], start: int = 0) -> tuple[list[Item], int]:
    """The items one source file holds now (none when unreadable or not a fact), and how far it was
    read: a live session log is read from byte `start` up to its last whole line. A log that grew
    costs no record parser (PyYAML): the hooks append to logs on every turn."""
    path = project.root / rel
    if is_wal(project, rel):
        from ..session.sessions import is_bookkeeping
        from ..session.wal import ReadReport, read_file

        wal_report = ReadReport()
        entries = read_file(path, wal_report, start=start)
        items = [from_entry(e, rel) for e in entries if not is_bookkeeping(e)]
        skipped += wal_report.skipped
        return items, wal_report.end
    from ..record.load import has_frontmatter
    from ..record.model import parse_fact

    if path.is_symlink() and not project.contains(path):
        from ..record.load import OUTSIDE

        skipped.append(f"{rel}:1: {OUTSIDE}")
        return [], 0
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        skipped.append(f"{rel}:1: cannot read the file ({e})")
        return [], 0
    if not has_frontmatter(text):
        return [], 0
    fact, problems = parse_fact(text, rel)
    errors = [p for p in problems if p.severity == "error"]
    if fact is None or errors:
        skipped += [str(p) for p in errors] or [f"{rel}:1: not a valid fact"]
        return [], 0
    return [from_fact(fact)], 0


def racy(project: Project, found: Scan, now_ns: int, among: list[str] | None = None) -> dict[str, str]:
    """Fact files (of `among`, default all) modified within RACY_NS before `now_ns` -> a hash of their
    content. (WAL logs are only appended to, so their size always changes.)"""
    since = now_ns - RACY_NS
    if among is None:
        paths = found.modified_since(since)
    else:
        paths = [p for p, stamp in found.stamps(among).items() if stamp[0] >= since]
    return {p: content_hash(project, p) for p in paths if not is_wal(project, p)}


def rewritten(project: Project, hashes: dict[str, str]) -> list[str]:
    """Those of `hashes`' files whose content is no longer what was hashed."""
    return [p for p, h in hashes.items() if content_hash(project, p) != h]


def content_hash(project: Project, rel: str) -> str:
    import hashlib

    try:
        return hashlib.sha1((project.root / rel).read_bytes()).hexdigest()
    except OSError:
        return ""
