"""Reading a file of the working tree that the record or an agent names: regular files only.

A pull request can add a symbolic link in the code (`src/zero.py -> /dev/zero`) and a fact anchored
to it: reading that "file" never ends, and a FIFO never answers. Every reader of anchored or indexed
code goes through `read_bytes`, which opens without blocking and reads only what `fstat` calls a
regular file, and, given the repository's root, only one that lies inside it: a link in the code
pointing out of the checkout (`src/mod.py -> ~/.ssh/config`) would otherwise carry that file's lines
into an agent's context through an anchor. `limit` caps what one read may bring into memory: a
file over it is refused from its size (`stele import` reads whole files a pull request may add).
"""
from __future__ import annotations

import os
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path


def read_bytes(path: Path | str, root: Path | str | None = None, limit: int | None = None) -> bytes:
    """The bytes of the regular file at `path` (a link is followed, within `root` when given). OSError
    for anything else: a device, a FIFO, a socket, a folder or a link out of `root` is refused as a
    file that cannot be read, and so is a file of more than `limit` bytes, when given."""
    if root is not None and not inside(path, root):
        raise OSError(f"{path}: a link out of the repository")
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(f"{path}: not a regular file")
        if limit is not None and st.st_size > limit:
            raise OSError(f"{path}: {st.st_size:,} bytes, over the limit of {limit:,}")
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read() if limit is None else f.read(limit + 1)
        if limit is not None and len(data) > limit:  # it grew while being read
            raise OSError(f"{path}: over the limit of {limit:,} bytes")
        return data
    finally:
        os.close(fd)


def read_text(path: Path | str, errors: str = "strict", root: Path | str | None = None) -> str:
    """`read_bytes` as UTF-8 with universal newlines, as `Path.read_text` gives it."""
    text = read_bytes(path, root).decode("utf-8", errors)
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def inside(path: Path | str, root: Path | str) -> bool:
    """Whether `path`, every link on the way followed, lies within `root` (also resolved)."""
    real, base = os.path.realpath(path), os.path.realpath(root)
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)
