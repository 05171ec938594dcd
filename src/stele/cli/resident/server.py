"""The resident server's process (`cli/resident/__init__.py` says what it is for, `protocol.py` how a
call reaches it, `policy.py` what it runs and for whom).

It imports what the children run, keeps the sources' scan live (`index/watch.py`), and hands each
call to a child (`child.py`) that runs `run(argv)` (`cli.entry.here`). The parent never runs Stele
code itself (it only imports and watches), which is what keeps every child as fresh as a new
process. Once settled after a call (SETTLE_S) it refreshes the index the way the next call would,
then forks a spare child (`spare.py`) that warms up on the record and waits for the next call; a
call that finds the spare ready and the sources unchanged since it was forked goes to it, any other
is forked at once. One that reads the index fresh (a prompt) may find the refresher holding the
build lock and waits for it there (`index/build.py`, `_catch_up`); one that reads the catalog as it
stands (an edit hook) does not wait.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...gitroot import marks_repository
from . import child, spare
from .client import request, running, wanted
from .policy import allowed, confinement, peer_refusal
from .protocol import (
    IDLE_ENV,
    IDLE_S,
    MAX_ENV,
    MAX_HEADER,
    MAX_SERVERS,
    PROTOCOL,
    address,
    install_digest,
    peer_cred,
    recv_exact,
)

if TYPE_CHECKING:
    import socket

    from ...index.watch import LiveScan

# Background work (a refresh of the index, a spare's warm-up) starts only after this long without a
# call, an answer or a change to the sources: a repository removed right after its last hook (a test
# fixture, a CI workspace, `rm -rf`) meets nothing of the server's writing or opening files in it, and
# a removal's own deletions keep pushing it back.
SETTLE_S = 1.0

# Everything a hook, `recall` or `search` imports on its way (tests/cli/test_resident.py checks that
# a call imports nothing more): what a child imports it pays for on every call, regexes compiled too.
# (`cli.fast`, a layer above, is imported by `cli.entry` before it starts the server.)
PRELOAD = ("stele.hooks.dispatch", "stele.hooks.prompt",
           "stele.hooks.session_start", "stele.hooks.edit", "stele.hooks.catchup", "stele.hooks.stop",
           "stele.hooks.guard",
           "stele.retrieve.recall", "stele.retrieve.search", "stele.retrieve.seeds", "stele.retrieve.callout",
           "stele.retrieve.past", "stele.retrieve.unrecorded", "stele.retrieve.language", "stele.retrieve.feedback",
           "stele.index.repowords",
           "stele.render.agent", "stele.index.build", "stele.index.text", "stele.index.background",
           "stele.session.sessions", "stele.session.wal", "stele.session.remote", "stele.snapshot.claim",
           "stele.tasks.claims", "stele.anchors.patterns", "stele.anchors.symbols", "stele.index.vectors",
           "stele.index.query", "stele.index.wordpiece", "stele.index.packs", "stele.index.code",
           "stele.index.chunks", "stele.record.load", "stele.record.graph", "stele.session.segment",
           "stele.cli.resident.spare", "stele.cli.resident.child", "stele.retrieve.distill",
           "stele.index.contents", "stele.anchors.drift", "stele.anchors.fingerprint",
           "stele.regexcheck",  # a config read past its cache (edited, or a first call) is validated
           "simsimd",
           "tantivy", "sqlite3", "json", "shutil")


def preload() -> None:
    """Import what the children run (code only: no function with a cache is called, so nothing a
    child computes is shared), and compile the built-in redaction patterns (constants)."""
    import importlib

    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    from ... import redact

    redact.precompile()


def code_files() -> list[tuple[str, int]]:
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



class Server:
    def __init__(self, root: str, run: Callable[[list[str]], int]) -> None:
        import socket
        import time
        from pathlib import Path

        from ...project import Project

        self.root = root
        self.run = run
        self.project = Project(Path(root))
        self.started = time.time()
        self.last_call = self.started  # wall clock: which of a user's servers was used least recently
        self.last = time.monotonic()
        self.calls = 0
        self.idle = float(os.environ.get(IDLE_ENV) or IDLE_S)
        self.environ = dict(os.environ)  # the server's own: the base of every child's (child_env)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        self.sock.bind(address(root))  # EADDRINUSE: another server has it
        self.sock.listen(64)
        self.children: dict[int, tuple[int, socket.socket]] = {}  # pidfd -> (pid, connection)
        self.refresher: tuple[int, int] | None = None  # (pidfd, pid) of the child refreshing the index
        self.refreshed: object = None  # the scan the last refresh started from
        self.refreshes = 0
        self.refresh_started = 0.0
        self.refresh_ms: int | None = None  # how long the last refresh took
        self.settle_at = float("inf")  # no background work before this (SETTLE_S after a call; none before one)
        self.live: LiveScan | None = None
        self.spare: spare.Spare | None = None
        self.spared = 0  # calls a spare answered
        self._config_stamp = self._stamp(self.project.config_path)
        self.confinement = confinement()
        self.digest = install_digest()
        self.refused: set[str] = set()  # reasons logged (once each: a caller cannot fill the log)
        preload()
        self.code = code_files()
        self._watch()

    def refusal(self, conn, protocol, kind, root, argv, cwd, env, umask, digest) -> str | None:
        """Why a request is refused (every check is the server's: a caller is not trusted to have
        made its own), or None."""
        if protocol != PROTOCOL:
            return "another protocol"
        if digest != self.digest:
            return f"another Stele install or version ({digest!r}; this one is {self.digest!r})"
        why = peer_refusal(peer_cred(conn)[0], self.confinement)
        if why is not None:
            return why
        if kind in ("status", "stop"):
            return None  # any of this user's servers may be asked (the per-user cap, `_make_room`)
        if kind != "run":
            return f"an unknown request {kind!r}"
        if root != self.root:
            return "another root"
        if not allowed(argv):
            return "a command outside hooks, recall and search"
        if not (isinstance(cwd, str) and isinstance(env, dict) and isinstance(umask, int)):
            return "a malformed call"
        real = os.path.realpath(cwd)
        if real != self.root and not real.startswith(self.root.rstrip("/") + "/"):
            return "a working directory outside the repository"
        return None

    def budget_ms(self) -> int:
        """The hook's budget (`retrieval.hook_budget_ms`): how long a caller waits for its answer."""
        try:
            return max(1, int(self.project.config["retrieval.hook_budget_ms"]))
        except Exception:
            return 8000

    def _stamp(self, path) -> tuple | None:
        try:
            st = os.stat(path)
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def _watch(self) -> None:
        from ...index import watch

        if self.live is not None:
            self.live.close()
        self.live = None
        try:
            self.live = watch.LiveScan(self.project)
        except (watch.Unavailable, OSError) as e:
            self.log(f"freshness by inotify unavailable ({e}); every call scans the sources")

    def log(self, line: str, create: bool = False) -> None:
        from ... import residency

        residency.log(self.root, line, create)

    def why_gone(self) -> str | None:
        if not (os.path.isdir(os.path.join(self.root, ".stele"))
                and marks_repository(self.root)):
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

            from ...index.sources import folders
            from ...project import Project

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

        self.log(f"serving {self.root}", create=True)
        self._make_room()
        while True:
            wait: list[Any] = [self.sock, *self.children, *([self.refresher[0]] if self.refresher else [])]
            conns = {c.fileno(): pidfd for pidfd, (_, c) in self.children.items()}
            if self.live is not None:
                wait.append(self.live.fd)
            pending = self.settle_at - time.monotonic()
            ready, _, _ = select.select(wait + list(conns), [], [], min(30.0, pending + 0.01) if pending > 0 else 30.0)
            for fd in ready:
                if fd is self.sock:
                    self._accept()  # a call (not a status request) puts background work off
                elif self.live is not None and fd == self.live.fd:
                    self.settle_at = time.monotonic() + SETTLE_S
                    self._current()  # an edit between calls is indexed before the next one asks (settled)
                elif fd in self.children:
                    self.settle_at = time.monotonic() + SETTLE_S
                    self._reap(fd)
                elif self.refresher is not None and fd == self.refresher[0]:
                    os.waitpid(self.refresher[1], 0)
                    os.close(self.refresher[0])
                    self.refresher = None
                    self.refresh_ms = round((time.monotonic() - self.refresh_started) * 1000)
                elif fd in conns and conns[fd] in self.children:  # the caller hung up (or was killed)
                    pid, _ = self.children[conns[fd]]
                    try:
                        os.kill(pid, 9)
                    except ProcessLookupError:
                        pass
            why = self.why_stop()
            if why is None:
                if time.monotonic() >= self.settle_at:
                    self._refresh()
                    self._fork_spare()
            else:
                self.log(f"stopping: {why}")
                self._drop_spare()
                self.sock.close()
                if self.refresher is not None:  # its work is for the next call, and there is none
                    os.kill(self.refresher[1], 9)
                    os.waitpid(self.refresher[1], 0)
                for pidfd in list(self.children):
                    os.waitid(os.P_PIDFD, pidfd, os.WEXITED | os.WNOWAIT)
                    self._reap(pidfd)
                return

    def _make_room(self) -> None:
        """At most `STELE_RESIDENT_MAX` (default 4) servers per user: past it, stop the least
        recently used others."""
        try:
            cap = max(1, int(os.environ.get(MAX_ENV) or MAX_SERVERS))
        except ValueError:
            cap = MAX_SERVERS
        mine = address(self.root)
        others = []
        for at in running():
            if at != mine:
                status = request("", "status", at=at)
                others.append((status.get("last_call", 0.0) if status else 0.0, at, status))
        for _last, at, status in sorted(others, key=lambda o: o[0])[:max(0, len(others) + 1 - cap)]:
            if status is not None and request("", "stop", at=at) is not None:
                self.log(f"stopped the server of {status.get('root')} (least recently used; "
                         f"{MAX_ENV}={cap})")

    def _current(self):
        from ...index import watch

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
            if peer_cred(conn)[1] != os.getuid():
                raise OSError("a caller of another user")
            head = recv_exact(conn, 4)
            size = int.from_bytes(head, "big")
            if len(head) != 4 or size > MAX_HEADER:
                raise OSError("a malformed call")
            data = recv_exact(conn, size)
            if len(data) != size:
                raise OSError("a truncated call")
            protocol, kind, root, argv, cwd, env, umask, digest = marshal.loads(data)
        except (OSError, ValueError, EOFError, TypeError):
            conn.close()
            return
        why = self.refusal(conn, protocol, kind, root, argv, cwd, env, umask, digest)
        if why is not None:
            if why not in self.refused:
                self.refused.add(why)
                self.log(f"refused a call: {why}")
            kind = "refuse"
        elif kind == "run":
            self.last = time.monotonic()
            self.settle_at = self.last + SETTLE_S
            self.last_call = time.time()
            if self.why_stop() is not None:
                kind = "refuse"  # stale code or config: the caller runs it in its own process
        if kind == "run":
            # The go-ahead (with the budget the caller waits for the answer), and only then the
            # caller's descriptors: a caller that gave up waiting has none in flight.
            try:
                conn.sendall(b"G" + self.budget_ms().to_bytes(4, "big"))
                _tag, ancillary, _flags, _ = conn.recvmsg(1, socket.CMSG_SPACE(3 * 4))
                for level, ctype, payload in ancillary:
                    if level == socket.SOL_SOCKET and ctype == socket.SCM_RIGHTS:
                        fds += list(memoryview(payload).cast("i"))
            except OSError:
                pass
            if len(fds) != 3:
                for fd in fds:
                    os.close(fd)
                conn.close()
                return
        else:
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
        waiting, self.spare = self.spare, None
        call = (argv, cwd, env, umask)
        if waiting is not None and waiting.found is found and waiting.ready():
            if waiting.hand(conn, fds, call):
                for fd in fds:
                    os.close(fd)
                self.children[waiting.pidfd] = (waiting.pid, conn)
                self.spared += 1
                return
        elif waiting is not None:
            waiting.drop()  # the sources changed since it warmed up, or it is not warm yet
        pid = os.fork()
        if pid == 0:
            child.become(self.inherited(keep=(conn.fileno(), *fds)), self.project.root, self.roots(), found)
            child.run_call(conn, fds, call, self.environ, self.run)  # never returns
        for fd in fds:
            os.close(fd)
        self.children[os.pidfd_open(pid)] = (pid, conn)

    def _drop_spare(self) -> None:
        if self.spare is not None:
            self.spare.drop()
            self.spare = None

    def _fork_spare(self) -> None:
        """When settled, nothing runs and the last refresh started from the sources as they are, fork a child
        that warms up and waits for the next call (`spare.py`); a spare forked from sources that have
        changed since is thrown away (here, or when a call finds it so). No spare before the first
        refresh: until a call has run, the index is the calls' to build (LSN-QYWZ)."""
        found = self._current()
        if self.spare is not None and self.spare.found is not found:
            self._drop_spare()  # while it warms up it holds the index's shared lock, which a refresh needs
        if self.spare is not None or self.children or self.refresher is not None:
            return
        if self.live is not None and found is not self.refreshed:
            return  # the sources changed since the last refresh: the next one comes first
        self.spare = spare.fork(self.inherited(), self.project, self.roots(), found, self.environ, self.run)

    def _refresh(self) -> None:
        """Once settled after a call (SETTLE_S), bring the index up to date with the sources in a
        child of its own (a hook's session lines, an edit it reported), so the next call finds nothing
        to catch up. One at a time; the next starts when it ends, if the sources changed meanwhile."""
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
                child.become(self.inherited(), self.project.root, self.roots(), found)
                from ...index import build

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

    def inherited(self, keep: tuple[int, ...] = ()) -> list[int]:
        """What a child closes first (`child.become`): the server's socket, the watch, and every other
        call's connection and descriptors, but `keep`."""
        fds = [self.sock.fileno(), *self.children, *(c.fileno() for _, c in self.children.values())]
        if self.refresher is not None:
            fds.append(self.refresher[0])
        if self.spare is not None:
            fds += [self.spare.pidfd, self.spare.sock.fileno()]
        if self.live is not None:
            fds.append(self.live.fd)
        return [fd for fd in set(fds) if fd not in keep]

    def roots(self) -> list | None:
        """The folders the live scan watches (None without one)."""
        return None if self.live is None else self.live.roots

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
                "last_call": self.last_call,
                "spared": self.spared, "spare": None if self.spare is None else (
                    "warm" if self.spare.ready() else "warming"),
                "refreshes": self.refreshes, "last_refresh_ms": self.refresh_ms,
                "watching": None if live is None else len(live.folders),
                "walks": None if live is None else live.walks}


def serve(root: str, run: Callable[[list[str]], int]) -> int:
    """The server's process (`python -m stele resident-serve ROOT`), whose children answer each call
    with `run(argv)`. At most one per root (the lock)."""
    from ... import residency

    if residency.take_lock(root) is None:
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

