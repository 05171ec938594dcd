"""Parsed frontmatter kept between loads, keyed by each file's content: a large record loads without
parsing its YAML again.

Parsing is most of a load (10,000 fact files: 0.39 s of YAML, the C parser calling back into Python
for every node), and an unchanged file parses to the same document every time. So each parse is kept,
keyed by a digest of the text itself, not by the file's size and mtime: the loader reads every file
anyway (the checks scan the text), a digest costs about a microsecond a file, and an edit that keeps
the size and the mtime (two writes in one clock tick, a checkout) is never served a stale parse.

The file lives in the worktree's git dir (`.git/stele/parse-cache`, beside the record's write state),
not under `.stele/`: anything in the work tree can be committed, and a cache arriving with a pull
request would decide what CI's `doctor` and every agent read of a fact, unseen by the reviewer. It is
derived state: missing, corrupt, or written by another parser, PyYAML or Python, it is ignored and
written anew; `STELE_PARSE_CACHE=0` turns it off. A fresh clone (CI) simply parses everything.
"""
from __future__ import annotations

import hashlib
import marshal
import os
import sys
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from .. import atomic
from . import frontmatter

if TYPE_CHECKING:
    from ..project import Project

ENV = "STELE_PARSE_CACHE"  # "0": no cache is read or written
MAGIC = b"stele parse-cache 1\n"


@cache
def _stamp() -> bytes:
    """What a parse depends on besides the text: the parser's source, PyYAML and marshal's format
    (a changed parser makes every old entry wrong, so the whole file is then ignored)."""
    import yaml

    digest = hashlib.sha256(Path(frontmatter.__file__).read_bytes())
    digest.update(f"{yaml.__version__} {sys.version} {marshal.version}".encode())
    return digest.hexdigest().encode() + b"\n"


def location(project: Project) -> Path:
    return project.git_dir / "stele" / "parse-cache"


class ParseCache:
    """`parse` is `frontmatter.parse`, from the cache when the same text was parsed before; `save`
    keeps the parses of this load (and only those: a file that changed or went away drops out)."""

    def __init__(self, path: Path, entries: dict[bytes, bytes]) -> None:
        self.path = path
        self._old = entries
        self._new: dict[bytes, bytes] = {}
        self.hits = 0

    @classmethod
    def open(cls, project: Project) -> ParseCache | None:
        """The project's cache; None when it is turned off or there is no git dir to keep it in (none
        is made for it)."""
        path = location(project)
        if os.environ.get(ENV) == "0" or not path.parent.parent.is_dir():
            return None
        return cls(path, _read(path))

    def parse(self, text: str) -> frontmatter.Document:
        key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        if key in self._new:
            return frontmatter.parse(text)  # the same text twice in one record: its own objects each
        blob = self._old.get(key)
        doc = _document(text, blob) if blob is not None else None
        if blob is not None and doc is not None:
            self.hits += 1
            self._new[key] = blob
            return doc
        doc = frontmatter.parse(text)  # a bad file raises, and is parsed (and reported) every time
        try:
            self._new[key] = marshal.dumps((doc.meta, doc.key_lines, doc.item_lines, doc.blocks, doc.preamble,
                                            len(doc.raw) - len(doc.body)))
        except ValueError:
            pass  # a value marshal cannot hold (a `!!timestamp` date): that file is parsed every time
        return doc

    def save(self) -> None:
        """Write the parses of this load when they differ from the file's; a cache that cannot be
        written (a read-only clone) is no error."""
        if self.hits == len(self._new) == len(self._old):
            return
        try:
            atomic.write(self.path, MAGIC + _stamp() + marshal.dumps(self._new), durable=False)
        except OSError:
            pass


def _read(path: Path) -> dict[bytes, bytes]:
    try:
        data = path.read_bytes()
    except OSError:
        return {}
    head = MAGIC + _stamp()
    if not data.startswith(head):
        return {}
    try:
        entries = marshal.loads(data[len(head):])
    except (ValueError, EOFError, TypeError):
        return {}
    return entries if isinstance(entries, dict) else {}


def _document(text: str, blob: bytes) -> frontmatter.Document | None:
    """The document `frontmatter.parse(text)` gives, from a cache entry; None for an entry that is
    not one (a damaged file)."""
    try:
        meta, key_lines, item_lines, blocks, preamble, body_at = marshal.loads(blob)
    except (ValueError, EOFError, TypeError):
        return None
    raw = text[1:] if text.startswith("\ufeff") else text
    shapes = ((meta, dict), (key_lines, dict), (item_lines, dict), (blocks, dict), (preamble, str), (body_at, int))
    if not all(type(value) is kind for value, kind in shapes) or not 0 <= body_at <= len(raw):
        return None
    return frontmatter.Document(meta=meta, body=raw[body_at:], raw=raw, key_lines=key_lines,
                                item_lines=item_lines, blocks=blocks, preamble=preamble)
