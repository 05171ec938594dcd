"""What the resident server and its callers share: the socket's name, the messages and their limits.

The caller imports this on every hook, so it imports nothing at module level but os and sys (not even
typing: with re, through it, a third of the caller's cost), and its names are public: the server,
the child and the tests use them.

A call, on one connection: the caller sends (PROTOCOL, "run", root, argv, cwd, env, umask, digest)
as a length-prefixed marshal; the server answers "R" (refused: run it yourself) or "G" and the budget
in ms; only then does the caller pass its stdin, stdout and stderr (SCM_RIGHTS, one byte "F"); the
call's child sends "P" and its pid, then "D", a length and (exit code, CPU, peak RSS, faults) before
it exits. A `status` or `stop` request gets "S" and a marshal, or "R".
"""
from __future__ import annotations

import os
import sys

PROTOCOL = 3
NAME = b"stele-resident"
MAX_HEADER = 1 << 20
GO_S = 0.25  # a server that has not taken a call by then is stopped or starved: the call runs here
ANSWER_GRACE_S = 0.5  # past the hook's budget, for the child's own fail-open answer to arrive
REQUEST_S = 2.0  # a status or stop request
ENV = "STELE_RESIDENT"
IDLE_ENV = "STELE_RESIDENT_IDLE_S"
IDLE_S = 600.0
MAX_ENV = "STELE_RESIDENT_MAX"
MAX_SERVERS = 4  # per user: a server that starts past it stops the least recently used
USAGE_ENV = "STELE_RESIDENT_USAGE"  # the bench's window on a child's cost
RESPAWN_S = 60.0  # a server that did not come up is not started again sooner than this
SERVE_COMMAND = "resident-serve"  # `python -m stele resident-serve ROOT`: the server's process (cli/entry.py)


def address(root: str) -> bytes:
    """The abstract socket's name: per user and per root (a name clash only costs the speed-up: the
    server checks the root it is sent)."""
    key = root.encode("utf-8", "surrogateescape")
    return b"\0%s/%d/%s/%d" % (NAME, os.getuid(), fnv(key).encode(), len(key))


def fnv(data: bytes) -> str:
    """FNV-1a, 32 bits, as hex: zlib's crc32 would cost the caller an import (~0.4 ms)."""
    digest = 0x811C9DC5
    for byte in data:
        digest = ((digest ^ byte) * 0x01000193) & 0xFFFFFFFF
    return f"{digest:08x}"


def install_digest() -> str:
    """Which Stele answers: its version and the folder it is installed in (a server of another
    install or version refuses the call, which then runs in its own process)."""
    package = sys.modules[__name__.split(".")[0]]
    where = os.path.dirname(getattr(package, "__file__", "") or "").encode("utf-8", "surrogateescape")
    return f"{getattr(package, '__version__', '?')}/{fnv(where)}"


def peer_cred(sock) -> tuple[int, int]:
    """The other end's (pid, uid), from SO_PEERCRED (pid 0: outside this pid namespace)."""
    import _socket

    ucred = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)  # pid, uid, gid: 3 C ints
    return (int.from_bytes(ucred[:4], sys.byteorder, signed=True),
            int.from_bytes(ucred[4:8], sys.byteorder, signed=True))


def fd_bytes(fds: list[int]) -> bytes:
    """File descriptors as SCM_RIGHTS carries them (C ints), without the array module (~2 ms to import)."""
    return b"".join(fd.to_bytes(4, sys.byteorder, signed=True) for fd in fds)


def send(sock, message: tuple) -> None:
    import marshal

    data = marshal.dumps(message)
    sock.sendall(len(data).to_bytes(4, "big") + data)


def recv_exact(sock, size: int) -> bytes:
    """`size` bytes, or fewer when the other end closed first."""
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            break
        data += chunk
    return data


def reply(sock, child: list[int] | None = None) -> bytes:
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


def flush_stdio() -> None:
    """Flush stdout and stderr before an `os._exit` (one that cannot be written to is no error)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
