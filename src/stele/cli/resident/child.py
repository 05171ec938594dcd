"""A child the resident server forked (for a call, or as a spare): it holds nothing of the server's
but what it was given, runs the call with `run(argv)` (`cli.entry.here`) over the caller's stdin,
stdout and stderr, in its working directory, with its umask and the environment `policy.child_env`
allows, exactly as a fresh process would, and tells the caller how it ended before its own teardown.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

from .policy import child_env
from .protocol import flush_stdio

Run = Callable[[list[str]], int]


def become(close: list[int], root: Path, roots: list | None, found: object) -> None:
    """Start being a child: close the server's descriptors (`close`: its socket, watch, other calls'
    connections: a caller's stdout held open here would keep its harness waiting), take the default
    SIGTERM, and adopt the server's live scan `found` of `roots` for the sources' stamps (the seam
    `index.sources.adopt`)."""
    import signal

    for fd in set(close):
        try:
            os.close(fd)
        except OSError:
            pass
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if found is not None and roots is not None:
        from ...index import sources

        sources.adopt(root, roots, found)  # type: ignore[arg-type]


def run_call(conn, fds: list[int], call: tuple, environ: dict, run: Run, warmed=None) -> NoReturn:
    """Answer one call, `call` = (argv, cwd, env, umask), over the caller's descriptors `fds`, then end
    (`end`). `environ` is the server's own environment (the base of the child's)."""
    code = 1
    try:
        conn.sendall(b"P" + os.getpid().to_bytes(4, "big"))  # a caller that gives up kills it
        argv, cwd, env, umask = call
        code = answer(fds, argv, cwd, child_env(env, environ), umask, run)
    except BaseException:
        import traceback

        traceback.print_exc()
    end(conn, code, warmed)


def answer(fds: list[int], argv: list[str], cwd: str, env: dict, umask: int, run: Run) -> int:
    """Run the call in this child, over the caller's descriptors, as its own process would."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    os.umask(umask)
    sys.argv = ["stele", *argv]
    _stdio()
    try:
        return run(argv)
    except SystemExit as e:
        if not isinstance(e.code, int | None):
            sys.stderr.write(f"{e.code}\n")
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)


def _stdio() -> None:
    """stdin, stdout and stderr over the caller's descriptors, buffered as the caller's own process
    would buffer them (line by line on a terminal)."""
    import io

    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        old = getattr(sys, name)
        raw = io.FileIO(fd, "rb" if fd == 0 else "wb", closefd=False)
        tty = os.isatty(fd)
        buffered = io.BufferedReader(raw) if fd == 0 else io.BufferedWriter(raw)
        setattr(sys, name, io.TextIOWrapper(buffered, encoding=old.encoding, errors=old.errors,
                                            line_buffering=tty or fd == 2, write_through=fd == 2))


def end(conn, code: object, warmed=None) -> NoReturn:
    """End a child: flush and close the caller's stdin, stdout and stderr (its harness reads to their
    end), tell the caller the exit code and this call's CPU, peak RSS and minor faults (less `warmed`,
    a spare's usage after its warm-up), then exit without the teardown it would wait for (~5 ms)."""
    import marshal
    import resource

    code = code if isinstance(code, int) else 1
    flush_stdio()
    for fd in (0, 1, 2):
        try:
            os.close(fd)
        except OSError:
            pass
    if conn is not None:
        ru = resource.getrusage(resource.RUSAGE_SELF)
        user, system, faults = (warmed.ru_utime, warmed.ru_stime, warmed.ru_minflt) if warmed else (0, 0, 0)
        data = marshal.dumps((code, ru.ru_utime - user, ru.ru_stime - system, ru.ru_maxrss,
                              ru.ru_minflt - faults))
        try:
            conn.sendall(b"D" + len(data).to_bytes(4, "big") + data)
        except OSError:
            pass
    os._exit(code)
