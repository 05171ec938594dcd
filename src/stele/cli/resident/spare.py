"""The spare: a child the resident server forks ahead of the next call, which warms up on the record
(`warm`: the reads a hook makes, done once before the call arrives) and then waits for the call.

call arrives, so the call does not pay for them the first time.

A child forked for a call spends most of its time on first touches: its copy of every page of the
server's objects that it writes to (reference counts), a new SQLite connection and tantivy searcher,
the first run of each function. Measured at 10,000 facts: a prompt hook ran in 31 ms in a fresh
child and in 15 ms in a child that had warmed up on another text. So the server keeps one child
forked ahead, warmed up on its record, and hands it the next call (`server.py`).

What keeps that call as independent as a fresh process: the warm-up only reads (the index as it
stands, and nothing at all when the index is behind the sources: the call catches up), closes
whatever it opened, and leaves behind only what a fresh process would compute the same way from the
same files: pure functions' caches (compiled patterns) and the query encoder, cached by its model's
content digest. It writes no file (the caches every read keeps, such as the parsed config, are
already written by the call before it), so the server may kill it at any point.
tests/cli/test_resident_spare.py fails when it leaves any other module state behind or writes a file. A
spare is used only while the sources are as they were when it was forked; any change and it is
thrown away (the server decides, by the identity of its live scan).
"""
from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, NoReturn

from ...project import Project
from . import child
from .protocol import MAX_HEADER, fd_bytes

if TYPE_CHECKING:
    from ...index.handle import Index

READY = b"r"  # what a spare says when it is warm
LOCK_WAIT_S = 1.0


class Spare:
    """A child forked ahead of the next call, warming up and then waiting on `sock` for the call's
    arguments and descriptors. `found` is the live scan it was forked with."""

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

    def hand(self, conn: socket.socket, fds: list[int], call: tuple) -> bool:
        """Give it a call: `call` = (argv, cwd, env, umask), the connection and the caller's
        descriptors; False when it died (the server forks one as usual)."""
        import marshal

        try:
            self.sock.sendmsg([marshal.dumps(call)], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                                                       fd_bytes([conn.fileno(), *fds]))])
        except OSError:
            self.drop()
            return False
        self.sock.close()
        return True

    def drop(self) -> None:
        """Kill it (its warm-up only reads, so any point is safe) and reap it."""
        try:
            os.kill(self.pid, 9)
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        self.sock.close()
        os.close(self.pidfd)


def fork(close: list[int], project: Project, roots: list | None, found: object, environ: dict,
         run: Callable[[list[str]], int]) -> Spare:
    """Fork a spare: in the child, `child.become` (closing `close`), warm up, say READY, wait for a
    call and answer it (`child.run_call`)."""
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    pid = os.fork()
    if pid == 0:
        mine.close()
        _main(theirs, close, project, roots, found, environ, run)
    theirs.close()
    return Spare(pid, mine, found)


def _main(sock: socket.socket, close: list[int], project: Project, roots: list | None, found: object,
          environ: dict, run: Callable[[list[str]], int]) -> NoReturn:
    import marshal
    import resource

    conn, warmed = None, None
    try:
        child.become(close, project.root, roots, found)
        warm(project)
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
    except BaseException:
        import traceback

        traceback.print_exc()
        child.end(conn, 1, warmed)
    child.run_call(conn, fds[1:], marshal.loads(data), environ, run, warmed)

def warm(project: Project) -> None:
    """Run, and forget, what the prompt, session-start and edit hooks read; never raises."""
    from ...index.build import open_if_fresh

    try:
        index = open_if_fresh(project, deadline=time.monotonic() + LOCK_WAIT_S)
    except Exception:
        return
    if index is None:
        return
    try:
        with index:
            _reads(project, index)
    except Exception:
        pass  # the call that follows meets the same problem and says so


def _reads(project: Project, index: Index) -> None:
    from ... import textcut
    from ...hooks import harness, lookup
    from ...hooks.payload import parse
    from ...neutralize import neutralize
    from ...render.agent import recall_text
    from ...retrieve.recall import recall_in
    from ...retrieve.seeds import query_encoder

    title, path = index.catalog.sample()
    list(lookup.always(index))
    lookup.open_tasks(index, project, 1)
    if path is not None:
        lookup.anchored(index, [path])
    if title is None:
        return
    payload = parse('{"hook_event_name": "UserPromptSubmit", "prompt": ""}', "claude")
    room = int(project.config["hooks.max_chars"])
    text = textcut.lines(neutralize(recall_text(recall_in(index, title), room)), room, "")
    harness.answer(payload.form, "prompt", harness.Answer(text), payload.data, payload.event_name)
    # the model a paraphrase needs, loaded; the scan of the vectors is left to the call that needs it
    # (at 50,000 facts it would add ~15 MB to the peak RSS of every call, most of which need none)
    query_encoder(project).encode([title])
