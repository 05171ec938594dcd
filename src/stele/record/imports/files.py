"""Reading the files an import names: UTF-8 text, a regular file, inside the repository, at most 1 MB.

Why it is shaped this way: the files `stele import` reads arrive in pull requests. An ADR folder can
hold a link named `0003-x.md` pointing at `~/.ssh/config` (its lines would become a fact), at
`/dev/zero` (read until memory runs out) or a FIFO (never answers), a folder named like an ADR, a
binary, a 200 MB file, or a file whose name carries a terminal escape. Each such file is one line in
the report, naming it and why, and the import goes on with the rest; nothing here raises past the
file. The checks on what may be read are `treefile`'s (regular files only, links kept inside the
root, a size limit); this module adds what an imported file must be: text (no NUL byte), UTF-8 (a
byte-order mark is dropped: Windows editors write one), and a name a terminal can show.
"""
from __future__ import annotations

import os
from pathlib import Path

from ... import gitrepo, treefile
from ...neutralize import neutralize

MAX_BYTES = 1_000_000  # an ADR or a rules file is a few KB; Codex reads at most 32 KiB of AGENTS.md


class Unreadable(Exception):
    """Why a file is not imported (one line, ending in what to do)."""


def read(path: Path, rel: str, root: Path | None) -> str:
    """The text of `path` (shown as `rel`), with `\\n` line ends; `root`: the folder it must lie in (None
    for per-user harness memory, outside the repository by design). Unreadable says why not."""
    if shown(rel) != rel:
        raise Unreadable("its name holds control or invisible characters (shown escaped): rename it")
    try:
        data = treefile.read_bytes(path, root, limit=MAX_BYTES)
    except OSError as e:
        raise Unreadable(_why(e)) from None
    if root is not None:
        _not_ignored(path, rel, root)
    if b"\0" in data:
        raise Unreadable("a binary file (it holds NUL bytes), not Markdown")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise Unreadable(f"not UTF-8 text (byte 0x{data[e.start]:02X} on line {line}): convert it "
                         "(`iconv -f latin1 -t utf-8`) and import again") from None
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def _not_ignored(path: Path, rel: str, root: Path) -> None:
    """A link inside the repository may not lead to a file git ignores: `0009-x.md -> ../../.env` would
    copy this clone's own secrets into a fact for the team's record (a link to a tracked file, such as
    `CLAUDE.md -> AGENTS.md`, is read)."""
    real = Path(os.path.realpath(path))
    target = real.relative_to(os.path.realpath(root)).as_posix()
    if target == rel:
        return
    listed = gitrepo.run(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", target)
    if not listed.strip(b"\0"):
        raise Unreadable(f"a link to a file git ignores ({shown(target)}): import the files the team shares")


def shown(rel: str) -> str:
    """A file's name as one line of the report: a newline as `\\n`, control characters made visible."""
    return neutralize(rel.replace("\n", "\\n"))


def skipped(rel: str, why: str) -> str:
    return f"{shown(rel)}: skipped, {why}"


def _why(e: OSError) -> str:
    said = str(e).rsplit(": ", 1)[-1] if e.errno is None else (e.strerror or str(e)).lower()
    if said == "a link out of the repository":
        return "a link out of the repository (import files of this repository, not what they point to)"
    if said == "not a regular file":
        return "not a regular file (a folder, a FIFO, a device or a link to one)"
    if "over the limit" in said:
        return f"{said} bytes for one imported file: split it, or `stele remember` what matters in it"
    return said
