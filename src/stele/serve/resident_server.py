"""The resident server's process (`serve/resident.py` says what it is for and how a call reaches it).

It imports what the children run, keeps the sources' scan live (`index/watch.py`), and for each call
hands it to a child that runs `run(argv)` (`cli.entry.here`) with the caller's arguments, working
directory, environment, umask and descriptors. The parent never runs Stele code itself (it only
imports and watches), which is what keeps every child as fresh as a new process. Between calls it
refreshes the index the way the next call would, then forks a spare child that warms up on the record
(`warm.py`: reads only, leaves nothing behind that depends on the record) and waits for the next
call; a call that finds the spare ready and the sources unchanged since it was forked goes to it,
any other is forked at once. One that reads the index fresh (a prompt) may find the refresher holding
the build lock and waits for it there (`index/build.py`, `_catch_up`); one that reads the catalog as
it stands (an edit hook) does not wait.
"""
from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from .resident import (
    IDLE_ENV,
    IDLE_S,
    LOCK,
    LOG,
    MAX_HEADER,
    PROTOCOL,
    RUN_DIR,
    _peer_uid,
    address,
    fd_bytes,
    flush_stdio,
    wanted,
)

READY = b"r"  # what a spare says when it is warm

if TYPE_CHECKING:
    import socket
    from collections.abc import Callable

    from ..index.watch import LiveScan

# Everything a hook, `recall` or `search` imports on its way (tests/serve/test_resident.py checks that
# a call imports nothing more): what a child imports it pays for on every call, regexes compiled too.
# (`cli.fast`, a layer above, is imported by `cli.entry` before it starts the server.)
PRELOAD = ("stele.hooks.dispatch", "stele.hooks.prompt",
           "stele.hooks.session_start", "stele.hooks.edit", "stele.hooks.stop", "stele.hooks.guard",
           "stele.retrieve.recall", "stele.retrieve.search", "stele.retrieve.seeds", "stele.retrieve.callout",
           "stele.render.agent", "stele.index.build", "stele.index.text", "stele.index.background",
           "stele.session.sessions", "stele.session.wal", "stele.session.remote", "stele.snapshot.claim",
           "stele.tasks.claims", "stele.anchors.patterns", "stele.anchors.symbols", "stele.index.vectors",
           "stele.index.query", "stele.index.wordpiece", "stele.index.packs", "stele.index.code",
           "stele.index.chunks", "stele.record.load", "stele.record.graph", "stele.session.segment",
           "stele.serve.warm", "simsimd",
           "tantivy", "sqlite3", "json", "shutil")


def _preload() -> None:
    """Import what the children run (code only: no function with a cache is called, so nothing a
    child computes is shared), and compile the built-in redaction patterns (constants)."""
    import importlib

    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    from .. import redact, redact_rules

    for shape in redact_rules.SHAPES:
        redact._compiled(shape.pattern)
        if shape.left:
            redact._compiled(f"[{shape.left}]")
    redact._compiled(redact._ASSIGN)
    redact._compiled(redact._hint_pattern(redact._HINT_WORDS))


def _code_files() -> list[tuple[str, int]]:
    """Stele's own loaded files and their mtimes: when one changes (an upgrade, an edit of an editable
    install) the server stops answering, so no call runs old code."""
    import stele

    here = os.path.dirname(stele.__file__)
    out = []
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if path and path.startswith(here):
            try:
                out.append((path, os.stat(path).st_mtime_ns))
            except OSError:
                pass
    return out


class Spare:
    """A child forked ahead of the next call, warming up (`warm.py`) and then waiting on `sock` for
    the call's arguments and descriptors. `found` is the live scan it was forked with."""

    def __init__(self, pid: int, sock: socket.socket, found: object) -> None:
        self.pid = pid
        self.pidfd = os.pidfd_open(pid)
        self.sock = sock
        self.found = found
        self.warm = False

    def ready(self) -> bool:
        """Has it said it is warm (one byte; nothing when it died)?"""
        import select

        if not self.warm and select.select([self.sock], [], [], 0)[0]:
            try:
                self.warm = self.sock.recv(1) == READY
            except OSError:
                pass
        return self.warm

    def drop(self) -> None:
        """Kill it (its warm-up only reads, so any point is safe) and reap it."""
        try:
            os.kill(self.pid, 9)
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        self.sock.close()
        os.close(self.pidfd)


class Server:
    def __init__(self, root: str, run: Callable[[list[str]], int]) -> None:
        import socket
        import time
        from pathlib import Path

        from ..project import Project

        self.root = root
        self.run = run
        self.project = Project(Path(root))
        self.started = time.time()
        self.last = time.monotonic()
        self.calls = 0
        self.idle = float(os.environ.get(IDLE_ENV) or IDLE_S)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        self.sock.bind(address(root))  # EADDRINUSE: another server has it
        self.sock.listen(64)
        self.children: dict[int, tuple[int, socket.socket]] = {}  # pidfd -> (pid, connection)
        self.refresher: tuple[int, int] | None = None  # (pidfd, pid) of the child refreshing the index
        self.refreshed: object = None  # the scan the last refresh started from
        self.refreshes = 0
        self.refresh_started = 0.0
        self.refresh_ms: int | None = None  # how long the last refresh took
        self.live: LiveScan | None = None
        self.spare: Spare | None = None
        self.spared = 0  # calls a spare answered
        self._config_stamp = self._stamp(self.project.config_path)
        _preload()
        self.code = _code_files()
        self._watch()

    def _stamp(self, path) -> tuple | None:
        try:
            st = os.stat(path)
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def _watch(self) -> None:
        from ..index import watch

        if self.live is not None:
            self.live.close()
        self.live = None
        try:
            self.live = watch.LiveScan(self.project)
        except (watch.Unavailable, OSError) as e:
            self.log(f"freshness by inotify unavailable ({e}); every call scans the sources")

    def log(self, line: str) -> None:
        import time

        try:
            path = os.path.join(self.root, ".stele", RUN_DIR, LOG)
            with open(path, "a", encoding="utf-8") as f:
                f.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {os.getpid()} {line}\n")
        except OSError:
            pass

    def why_gone(self) -> str | None:
        if not (os.path.isdir(os.path.join(self.root, ".stele"))
                and os.path.exists(os.path.join(self.root, ".git"))):
            return "the repository or its .stele folder went away"
        return None

    def why_stop(self) -> str | None:
        """Why this server should stop answering now, or None."""
        import time

        gone = self.why_gone()
        if gone is not None:
            return gone
        if any((self._stamp(path) or (None,))[0] != mtime for path, mtime in self.code):
            return "Stele's files changed"
        if time.monotonic() - self.last > self.idle and not self.children:
            return f"idle for {self.idle:.0f} s"
        stamp = self._stamp(self.project.config_path)
        if stamp != self._config_stamp:
            from pathlib import Path

            from ..index.sources import folders
            from ..project import Project

            self._config_stamp = stamp
            self.project = Project(Path(self.root))
            self._drop_spare()
            try:
                if not self.project.config["hooks.resident"]:
                    return "hooks.resident is false"
                if self.live is not None and folders(self.project) != self.live.roots:
                    self._watch()
            except Exception as e:  # a broken config: the children say so, one call at a time
                self.log(f"config: {e}")
        return None

    def serve(self) -> None:
        import select
        import time

        self.log(f"serving {self.root}")
        while True:
            wait: list[Any] = [self.sock, *self.children, *([self.refresher[0]] if self.refresher else [])]
            conns = {c.fileno(): pidfd for pidfd, (_, c) in self.children.items()}
            if self.live is not None:
                wait.append(self.live.fd)
            ready, _, _ = select.select(wait + list(conns), [], [], 30.0)
            for fd in ready:
                if fd is self.sock:
                    self._accept()
                elif self.live is not None and fd == self.live.fd:
                    self._current()
                    self._refresh()  # an edit between calls is indexed before the next one asks
                elif fd in self.children:
                    self._reap(fd)
                    self._refresh()
                elif self.refresher is not None and fd == self.refresher[0]:
                    os.waitpid(self.refresher[1], 0)
                    os.close(self.refresher[0])
                    self.refresher = None
                    self.refresh_ms = round((time.monotonic() - self.refresh_started) * 1000)
                    self._refresh()
                elif fd in conns and conns[fd] in self.children:  # the caller hung up (or was killed)
                    pid, _ = self.children[conns[fd]]
                    try:
                        os.kill(pid, 9)
                    except ProcessLookupError:
                        pass
            why = self.why_stop()
            if why is None:
                self._fork_spare()
            else:
                self.log(f"stopping: {why}")
                self._drop_spare()
                self.sock.close()
                for pidfd in list(self.children):
                    os.waitid(os.P_PIDFD, pidfd, os.WEXITED | os.WNOWAIT)
                    self._reap(pidfd)
                if self.refresher is not None:
                    os.waitpid(self.refresher[1], 0)
                return

    def _current(self):
        from ..index import watch

        try:
            return self.live.current() if self.live is not None else None
        except (watch.Unavailable, OSError) as e:
            self.log(f"freshness by inotify lost ({e}); every call scans the sources")
            if self.live is not None:
                self.live.close()
            self.live = None
            return None

    def _accept(self) -> None:
        import marshal
        import socket
        import time

        try:
            conn, _ = self.sock.accept()
        except OSError:
            return
        fds: list[int] = []
        try:
            conn.settimeout(2.0)
            if _peer_uid(conn) != os.getuid():
                raise OSError("a caller of another user")
            head, ancillary, _flags, _ = conn.recvmsg(4, socket.CMSG_SPACE(3 * 4))
            for level, ctype, data in ancillary:
                if level == socket.SOL_SOCKET and ctype == socket.SCM_RIGHTS:
                    fds += list(memoryview(data).cast("i"))
            size = int.from_bytes(head, "big")
            if len(head) != 4 or size > MAX_HEADER:
                raise OSError("a malformed call")
            data = b""
            while len(data) < size:
                chunk = conn.recv(size - len(data))
                if not chunk:
                    raise OSError("a truncated call")
                data += chunk
            protocol, kind, root, argv, cwd, env, umask = marshal.loads(data)
        except (OSError, ValueError, EOFError, TypeError):
            conn.close()
            for fd in fds:
                os.close(fd)
            return
        if kind == "run":
            self.last = time.monotonic()
        if protocol != PROTOCOL or root != self.root or (kind == "run" and len(fds) != 3):
            kind = "refuse"
        elif kind == "run" and self.why_stop() is not None:
            kind = "refuse"  # stale code or config: the caller runs it in its own process
        if kind != "run":
            for fd in fds:
                os.close(fd)
            try:
                if kind == "status":
                    conn.sendall(b"S" + marshal.dumps(self.status()))
                elif kind == "stop":
                    conn.sendall(b"S" + marshal.dumps({"stopping": True}))
                    self.idle = -1.0
                else:
                    conn.sendall(b"R")
            except OSError:
                pass
            conn.close()
            return
        self.calls += 1
        conn.setblocking(True)
        found = self._current()
        spare, self.spare = self.spare, None
        if spare is not None and spare.found is found and spare.ready():
            try:
                spare.sock.sendmsg([marshal.dumps((argv, cwd, env, umask))], [(
                    socket.SOL_SOCKET, socket.SCM_RIGHTS, fd_bytes([conn.fileno(), *fds]))])
            except OSError:  # it died: fork one as usual
                spare.drop()
            else:
                spare.sock.close()
                for fd in fds:
                    os.close(fd)
                self.children[spare.pidfd] = (spare.pid, conn)
                self.spared += 1
                return
        elif spare is not None:
            spare.drop()  # the sources changed since it warmed up, or it is not warm yet
        pid = os.fork()
        if pid == 0:
            self._child(conn, fds, argv, cwd, env, umask, found)  # never returns
        for fd in fds:
            os.close(fd)
        self.children[os.pidfd_open(pid)] = (pid, conn)

    def _drop_spare(self) -> None:
        if self.spare is not None:
            self.spare.drop()
            self.spare = None

    def _fork_spare(self) -> None:
        """When nothing runs and the last refresh started from the sources as they are, fork a child
        that warms up and waits for the next call (`_spare`); a spare forked from sources that have
        changed since is thrown away (here, or when a call finds it so). No spare before the first
        refresh: until a call has run, the index is the calls' to build (LSN-QYWZ)."""
        import socket

        found = self._current()
        if self.spare is not None and self.spare.found is not found:
            self._drop_spare()  # while it warms up it holds the index's shared lock, which a refresh needs
        if self.spare is not None or self.children or self.refresher is not None:
            return
        if self.live is not None and found is not self.refreshed:
            return  # the sources changed since the last refresh: the next one comes first
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        pid = os.fork()
        if pid == 0:
            mine.close()
            self._spare(theirs, found)  # never returns
        theirs.close()
        self.spare = Spare(pid, mine, found)

    def _spare(self, sock: socket.socket, found) -> None:
        import marshal
        import resource
        import socket

        from .warm import warm

        code, conn, warmed = 1, None, None
        try:
            self._become_child(keep=(sock.fileno(),), found=found)
            warm(self.project)
            warmed = resource.getrusage(resource.RUSAGE_SELF)
            sock.send(READY)
            fds: list[int] = []
            data, ancillary, _flags, _ = sock.recvmsg(MAX_HEADER, socket.CMSG_SPACE(4 * 4))
            for level, ctype, payload in ancillary:
                if level == socket.SOL_SOCKET and ctype == socket.SCM_RIGHTS:
                    fds += list(memoryview(payload).cast("i"))
            sock.close()
            if not data or len(fds) != 4:  # the server let it go
                os._exit(0)
            conn = socket.socket(fileno=fds[0])
            code = self._answer(fds[1:], *marshal.loads(data))
        except BaseException:
            import traceback

            traceback.print_exc()
        finally:
            self._end(conn, code, warmed)

    def _refresh(self) -> None:
        """After a call, bring the index up to date with the sources in a child of its own (a hook's
        session lines, an edit it reported), so the next call finds nothing to catch up. One at a
        time; the next starts when it ends, if the sources changed meanwhile."""
        import time

        if self.refresher is not None or self.live is None or self.children:
            return
        if self.why_gone() is not None:
            return  # a refresh would write .stele/index back into a repository being deleted
        found = self._current()
        if found is None or found is self.refreshed:
            return
        self.refreshed = found
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                self._close_inherited()
                from ..index import build, sources

                sources.RESIDENT = (self.project.root, self.live.roots, found)
                # what the next call would do first, as that call would do it: a deadline, so a whole
                # build goes to the detached builder and vectors and merges are left to it (DEC-QFQT)
                budget = int(self.project.config["retrieval.hook_budget_ms"]) / 1000
                build.open_index(self.project, deadline=time.monotonic() + budget).close()
            except BaseException:
                code = 1  # a hook that finds the index behind says why; this child has no one to tell
            finally:
                os._exit(code)
        self.refresher = (os.pidfd_open(pid), pid)
        self.refreshes += 1
        self.refresh_started = time.monotonic()

    def _close_inherited(self, keep: tuple[int, ...] = ()) -> None:
        """In a child: close the server's socket, the watch, and every other call's connection and
        descriptors (a caller's stdout held open here would keep its harness waiting)."""
        fds = [self.sock.fileno(), *self.children, *(c.fileno() for _, c in self.children.values())]
        if self.refresher is not None:
            fds.append(self.refresher[0])
        if self.spare is not None:
            fds += [self.spare.pidfd, self.spare.sock.fileno()]
        for fd in set(fds) - set(keep):
            try:
                os.close(fd)
            except OSError:
                pass
        if self.live is not None:
            os.close(self.live.fd)

    def _reap(self, pidfd: int) -> None:
        """A child has ended (it said how to its caller itself, `_end`; one killed said nothing, and
        its caller says so when this closes the connection)."""
        pid, conn = self.children.pop(pidfd)
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
        finally:
            conn.close()
            os.close(pidfd)

    def status(self) -> dict:
        live = self.live
        return {"pid": os.getpid(), "root": self.root, "since": self.started, "calls": self.calls,
                "spared": self.spared, "spare": None if self.spare is None else (
                    "warm" if self.spare.ready() else "warming"),
                "refreshes": self.refreshes, "last_refresh_ms": self.refresh_ms,
                "watching": None if live is None else len(live.folders),
                "walks": None if live is None else live.walks}

    def _become_child(self, keep: tuple[int, ...], found) -> None:
        """In a child (of a call, or a spare): hold nothing of the server's but `keep`, and take the
        live scan `found` for the sources' stamps."""
        import signal

        self._close_inherited(keep=keep)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        if found is not None and self.live is not None:
            from ..index import sources

            sources.RESIDENT = (self.project.root, self.live.roots, found)

    def _child(self, conn, fds: list[int], argv: list[str], cwd: str, env: dict, umask: int, found) -> None:
        code = 1
        try:
            self._become_child(keep=(conn.fileno(), *fds), found=found)
            code = self._answer(fds, argv, cwd, env, umask)
        except BaseException:
            import traceback

            traceback.print_exc()
        finally:
            self._end(conn, code)

    def _end(self, conn, code: object, warmed=None) -> None:
        """End a child: flush and close the caller's stdin, stdout and stderr (its harness reads to
        their end), tell the caller the exit code and this call's CPU, peak RSS and minor faults (less
        `warmed`, a spare's usage after its warm-up), then exit without the teardown it would wait for
        (~5 ms)."""
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

    def _answer(self, fds: list[int], argv: list[str], cwd: str, env: dict, umask: int) -> int:
        """Run the call in this child, over the caller's descriptors, as its own process would."""
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(env)
        os.umask(umask)
        sys.argv = ["stele", *argv]
        self._stdio()
        try:
            return self.run(argv)
        except SystemExit as e:
            if not isinstance(e.code, int | None):
                sys.stderr.write(f"{e.code}\n")
            return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)

    def _stdio(self) -> None:
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


def serve(root: str, run: Callable[[list[str]], int]) -> int:
    """The server's process (`python -m stele resident-serve ROOT`), whose children answer each call
    with `run(argv)`. At most one per root (the lock)."""
    import fcntl

    folder = os.path.join(root, ".stele", RUN_DIR)
    try:
        os.makedirs(folder, exist_ok=True)
        lock = os.open(os.path.join(folder, LOCK), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return 0  # another server holds it
    if not wanted(root):
        return 0
    try:
        server = Server(os.path.realpath(root), run)
    except OSError:
        return 0  # the address is taken: another server (or another user's squatter) answers
    try:
        server.serve()
    except Exception as e:  # callers fall back to their own process; the log says why it stopped
        import traceback

        where = traceback.extract_tb(e.__traceback__)[-1]
        server.log(f"stopping: {type(e).__name__}: {e} ({os.path.basename(where.filename)}:{where.lineno})")
        return 1
    return 0

