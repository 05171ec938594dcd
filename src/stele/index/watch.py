"""The scan of the index's sources kept live by inotify, for a resident process (`cli/resident/`).

`sources.scan` stats every source file on every read, because an editor that saves in place changes
nothing but the file (DEC-E3F4): ~40 ms at 10,000 facts, on every prompt. A process that stays up can
instead watch the source folders and keep the same `Scan` current, re-stating only what an event
names. `LiveScan.current()` returns what a fresh `sources.scan` would return at that moment (same
paths, same order, same stamps), so nothing downstream changes: the staleness check, the refresh and
the racy-file rule all run as they do after a full scan.

Why it can be trusted. The kernel queues an inotify event inside the system call that makes the change
(write, truncate, rename, unlink, utimes), before that call returns. A hook process starts after the
edit it has to see, and the resident process drains its queue after the hook connected, so the event
is in the queue by then. What inotify does not see is handled apart:
- a source file that is a symbolic link (its target may live outside the watched folders) is stat'ed
  on every read;
- a watched folder deleted, moved or replaced (a root's own stamp is checked on every read), a queue
  overflow, or a watch the kernel refuses (`max_user_watches`): the next read walks everything again,
  or, when watches cannot be had at all, `available()` is False and callers use `sources.scan`;
- writes through `mmap` and changes made on another machine of a network file system are invisible
  to inotify: docs/configuration.md says to turn the resident process off there.

Linux only (inotify through ctypes: no dependency); elsewhere `available()` is False.
"""
from __future__ import annotations

import errno
import os
import struct
import sys
from array import array

from ..project import Project
from .sources import Scan, folders, is_source

IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE = 0x2, 0x4, 0x8
IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x40, 0x80, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF, IN_Q_OVERFLOW, IN_IGNORED = 0x400, 0x800, 0x4000, 0x8000
IN_ONLYDIR = 0x1000000
IN_NONBLOCK, IN_CLOEXEC = 0o4000, 0o2000000
NAMES = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO  # a folder gained or lost a name
CONTENT = IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE  # a file's stamp may have changed
SELF = IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED  # the watched folder itself went away
MASK = NAMES | CONTENT | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR
EVENT = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len (then the name)


# One watch per folder of the sources; past this many the process watches nothing and every call
# scans the sources as a fresh process does (a record has tens of folders; 5,000 means something else
# is under `memory_dir`, and each watch costs kernel memory out of the user's `max_user_watches`).
MAX_WATCHES = 1000


class Unavailable(Exception):
    """inotify cannot be used here (not Linux, no libc symbol, no instance or watch left)."""


def _libc():
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for name in ("inotify_init1", "inotify_add_watch", "inotify_rm_watch"):
        if not hasattr(libc, name):
            raise Unavailable(f"libc has no {name}")
    libc.inotify_add_watch.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32)
    return libc, ctypes


def available() -> bool:
    return sys.platform.startswith("linux")


class _Folder:
    """One watched source folder: its entries in listing order (name, stamp or None when the name is
    not a regular file now) and its subfolders, as `sources._walk` would find them."""

    __slots__ = ("below", "entries", "links", "path", "recurse", "rel", "stamp", "suffix", "wd", "where")

    def __init__(self, path: str, rel: str, suffix: str, recurse: bool) -> None:
        self.path, self.rel, self.suffix, self.recurse = path, rel, suffix, recurse
        self.entries: list[list] = []  # [name, (mtime_ns, size, inode) | None]
        self.where: dict[str, int] = {}
        self.below: list[str] = []
        self.links: list[str] = []  # entries that are symbolic links: stat'ed on every read
        self.wd = -1
        self.stamp: tuple[int, int] | None = None


class LiveScan:
    """The sources of one project, watched. Not thread-safe: one resident process owns it."""

    def __init__(self, project: Project) -> None:
        if not available():
            raise Unavailable("inotify is Linux only")
        self._libc, ctypes = _libc()
        self._ctypes = ctypes
        self.fd = self._libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if self.fd < 0:
            raise Unavailable(f"inotify_init1: {os.strerror(ctypes.get_errno())}")
        self.roots = folders(project)
        self.by_wd: dict[int, _Folder] = {}
        self.folders: dict[str, _Folder] = {}
        self.walks = 0  # how many times everything was walked (tests and `stele daemon status`)
        self._dirty = True
        self._cached: Scan | None = None
        self._walk_all()

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    # -- building -------------------------------------------------------------------------------

    def _walk_all(self) -> None:
        for folder in list(self.folders.values()):
            self._unwatch(folder)
        self.folders.clear()
        self.by_wd.clear()
        self.walks += 1
        self._root_stamps = [self._stamp(path) for path, *_ in self.roots]
        for path, rel, suffix, recurse in self.roots:
            self._list(path, rel, suffix, recurse)
        self._dirty = True

    def _stamp(self, path: str) -> tuple[int, int] | None:
        try:
            st = os.stat(path)
        except OSError:
            return None
        return (st.st_dev, st.st_ino)

    def _list(self, path: str, rel: str, suffix: str, recurse: bool) -> None:
        """Watch `path`, then list it (so a change made while it is listed is queued, not lost), and
        its subfolders when `recurse`."""
        folder = self.folders.get(path) or _Folder(path, rel, suffix, recurse)
        if folder.wd < 0:
            if len(self.by_wd) >= MAX_WATCHES:
                raise Unavailable(f"more than {MAX_WATCHES} folders under the sources (a hard cap on watches: "
                                  "a `memory_dir` holding a dependency tree?)")
            wd = self._libc.inotify_add_watch(self.fd, os.fsencode(path), MASK)
            if wd < 0:
                err = self._ctypes.get_errno()
                if err in (errno.ENOENT, errno.ENOTDIR, errno.EACCES):
                    self._drop(folder)
                    return  # not there (yet): a root's stamp, or its parent's event, brings it back
                raise Unavailable(f"inotify_add_watch {path}: {os.strerror(err)}")
            folder.wd = wd
            self.by_wd[wd] = folder
        self.folders[path] = folder
        folder.stamp = self._stamp(path)
        old_below = folder.below
        entries, below, links = [], [], []
        try:
            listing = os.scandir(path)
        except OSError:
            self._drop(folder)
            return
        with listing:
            for e in listing:
                name = e.name
                try:
                    if is_source(name, suffix):
                        entries.append([name, _file_stamp(e.path)])
                        if e.is_symlink():
                            links.append(name)
                    elif recurse and name[0] != "." and e.is_dir(follow_symlinks=False):
                        below.append(name)
                except OSError:
                    continue
        folder.entries, folder.below, folder.links = entries, below, links
        folder.where = {str(entry[0]): i for i, entry in enumerate(entries)}
        for gone in set(old_below) - set(below):
            self._drop_tree(f"{path}/{gone}")
        for name in below:
            sub = f"{path}/{name}"
            if sub not in self.folders or self.folders[sub].wd < 0:
                self._list(sub, f"{rel}{name}/", suffix, recurse)
        self._dirty = True

    def _drop_tree(self, path: str) -> None:
        for p in [p for p in self.folders if p == path or p.startswith(path + "/")]:
            self._drop(self.folders[p])

    def _drop(self, folder: _Folder) -> None:
        self._unwatch(folder)
        self.folders.pop(folder.path, None)
        self._dirty = True

    def _unwatch(self, folder: _Folder) -> None:
        if folder.wd >= 0:
            self.by_wd.pop(folder.wd, None)
            self._libc.inotify_rm_watch(self.fd, folder.wd)  # EINVAL when the kernel already dropped it
            folder.wd = -1

    # -- keeping it current ---------------------------------------------------------------------

    def _events(self) -> list[tuple[int, int, str]]:
        out: list[tuple[int, int, str]] = []
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return out
            pos = 0
            while pos + EVENT.size <= len(data):
                wd, mask, _cookie, size = EVENT.unpack_from(data, pos)
                pos += EVENT.size
                name = os.fsdecode(data[pos:pos + size].rstrip(b"\0"))
                pos += size
                out.append((wd, mask, name))

    def current(self) -> Scan:
        """What `sources.scan` would return now, from the events queued since the last call."""
        relist: dict[str, _Folder] = {}
        restat: list[tuple[_Folder, str]] = []
        for wd, mask, name in self._events():
            if mask & IN_Q_OVERFLOW:
                self._walk_all()
                relist.clear()
                restat.clear()
                continue
            folder = self.by_wd.get(wd)
            if folder is None:
                continue
            if mask & SELF and not name:
                parent = self.folders.get(os.path.dirname(folder.path))
                self._drop_tree(folder.path)
                if parent is not None:
                    relist[parent.path] = parent
                continue
            if mask & NAMES:
                relist[folder.path] = folder
            elif mask & CONTENT and name in folder.where:
                restat.append((folder, name))
        if [self._stamp(path) for path, *_ in self.roots] != self._root_stamps:
            self._walk_all()  # a root folder appeared, went away or was replaced
        for folder in relist.values():
            if folder.path in self.folders:
                self._list(folder.path, folder.rel, folder.suffix, folder.recurse)
        for folder, name in restat:
            if folder.path not in relist and name in folder.where:
                self._restat(folder, name)
        for folder in self.folders.values():
            for name in folder.links:
                self._restat(folder, name)
        if self._dirty or self._cached is None:
            self._cached = self._assemble()
            self._dirty = False
        return self._cached

    def _restat(self, folder: _Folder, name: str) -> None:
        entry = folder.entries[folder.where[name]]
        stamp = _file_stamp(f"{folder.path}/{name}")
        if stamp != entry[1]:
            entry[1] = stamp
            self._dirty = True

    def _assemble(self) -> Scan:
        paths: list[str] = []
        numbers = array("q")
        for path, *_ in self.roots:
            self._emit(path, paths, numbers)
        return Scan(paths, numbers)

    def _emit(self, path: str, paths: list[str], numbers: array) -> None:
        folder = self.folders.get(path)
        if folder is None:
            return
        for name, stamp in folder.entries:
            if stamp is not None:
                paths.append(folder.rel + name)
                numbers.extend(stamp)
        for name in folder.below:
            self._emit(f"{path}/{name}", paths, numbers)


def _file_stamp(path: str) -> tuple[int, int, int] | None:
    """(mtime_ns, size, inode) of a regular file, following a link as reading it will; else None."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino) if st.st_mode & 0o170000 == 0o100000 else None
