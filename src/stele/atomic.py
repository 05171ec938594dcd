"""Whole writes and file locks: the one home of temp-file-and-rename and of `fcntl` (and of the one
append Stele makes to a file it does not own: a CI job summary).

A reader must never see half a file, and a crash must leave either the old file or the new one: every
file Stele writes is written to a temporary name in the same folder, flushed, fsynced when it must
survive a power cut (`durable`), and renamed over the target. A stored snapshot is never replaced
(`exclusive`: hard-linked into place, failing if the name exists). Locks are `flock`s, held for the
life of a `with` block and dropped by closing the descriptor, so a killed process never leaves one
behind. This module imports only the standard library: the hook path uses it.
"""
from __future__ import annotations

import errno
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO

    Content = str | bytes | Callable[[IO[bytes]], None]


class LockTimeout(OSError):
    """The lock was still held by another process when the deadline passed."""


def write(path: Path, content: Content, *, durable: bool = True, mode: int | None = None,
          exclusive: bool = False, tmp_dir: Path | None = None) -> None:
    """Write `content` (text as UTF-8, bytes, or a function that writes to a binary file) to `path`
    whole. `mode` defaults to the existing file's permission bits, else 0o644. `exclusive` refuses to
    replace an existing file (FileExistsError) instead of renaming over it. `tmp_dir` keeps the
    temporary file out of `path`'s folder (a fact's folder is staged by `git add`); where it is on
    another file system the temporary goes beside `path` after all, since a rename cannot cross."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _temp_in(tmp_dir, path) if tmp_dir is not None else _temp_beside(path)
    try:
        _fill(fd, tmp, path, content, durable, mode, exclusive)
    except OSError as e:
        if e.errno != errno.EXDEV:
            raise
        fd, tmp = _temp_beside(path)
        _fill(fd, tmp, path, content, durable, mode, exclusive)


def _fill(fd: int, tmp: str, path: Path, content: Content, durable: bool, mode: int | None,
          exclusive: bool) -> None:
    try:
        with os.fdopen(fd, "wb") as f:
            if callable(content):
                content(f)
            else:
                f.write(content.encode("utf-8") if isinstance(content, str) else content)
            f.flush()
            if durable:
                os.fsync(f.fileno())
        if mode is None:
            try:
                mode = path.stat().st_mode & 0o777
            except FileNotFoundError:
                mode = 0o644
        os.chmod(tmp, mode)
        if exclusive:
            os.link(tmp, path)
        else:
            os.replace(tmp, path)
        if durable:
            fsync_dir(path.parent)
    finally:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass


def append(path: Path, text: str) -> None:
    """Add `text` at the end of `path` (created when missing) with one O_APPEND write: for a file other
    programs append to as well and read whole later, such as GitHub's job summary. Stele's own files
    are never appended to this way (whole writes above; the session log has its locked append)."""
    data = memoryview(text.encode("utf-8"))
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        while data:
            data = data[os.write(fd, data):]
    finally:
        os.close(fd)


def _temp_beside(path: Path) -> tuple[int, str]:
    """A new, private temporary file in `path`'s folder (not `tempfile`: importing it costs the hook
    path `random` and `hashlib`)."""
    return _temp_in(path.parent, path)


def _temp_in(folder: Path, path: Path) -> tuple[int, str]:
    folder.mkdir(parents=True, exist_ok=True)
    while True:
        tmp = str(folder / f".{path.name}.{os.urandom(6).hex()}.tmp")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), tmp
        except FileExistsError:
            continue


def read_text(path: Path) -> str | None:
    """`path`'s text, or None when there is no such file: the "before" a journaled or recorded
    rewrite compares against, so a file changed by hand since is noticed and left alone."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def text_digest(text: str | None) -> str | None:
    """The SHA-256 of `text` (None for no file), as a journal or ledger keeps it."""
    if text is None:
        return None
    import hashlib  # here, not at import: the hook path loads this module and never digests

    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def fsync_dir(folder: Path) -> None:
    """Make a rename in `folder` durable (a no-op where directories cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def lock_fd(fd: int, *, exclusive: bool = True, deadline: float | None = None) -> None:
    """Take a `flock` on an open descriptor; with a `deadline` (time.monotonic()), give up then with
    LockTimeout instead of waiting for ever."""
    import fcntl

    mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
    if deadline is None:
        fcntl.flock(fd, mode)
        return
    pause = 0.001  # doubled up to 20 ms: a refresh that holds the lock for 30 ms costs a reader ~2 ms more
    while True:
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
            return
        except OSError as e:
            if e.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                raise
        if time.monotonic() >= deadline:
            raise LockTimeout(errno.EWOULDBLOCK, "the lock is held by another process")
        time.sleep(pause)
        pause = min(0.02, pause * 2)


def unlock_fd(fd: int) -> None:
    import fcntl

    fcntl.flock(fd, fcntl.LOCK_UN)


@contextmanager
def locked(lock_path: Path, *, exclusive: bool = True, deadline: float | None = None) -> Iterator[int]:
    """Hold a `flock` on `lock_path` (created if missing) for the `with` block; yields the descriptor."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        lock_fd(fd, exclusive=exclusive, deadline=deadline)
        yield fd
    finally:
        os.close(fd)  # closing drops the lock
