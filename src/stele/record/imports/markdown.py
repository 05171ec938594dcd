"""Reading the Markdown teams already wrote (ADRs, AGENTS.md, rule files, harness memories) into
sections, paragraphs and bullets, each with the lines it came from.

Why it is shaped this way: every imported fact names the lines it was read from (`source:`), so the
reader keeps line numbers from the first step to the last. HTML comments (`<!-- vale off -->`, a
template's prompts) are blanked rather than removed, so the lines after them keep their numbers;
fenced code is kept whole inside the paragraph or bullet it belongs to and never read as a heading.
Plain functions over lists of lines: no Markdown library, because the shapes met here are few and a
parser that would read a `#` in a code fence as a heading is the bug this module exists to avoid.
"""
from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field

from ... import textcut
from ...config import load_yaml
from ...errors import ConfigError

# The block `stele install` writes into AGENTS.md and the instruction files (install/files.py BEGIN/END):
# Stele's own words about itself, never a fact of the project.
_STELE_BLOCK = ("<!-- stele:begin", "<!-- stele:end -->")
_COMMENT = ("<!--", "-->")
# Every pattern here runs on text a pull request wrote, up to 1 MB on one line: none may try a long span
# from each of many starts. `(.*?)\s*#*\s*$` for a heading and `\[([^\]]*)\]` for a link took minutes on
# a line of spaces or of `[`; a link's text stops at a bracket and its target at a bracket or parenthesis.
_HEADING = re.compile(r"^(#{1,6})(?:[ \t]+(.*))?$")
_LABEL = r"[^\[\]\n]{0,1000}"
_TARGET = r"[^()\[\]\s]{1,2000}"
_BULLET = re.compile(r"^(\s*)(?:[-*+]|\d+[.)])\s+(.*)$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_OPEN_FENCE = re.compile(r"^(\s*)(```+|~~~+)")


def strip_comments(text: str) -> str:
    """`text` without HTML comments (and without the block `stele install` manages); each leaves its
    newlines, so line numbers hold. An unclosed one is left as written."""
    return _blank(_blank(text, *_STELE_BLOCK), *_COMMENT)


def _blank(text: str, start: str, end: str) -> str:
    """Each span from `start` to the next `end` as its newlines (found with `str.find`: linear)."""
    out: list[str] = []
    at = 0
    while (i := text.find(start, at)) >= 0:
        j = text.find(end, i + len(start))
        if j < 0:
            break
        stop = j + len(end)
        out += [text[at:i], "\n" * text.count("\n", i, stop)]
        at = stop
    return "".join(out) + text[at:] if out else text


def split_frontmatter(text: str) -> tuple[str, str, int]:
    """(frontmatter text, body, number of lines before the body) of a file that may open with `---`."""
    if not text.startswith("---\n"):
        return "", text, 0
    end = text.find("\n---", 3)
    if end < 0:
        return "", text, 0
    after = text.find("\n", end + 4)
    after = len(text) if after < 0 else after + 1
    return text[4:end + 1], text[after:], text[:after].count("\n")


def frontmatter(front: str, where: str, problems: list[str] | None = None) -> dict:
    """`split_frontmatter`'s text as a mapping; {} when there is none or it is not one (an imported
    file's metadata is a hint: a broken block costs the hint, not the file). Why a block was not read
    goes to `problems`, with its line in the file: a YAML bomb in a MADR header read as "no status"."""
    if not front:
        return {}
    try:
        data = load_yaml(front, where)
    except ConfigError as e:
        m = re.match(rf"{re.escape(where)}:(\d+): (.*)", str(e), re.S)
        said = f"line {int(m.group(1)) + 1}: {m.group(2)}" if m else str(e)
        if problems is not None:
            problems.append(f"its frontmatter is not read ({said}); its fields are ignored")
        return {}
    if not isinstance(data, dict) and problems is not None:
        problems.append("its frontmatter is not a mapping of `key: value` lines; it is ignored")
    return data if isinstance(data, dict) else {}


@dataclass
class Block:
    """A paragraph or a bullet (with its nested lines), and its lines in the file (1-based, inclusive)."""
    text: str
    start: int
    end: int
    bullet: bool = False


@dataclass
class Section:
    heading: str  # "" for the text before the first heading
    level: int
    start: int  # the heading's line (or the first line)
    end: int
    blocks: list[Block] = field(default_factory=list)

    def text(self) -> str:
        return "\n\n".join(b.text for b in self.blocks)


def sections(body: str, first_line: int = 1) -> list[Section]:
    """The sections of `body` (a heading and the blocks under it, up to the next heading of any
    level); `first_line` is the file line `body` starts at."""
    out = [Section("", 0, first_line, first_line)]
    lines = body.split("\n")
    fenced = False
    chunk: list[tuple[int, str]] = []

    def flush() -> None:
        if chunk:
            out[-1].blocks.extend(_blocks(chunk))
            chunk.clear()

    for i, line in enumerate(lines):
        n = first_line + i
        if _FENCE.match(line):
            fenced = not fenced
        m = None if fenced else _HEADING.match(line)
        if m:
            flush()
            out[-1].end = max(out[-1].start, n - 1)
            out.append(Section(_heading(m.group(2) or ""), len(m.group(1)), n, n))
            continue
        chunk.append((n, line))
        if line.strip():
            out[-1].end = n
    flush()
    return [s for s in out if s.heading or s.blocks]


def _heading(text: str) -> str:
    """A heading's text without its closing `#`s (only when a space comes before them: `# Use C#`)."""
    text = text.strip()
    bare = text.rstrip("#")
    return bare.rstrip() if bare != text and (not bare or bare[-1] in " \t") else text


def _blocks(lines: list[tuple[int, str]]) -> list[Block]:
    """Paragraphs and bullets: a bullet runs on over its indented continuation lines and sub-bullets;
    a blank line ends a paragraph; a fence is kept whole."""
    out: list[Block] = []
    cur: list[tuple[int, str]] = []
    is_bullet = False
    fenced = False

    def flush() -> None:
        nonlocal cur
        while cur and not cur[-1][1].strip():
            cur.pop()
        text = "\n".join(x for _, x in cur).strip("\n")
        if cur and text.strip():
            out.append(Block(_dedent(text) if not is_bullet else text.strip(), cur[0][0], cur[-1][0], is_bullet))
        cur = []

    for n, line in lines:
        if _FENCE.match(line):
            if not fenced and not cur:
                is_bullet = False
            fenced = not fenced
            cur.append((n, line))
            continue
        if fenced:
            cur.append((n, line))
            continue
        m = _BULLET.match(line)
        if m and not m.group(1):  # a top-level bullet starts a block
            flush()
            is_bullet = True
            cur.append((n, m.group(2)))
        elif not line.strip():
            if cur and not is_bullet:
                flush()
            elif cur:
                cur.append((n, ""))
        elif cur and is_bullet and not line.startswith((" ", "\t")) and cur[-1][1] == "":
            flush()  # a paragraph after a list
            is_bullet = False
            cur.append((n, line))
        else:
            if not cur:
                is_bullet = False
            cur.append((n, line))
    flush()
    return out


def _dedent(text: str) -> str:
    return "\n".join(x.rstrip() for x in text.split("\n"))


def plain(text: str) -> str:
    """One line of Markdown as plain words: emphasis and link syntax dropped, the link text kept."""
    text = re.sub(rf"!?\[({_LABEL})\]\([^()\n]{{0,2000}}\)", r"\1", text)
    text = re.sub(r"(\*\*|__)(.+?)\1", r"\2", text)
    text = re.sub(r"(?<![\w*\\])([*_])(\S.*?)(?<!\\)\1(?![\w*])", r"\2", text)
    return " ".join(unescape(text).split())


_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_CODE_SPAN = re.compile(r"(`[^`\n]*`)")


def unescape(text: str) -> str:
    """Markdown's backslash escapes (`\\"`, `\\*`, `\\_`) as the characters they stand for, outside code
    spans (where a backslash is literal): JabRef's `No \\"new Thread()\\"` is `No "new Thread()"`."""
    if "\\" not in text:
        return text
    return "".join(part if part.startswith("`") else _ESCAPE.sub(r"\1", part) for part in _CODE_SPAN.split(text))


def cut(text: str, limit: int) -> str:
    """`text` cut at a line to at most about `limit` characters, a code fence it stopped inside closed,
    and `[...]` where it goes on (a bullet holding a 230 KB config block was a 230 KB fact)."""
    if len(text) <= limit:
        return text
    kept = textcut.lines(text, limit, "")
    fences = [m for m in (_OPEN_FENCE.match(x) for x in kept.split("\n")) if m]
    if len(fences) % 2:
        kept += "\n" + fences[-1].group(1) + fences[-1].group(2)
    return kept + "\n\n[...]"


_LINK = re.compile(rf"(!?)\[({_LABEL})\]\( ?<?([^()\[\]\s>]{{0,2000}})>?(?: +\"[^\"()\n]{{0,500}}\")? ?\)")


def rebase_links(text: str, folder: str) -> str:
    """Local links, written relative to the file they were in (`[ADR 10](0010-x.md)`, Cursor's
    `[tests/](mdc:tests)`), as their text and the path from the repository root in a code span: the
    fact lives under docs/memory/, where the relative link would lead nowhere. `folder`: the file's
    folder in the repository. Web links, anchors and paths that leave the repository stay as written."""
    def one(m: re.Match[str]) -> str:
        _, label, target = m.groups()
        if target.startswith("mdc:"):
            path = target[4:]
        elif not target or re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith(("#", "/")):
            return m.group(0)
        else:
            path = posixpath.normpath(posixpath.join(folder, target.split("#")[0].split("?")[0]))
        path = posixpath.normpath(path) if path else ""
        if not path or path == "." or path.startswith("../") or path == ".." or "`" in path:
            return m.group(0)
        return f"{label.strip() or path} (`{path}`)" if label.strip() != f"`{path}`" else label

    return _LINK.sub(one, text)


def links(text: str) -> list[tuple[str, str]]:
    """(text, target) of every Markdown link in `text`."""
    return [(m.group(1), m.group(2).strip()) for m in re.finditer(rf"\[({_LABEL})\]\(({_TARGET})[^()\n]{{0,500}}\)", text)]


def code_spans(text: str) -> list[str]:
    return [m.group(1).strip() for m in re.finditer(r"`([^`\n]+)`", text)]
