"""The freshness scan, started early on another core (Linux).

A prompt or session-start hook in its own process spends its first ~50 ms importing, almost all of it
on one core, and only then scans the record (`sources.scan`: a stat of every source file, ~25 ms at
10,000 facts and ~120 ms at 50,000, nearly all of it system calls). `start` forks a child at the
hook's start that runs that scan meanwhile and hands it over through a pipe; the first `scan` of the
same project and folders in this process takes it (`take`) instead of scanning. A scan taken 50 ms
earlier is as fresh as one taken now: a change a moment later is the next hook's to see, either way.

The child is the scan and nothing else: it imports nothing (what it runs is imported before the
fork), writes only the folders' listing, as `scan` always does, and ends with `os._exit`. It is not
started where a fork is unsafe or cannot pay: another thread runs (a fork copies one thread, and the
locks the others held), another platform (macOS frameworks refuse to run after a fork without exec),
or nothing to scan. If anything goes wrong in it, `take` returns None and the hook scans itself; if
the hook is cut short, its exit closes the pipe and the child's write fails. On a busy machine there
is no free core and nothing is won; the cost is the fork and the hand-over, ~1-2 ms.
"""
from __future__ import annotations

import os
import sys
from array import array

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ..project import Project

_pending: tuple[int, int, str] | None = None  # (child pid, read end of its pipe, the project root)


def start(project: Project, scan: Callable[[Project], Any], where: list) -> bool:
    """Fork a child that runs `scan(project)` (whose folders are `where`); whether one was started.
    (`sources.scan_early` is the caller: this module imports nothing of the index.)"""
    global _pending
    if _pending is not None or not sys.platform.startswith("linux") or not project.stele_dir.is_dir():
        return False
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return False
    import marshal

    read, write = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read)
        os.close(write)
        return False
    if pid == 0:  # the child: scan, hand over, exit without running anything of the parent's
        code = 1
        try:
            os.close(read)
            null = os.open(os.devnull, os.O_RDWR)  # never hold the harness's pipes open past the hook
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            found = scan(project)
            data = marshal.dumps((str(project.root), where, found.paths, found.numbers.tobytes()))
            with os.fdopen(write, "wb") as out:
                out.write(data)
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    _pending = (pid, read, str(project.root))
    return True


def take(project: Project, where: list) -> tuple[list[str], array] | None:
    """The early scan's (paths, stamps), when one was started for this project and these folders
    (waiting for it to end); else None. Either way the child is reaped and nothing is left pending."""
    global _pending
    if _pending is None:
        return None
    pid, read, root = _pending
    _pending = None
    try:
        with os.fdopen(read, "rb") as pipe:
            data = pipe.read()
    finally:
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
    import marshal

    try:
        got_root, got_where, paths, numbers = marshal.loads(data)
        stamps = array("q")
        stamps.frombytes(numbers)
    except (EOFError, ValueError, TypeError):  # the child failed: scan here
        return None
    if got_root != root or root != str(project.root) or got_where != where or len(stamps) != 3 * len(paths):
        return None
    return paths, stamps
