"""The caller's side of the resident server: `delegate` runs first in `stele hook ...`, `stele recall`
and `stele search` (cli/entry.py), and a hook that ran in its own process may `start` a server for
the next one.

It imports only os, sys, _socket, marshal and `gitroot` (os alone) on the way of a call (the caller
pays for every import on every hook). It connects to an abstract Unix socket named after the
repository's root and the user; nobody there, a server of another user (checked both ways with
SO_PEERCRED) or more confined than the caller (a sandbox's squatter, `policy.server_refusal`), a
refusal (another root, install or version, stale code, a call outside the allowlist), or no go-ahead
within GO_S: the command runs in its own process as before. Never a hang: the caller's descriptors
are passed only after the go-ahead, so a frozen server holds none of them, and a child that took the
call must answer within the hook's budget or is killed (the hook then fails open).
"""
from __future__ import annotations

import os
import sys

from ...gitroot import marks_repository
from .policy import allowed, server_refusal
from .protocol import (
    ANSWER_GRACE_S,
    ENV,
    GO_S,
    NAME,
    PROTOCOL,
    REQUEST_S,
    RESPAWN_S,
    SERVE_COMMAND,
    USAGE_ENV,
    address,
    fd_bytes,
    flush_stdio,
    install_digest,
    peer_cred,
    recv_exact,
    reply,
    send,
)

__all__ = ["allowed", "delegate", "enabled", "exit_now", "request", "running", "start", "wanted"]


def enabled() -> bool:
    """Whether this environment may use a resident server at all (`residency.py`: Linux, not
    `STELE_OFF`, not `STELE_RESIDENT=0`, not CI); whether a repository wants one is `wanted`."""
    from ...residency import environment_refusal

    return environment_refusal() is None


def find_root(start: str) -> str | None:
    """The repository root above `start` that has Stele set up (`project.find_root`'s rule, plus
    `.stele`), without importing pathlib."""
    here = os.path.realpath(start)
    while True:
        if marks_repository(here):
            return here if os.path.isdir(os.path.join(here, ".stele")) else None
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def connect(root: str, timeout: float, at: bytes | None = None):
    """A connection to the server of `root` (or at the address `at`), None when none answers there
    or the one that answers is not trusted (another user's, or a sandbox's: `server_refusal`);
    TimeoutError when one is there but does not take it within `timeout` or its queue is full (a
    Unix socket's connect fails at once then, while the server is stopped: the caller says so)."""
    import _socket  # not socket.py: it imports enum and selectors (~4 ms a call)

    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM | _socket.SOCK_CLOEXEC)
    sock.settimeout(timeout)  # a frozen server's full backlog blocks connect itself
    try:
        sock.connect(at or address(root))
        pid, uid = peer_cred(sock)
        if uid != os.getuid():
            raise OSError("the socket belongs to another user")
        if server_refusal(pid) is not None:
            raise OSError("the socket belongs to a more confined process")
    except BlockingIOError:  # EAGAIN: a server is there, but its queue is full (stopped, or swamped)
        sock.close()
        raise TimeoutError("the resident server's queue is full") from None
    except TimeoutError:
        sock.close()
        raise
    except OSError:
        sock.close()
        return None
    return sock


def delegate(argv: list[str]) -> tuple[int | None, str | None]:
    """Run `argv` in the resident server of the working directory's repository: (exit code, root),
    or (None, root) when it has to run here (root is None outside a Stele repository)."""
    if not enabled() or not allowed(argv):
        return None, None
    root = find_root(os.getcwd())
    if root is None:
        return None, root
    import _socket
    import time

    start = time.monotonic()
    try:
        sock = connect(root, GO_S)
    except TimeoutError:
        return _too_slow(root)
    if sock is None:
        return None, root
    child: list[int] = []
    try:
        import marshal

        umask = os.umask(0o022)
        os.umask(umask)
        try:
            sock.settimeout(max(0.001, GO_S - (time.monotonic() - start)))
            send(sock, (PROTOCOL, "run", root, argv, os.getcwd(), dict(os.environ), umask, install_digest()))
            go = recv_exact(sock, 5)
        except TimeoutError:
            return _too_slow(root)
        if go[:1] != b"G" or len(go) != 5:  # refused (R), or gone before it read anything: run here
            return None, root
        sock.settimeout(int.from_bytes(go[1:5], "big") / 1000 + ANSWER_GRACE_S)
        sock.sendmsg([b"F"], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fd_bytes([0, 1, 2]))])
        answer = reply(sock, child)
    except TimeoutError:
        for pid in child:  # it holds the caller's stdout: the harness would wait for it
            try:
                os.kill(pid, 9)
            except OSError:
                pass
        return _lost(argv, "did not answer within the hook's budget"), root
    except OSError:  # a closed stdin, a server that went away before it read anything
        return None, root
    finally:
        sock.close()
    if answer[:1] == b"D":
        code, *usage = marshal.loads(answer[1:])
        if os.environ.get(USAGE_ENV):
            from ...residency import record_usage

            record_usage(os.environ[USAGE_ENV], [code, *usage])
        return int(code), root
    # The child died without an exit status (killed): its input is gone, so it cannot be run again.
    return _lost(argv, "lost this call"), root


def _lost(argv: list[str], why: str) -> int:
    """A call the server took and did not finish: its input is gone, so it cannot be run again; a
    hook fails open (but the read-only guard, which fails closed)."""
    sys.stderr.write(f"stele: the resident process {why} (continuing without memory); "
                     f"set {ENV}=0 to run every call in its own process\n")
    return 0 if argv[:1] == ["hook"] and argv[1:2] != ["guard-readonly"] else 3


def _too_slow(root: str) -> tuple[None, str]:
    sys.stderr.write(f"stele: the resident process did not take this call within {GO_S * 1000:.0f} ms "
                     "(stopped, or the machine is overloaded); running it in its own process\n")
    return None, root


def exit_now(code: int) -> None:
    """End a caller the server answered: its child wrote to this process's descriptors itself, so
    nothing is left to do but flush what this side wrote (a warning) and exit, without the
    interpreter's teardown of every module."""
    flush_stdio()
    os._exit(code)


def request(root: str, kind: str, at: bytes | None = None) -> dict | None:
    """A `status` or `stop` request to the server of `root` (or at the address `at`); None when none
    answers."""
    import marshal

    try:
        sock = connect(root, REQUEST_S, at)
    except OSError:
        return None
    if sock is None:
        return None
    try:
        send(sock, (PROTOCOL, kind, root, [], "", {}, 0, install_digest()))
        answer = reply(sock)
    except OSError:
        return None
    finally:
        sock.close()
    return marshal.loads(answer[1:]) if answer[:1] == b"S" else None


def running() -> list[bytes]:
    """The addresses of this user's servers (every repository's), from /proc/net/unix."""
    prefix = b"@%s/%d/" % (NAME, os.getuid())
    found = set()
    try:
        with open("/proc/net/unix", "rb") as f:
            for line in f:
                fields = line.split()
                if len(fields) >= 8 and fields[7].startswith(prefix):
                    found.add(b"\0" + fields[7][1:])
    except OSError:
        pass
    return sorted(found)


def start(root: str) -> bool:
    """Start a server for `root`, detached, unless one was started in the last RESPAWN_S seconds (a
    server that cannot come up is not retried on every hook); whether one was started."""
    from ... import residency

    if residency.spawned_within(root, RESPAWN_S):
        return False
    if not wanted(root, starting=True):
        return False  # nothing written: off (the default), paused, CI, a read-only or temporary mount
    import subprocess

    if not residency.mark_spawned(root):
        return False
    try:
        subprocess.Popen([sys.executable, "-m", "stele", SERVE_COMMAND, root], cwd=root,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         close_fds=True, start_new_session=True)
    except OSError:
        return False
    return True


def wanted(root: str, starting: bool = False) -> bool:
    """Whether a server may run for `root` (`residency.refusal`: `hooks.resident` or
    `STELE_RESIDENT=1`, and never in CI or on a read-only or temporary mount); false also when the
    config cannot be read (the hooks say why, and a server would only refuse every call). `starting`:
    also not while `stele pause` holds the hooks (a paused checkout gets no new process)."""
    from pathlib import Path

    from ...hooks.state import paused
    from ...project import Project
    from ...residency import refusal

    try:
        project = Project(Path(root))
        if refusal(root, bool(project.config["hooks.resident"])) is not None:
            return False
        return not (starting and paused(project))
    except Exception:
        return False
