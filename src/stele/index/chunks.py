"""Cutting source files into chunks a snapshot can deliver: whole definitions where possible.

A chunk is a line range of one file. Definitions come from `anchors/symbols.py` when it knows the language;
otherwise a line heuristic that holds for most languages finds them: a definition starts at column 0
after a blank line (a comment or decorator right above it belongs to it). Small neighbours are merged
and anything past `MAX_LINES` / `MAX_BYTES` is cut into windows, so every chunk fits a code budget
with room to spare and a 2,000-line file never arrives as one piece.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import accumulate

MAX_LINES = 80
MAX_BYTES = 4096
# Names a line defines, in most languages: `def f`, `class C`, `func (r *R) Do`, `fn x`, `function y`...
_DEF = re.compile(r"^\s*(?:(?:export|default|pub(?:\([^)]*\))?|public|private|protected|internal|static|"
                  r"async|abstract|final|override|open|data|inline|unsafe|extern|const)\s+)*"
                  r"(?:def|class|function\*?|func|fn|struct|interface|trait|impl|enum|type|module|object|"
                  r"record|macro_rules!|sub|proc)\s+(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)")
_CLOSERS = ("}", ")", "]", "end", "fi", "esac", "done", "#endif", "</")


@dataclass(frozen=True)
class Span:
    start: int  # 1-based, inclusive
    end: int
    symbol: str | None  # the main definition of the chunk
    names: tuple[str, ...] = ()  # every name the chunk defines (methods included)


def definition_name(line: str) -> str | None:
    m = _DEF.match(line)
    return m.group(1) if m else None


def _starts(lines: list[str]) -> list[int]:
    """0-based indexes where a top-level piece starts (always 0)."""
    starts = [0]
    for i in range(1, len(lines)):
        line = lines[i]
        if line and not line[0].isspace() and not line.startswith(_CLOSERS) and not lines[i - 1].strip():
            starts.append(i)
    return starts


def spans(text: str, definitions: list[tuple[int, int]] | None = None) -> list[Span]:
    """The chunks of a file's text; `definitions` are known top-level (start, end) line ranges, 1-based."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines:
        return []
    if definitions:
        starts = sorted({0, *(s - 1 for s, _ in definitions if 0 < s <= len(lines))})
    else:
        starts = _starts(lines)
    offsets = list(accumulate((len(line.encode("utf-8")) + 1 for line in lines), initial=0))

    def size(a: int, b: int) -> int:  # bytes of lines[a:b]
        return offsets[b] - offsets[a]

    pieces = [(a, b) for a, b in zip(starts, starts[1:] + [len(lines)], strict=True)]
    merged: list[tuple[int, int]] = []
    for a, b in pieces:  # glue small neighbours together while they stay under the limits
        if merged and (b - merged[-1][0]) <= MAX_LINES // 2 and size(merged[-1][0], b) <= MAX_BYTES // 2:
            merged[-1] = (merged[-1][0], b)
        else:
            merged.append((a, b))
    out: list[Span] = []
    for a, b in merged:
        while a < b:  # cut big pieces into windows
            end = a
            while end < b and end - a < MAX_LINES and (end == a or size(a, end + 1) <= MAX_BYTES):
                end += 1
            while end > a + 1 and not lines[end - 1].strip():
                end -= 1  # trailing blank lines belong to nobody
            names = tuple(dict.fromkeys(n for n in map(definition_name, lines[a:end]) if n))
            if any(line.strip() for line in lines[a:end]):
                out.append(Span(a + 1, end, names[0] if names else None, names))
            a = max(end, a + 1)
            while a < b and not lines[a].strip():
                a += 1
    return out
