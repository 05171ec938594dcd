"""The resident server: one process per repository that answers hooks, `recall` and `search` by
forking, so a hook pays neither the interpreter's imports nor a stat of every source file.

A hook runs in a fresh process on every prompt and edit. On a 10,000-fact record most of its time was
spent before any retrieval: importing Stele and tantivy (~90 ms of CPU) and stat-ing every source file
for freshness (~40 ms). The server imports all of it once, keeps the sources' scan live with inotify
(`index/watch.py`), and for each call forks a child that runs the very same code as a fresh process
would (`cli.entry.here`, handed to the server as `run`), with the caller's arguments, working directory, environment, umask and its
stdin, stdout and stderr (passed over the socket as file descriptors). A forked child starts with
empty caches and nothing open but what it was given, so each call is as independent as a new process;
the parent never runs Stele code itself (it only imports), which is what keeps the children fresh.
Between calls the server forks one spare child ahead and lets it warm up on the record (`warm.py`: reads
only, nothing kept that depends on the record), and hands it the next call if the sources have not
changed since; the call then skips the first-touch costs that were half of a child's time.

The caller (`delegate`, first thing in `stele hook ...`, `stele recall` and `stele search`) imports
only os, sys, socket and marshal. It connects to an abstract Unix socket named after the repository's
root and the user; nobody there, a server of another user (checked both ways with SO_PEERCRED), a
server for another root, or one whose Stele files changed since it started: the command runs in its
own process as before, and a hook then starts a server for next time (`start`). The server exits
after `STELE_RESIDENT_IDLE_S` (default 600) seconds without a call, when its repository or `.stele`
goes away, when Stele's own files change (an upgrade), or when `hooks.resident` is false.

This module is the caller's side and what both sides share; the server is `resident_server.py`. It
imports nothing at module level but os and sys (not even typing: with re, through it, a third of the
caller's cost). Linux only (abstract sockets, inotify, pidfd); elsewhere every command runs in its own
process.
Off by default (`residency.py` says when it may run): `hooks.resident: true` turns it on for a
repository, `STELE_RESIDENT=1` for one environment, `STELE_RESIDENT=0` off for one environment.
"""
from __future__ import annotations

import os
import sys

ENV = "STELE_RESIDENT"
IDLE_ENV = "STELE_RESIDENT_IDLE_S"
IDLE_S = 600.0
MAX_ENV = "STELE_RESIDENT_MAX"
MAX_SERVERS = 4  # per user: a server that starts past it stops the least recently used
PROTOCOL = 3
RUN_DIR = "run"  # under .stele: the server's lock and log
LOCK, LOG, SPAWNED = "resident.lock", "resident.log", "resident.spawned"
RESPAWN_S = 60.0  # a server that did not come up is not started again sooner than this
MAX_HEADER = 1 << 20
GO_S = 0.25  # a server that has not taken a call by then is stopped or starved: the call runs here
ANSWER_GRACE_S = 0.5  # past the hook's budget, for the child's own fail-open answer to arrive
REQUEST_S = 2.0  # a status or stop request
# What the server runs (checked on both sides, `allowed`): the agent hooks (not `pre-commit`, which
# reads the index git names in GIT_INDEX_FILE, a variable a child never gets), `recall` and `search`.
HOOK_EVENTS = ("session-start", "session", "prompt", "pre-edit", "post-edit", "subagent-start", "stop",
               "subagent-stop", "session-end", "guard-readonly")
SERVE_COMMAND = "resident-serve"  # `python -m stele resident-serve ROOT`: the server's process (cli/entry.py)


def enabled() -> bool:
    """Whether this environment may use a resident server at all (`residency.py`: Linux, not
    `STELE_OFF`, not `STELE_RESIDENT=0`, not CI); whether a repository wants one is `wanted`."""
    from ..residency import environment_refusal

    return environment_refusal() is None


def allowed(argv: object) -> bool:
    """Is `argv` a call the server runs: an agent hook, `recall` or `search`?"""
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        return False
    return argv[0] in ("recall", "search") or (argv[0] == "hook" and argv[1:2] != [] and argv[1] in HOOK_EVENTS)


def install_digest() -> str:
    """Which Stele answers: its version and the folder it is installed in (a server of another
    install or version refuses the call, which then runs in its own process)."""
    package = sys.modules[__name__.split(".")[0]]
    where = os.path.dirname(getattr(package, "__file__", "") or "").encode("utf-8", "surrogateescape")
    digest = 0x811C9DC5
    for byte in where:
        digest = ((digest ^ byte) * 0x01000193) & 0xFFFFFFFF
    return f"{getattr(package, '__version__', '?')}/{digest:08x}"


def find_root(start: str) -> str | None:
    """The repository root above `start` that has Stele set up (`project.find_root`'s rule, plus
    `.stele`), without importing pathlib."""
    here = os.path.realpath(start)
    while True:
        if os.path.exists(os.path.join(here, ".git")):
            return here if os.path.isdir(os.path.join(here, ".stele")) else None
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def address(root: str) -> bytes:
    """The abstract socket's name: per user and per root (a name clash only costs the speed-up: the
    server checks the root it is sent)."""
    key = root.encode("utf-8", "surrogateescape")
    digest = 0x811C9DC5  # FNV-1a, 32 bits: zlib's crc32 would cost the caller an import (~0.4 ms)
    for byte in key:
        digest = ((digest ^ byte) * 0x01000193) & 0xFFFFFFFF
    return b"\0stele-resident/%d/%08x/%d" % (os.getuid(), digest, len(key))


def _peer_uid(sock) -> int:
    import _socket

    ucred = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)  # pid, uid, gid: 3 C ints
    return int.from_bytes(ucred[4:8], sys.byteorder, signed=True)


def _connect(root: str, timeout: float, at: bytes | None = None):
    """A connection to the server of `root` (or at the address `at`), None when none answers there."""
    import _socket  # not socket.py: it imports enum and selectors (~4 ms a call)

    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM | _socket.SOCK_CLOEXEC)
    sock.settimeout(timeout)  # a frozen server's full backlog blocks connect itself
    try:
        sock.connect(at or address(root))
        if _peer_uid(sock) != os.getuid():
            raise OSError("the socket belongs to another user")
    except TimeoutError:
        sock.close()
        raise
    except OSError:
        sock.close()
        return None
    return sock


def fd_bytes(fds: list[int]) -> bytes:
    """File descriptors as SCM_RIGHTS carries them (C ints), without the array module (~2 ms to import)."""
    return b"".join(fd.to_bytes(4, sys.byteorder, signed=True) for fd in fds)


def _send(sock, message: tuple, fds: list[int] | None = None) -> None:
    import _socket
    import marshal

    data = marshal.dumps(message)
    payload = [len(data).to_bytes(4, "big") + data]
    if fds:
        sent = sock.sendmsg(payload, [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fd_bytes(fds))])
        if sent < len(payload[0]):
            sock.sendall(payload[0][sent:])
    else:
        sock.sendall(payload[0])


def _reply(sock, child: list[int] | None = None) -> bytes:
    """The server's answer: a call's (b"P" and its child's pid, then b"D", its length, then the data:
    sent by the call's child before it exits, while the server still holds the connection), else
    everything up to the end. The pid goes to `child`, for a caller that gives up waiting."""
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
        if data[:1] == b"P" and len(data) >= 5:
            if child is not None:
                child.append(int.from_bytes(data[1:5], "big"))
            data = data[5:]
        size = 5 + int.from_bytes(data[1:5], "big") if data[:1] == b"D" and len(data) >= 5 else None
        if size is not None and len(data) >= size:
            return b"D" + data[5:size]
    return b"" if data[:1] in (b"D", b"P") else data  # a D cut short is a lost call


def _recv_exact(sock, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            break
        data += chunk
    return data


def _lost(argv: list[str], why: str) -> int:
    """A call the server took and did not finish: its input is gone, so it cannot be run again; a
    hook fails open (but the read-only guard, which fails closed)."""
    sys.stderr.write(f"stele: the resident process {why} (continuing without memory); "
                     f"set {ENV}=0 to run every call in its own process\n")
    return 0 if argv[:1] == ["hook"] and argv[1:2] != ["guard-readonly"] else 3


def delegate(argv: list[str]) -> tuple[int | None, str | None]:
    """Run `argv` in the resident server of the working directory's repository: (exit code, root),
    or (None, root) when it has to run here (root is None outside a Stele repository).

    Never a hang: the server must take the call within GO_S (its go-ahead, before any descriptor is
    sent, so a frozen server holds none of the caller's: past it the call runs here, and says so
    once on stderr), and its child must answer within the hook's budget the go-ahead carries (past
    it the child is killed and a hook fails open)."""
    if not enabled():
        return None, None
    root = find_root(os.getcwd())
    if root is None:
        return None, root
    import _socket
    import time

    start = time.monotonic()
    try:
        sock = _connect(root, GO_S)
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
            _send(sock, (PROTOCOL, "run", root, argv, os.getcwd(), dict(os.environ), umask, install_digest()))
            go = _recv_exact(sock, 5)
        except TimeoutError:
            return _too_slow(root)
        if go[:1] != b"G" or len(go) != 5:  # refused (R), or gone before it read anything: run here
            return None, root
        sock.settimeout(int.from_bytes(go[1:5], "big") / 1000 + ANSWER_GRACE_S)
        sock.sendmsg([b"F"], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fd_bytes([0, 1, 2]))])
        answer = _reply(sock, child)
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
        code, *_usage = marshal.loads(answer[1:])
        if os.environ.get("STELE_RESIDENT_USAGE"):  # the bench's window on the child's cost
            with open(os.environ["STELE_RESIDENT_USAGE"], "a", encoding="utf-8") as f:
                f.write(" ".join(map(str, [code, *_usage])) + "\n")
        return int(code), root
    # The child died without an exit status (killed): its input is gone, so it cannot be run again.
    return _lost(argv, "lost this call"), root


def _too_slow(root: str) -> tuple[None, str]:
    sys.stderr.write(f"stele: the resident process did not take this call within {GO_S * 1000:.0f} ms "
                     "(stopped, or the machine is overloaded); running it in its own process\n")
    return None, root


def flush_stdio() -> None:
    """Flush stdout and stderr before an `os._exit` (one that cannot be written to is no error)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass


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
        sock = _connect(root, REQUEST_S, at)
    except OSError:
        return None
    if sock is None:
        return None
    try:
        _send(sock, (PROTOCOL, kind, root, [], "", {}, 0, install_digest()))
        answer = _reply(sock)
    except OSError:
        return None
    finally:
        sock.close()
    return marshal.loads(answer[1:]) if answer[:1] == b"S" else None


def running() -> list[bytes]:
    """The addresses of this user's servers (every repository's), from /proc/net/unix."""
    prefix = b"@" + address("")[1:].split(b"/")[0] + b"/%d/" % os.getuid()
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
    import time

    run = os.path.join(root, ".stele", RUN_DIR)
    marker = os.path.join(run, SPAWNED)
    try:
        if time.time() - os.stat(marker).st_mtime < RESPAWN_S:
            return False
    except OSError:
        pass
    if not wanted(root, starting=True):
        return False  # nothing written: off (the default), paused, CI, a read-only or temporary mount
    import subprocess

    try:
        os.makedirs(run, exist_ok=True)
        with open(marker, "w", encoding="utf-8") as f:
            f.write(f"{os.getpid()}\n")
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

    from ..hooks.state import paused
    from ..project import Project
    from ..residency import refusal

    try:
        project = Project(Path(root))
        if refusal(root, bool(project.config["hooks.resident"])) is not None:
            return False
        return not (starting and paused(project))
    except Exception:
        return False
