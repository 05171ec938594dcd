"""Reading a file of the working tree that the record or an agent names: regular files only.

A pull request can add a symbolic link in the code (`src/zero.py -> /dev/zero`) and a fact anchored
to it: reading that "file" never ends, and a FIFO never answers. Every reader of anchored or indexed
code goes through `read_bytes`, which opens without blocking and reads only what `fstat` calls a
regular file.
"""
from __future__ import annotations

import os
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path


def read_bytes(path: Path | str) -> bytes:
    """The bytes of the regular file at `path` (a link is followed). OSError for anything else: a
    device, a FIFO, a socket or a folder is refused as a file that cannot be read."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path}: not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read()
    finally:
        os.close(fd)


def read_text(path: Path | str, errors: str = "strict") -> str:
    """`read_bytes` as UTF-8 with universal newlines, as `Path.read_text` gives it."""
    text = read_bytes(path).decode("utf-8", errors)
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text
