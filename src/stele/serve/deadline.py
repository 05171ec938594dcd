"""The reading side of a `stele serve` connection, with a deadline for the whole request.

A per-receive timeout alone lets a client send one byte every few seconds and hold a connection (a
thread and a descriptor) for as long as it likes (slowloris). So the request line and headers must
all arrive within `whole` seconds of their first byte: each receive waits at most the per-receive
timeout and never past that deadline, and a receive past it raises `TimeoutError`, which the standard
library's handler answers by closing the connection. Before the first byte only the per-receive
timeout applies (a connection that sends nothing is closed by it); once the request is read (`done`),
writing the answer has the per-receive timeout again. The server reads no request body (GET and HEAD
have none; any other method is refused unread), so the request line and headers are the request.
"""
from __future__ import annotations

import io
import socket
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _typeshed import WriteableBuffer


class Reader(io.RawIOBase):
    """`socket.makefile("rb")`'s raw layer, with the deadline: wrap it in `io.BufferedReader`."""

    def __init__(self, sock: socket.socket, each: float, whole: float) -> None:
        self.sock, self.each, self.whole = sock, each, whole
        self.ends: float | None = None  # time.monotonic() deadline of the request being read

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        if self.ends is not None:
            left = self.ends - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"the request did not arrive whole within {self.whole:g} s")
            self.sock.settimeout(min(self.each, left))
        got = self.sock.recv_into(buffer)
        if got and self.ends is None:
            self.ends = time.monotonic() + self.whole  # its first byte: the clock starts
        return got

    def done(self) -> None:
        """The request is read: the next one (if the connection is kept) gets its own deadline."""
        self.ends = None
        self.sock.settimeout(self.each)
