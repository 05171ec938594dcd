"""Plain text about committed facts for agents: what the session-start and edit hooks inject, and
`stele brief`. (A recall's rendering lives beside the recall, in `render/agent.py`; this module
follows its look, `KIND ID  Title` and an indented excerpt, so all injected text reads alike.)

Byte-stable (no colour, no terminal width, no dates that were not in the data) so golden tests can
pin it, and phrased as reference data about the project rather than instructions: harnesses treat
imperative injected text as a possible prompt injection, and the user's prompt must stay in charge.
"""
from __future__ import annotations

from dataclasses import dataclass

RULE = "-" * 60
INDENT = "    "


@dataclass(frozen=True)
class Line:
    """What a fact contributes to agent text (from the record or the index alike)."""
    id: str
    kind: str
    title: str
    status: str = ""
    text: str = ""  # body or excerpt


def squash(text: str, limit: int) -> str:
    """`text` on one line, cut at a word boundary to at most `limit` characters."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 3].rsplit(" ", 1)[0]
    return (cut or text[: limit - 3]) + "..."


def label(f: Line) -> str:
    """`DECISION DEC-4F7K [draft]  Title` (the status unless it is the plain `current` or `open`)."""
    status = "" if f.status in ("current", "open", "") else f" [{f.status}]"
    return f"{f.kind.upper()} {f.id}{status}  {f.title}"


def block(f: Line, text_chars: int = 280) -> str:
    """The label, and the text squashed to `text_chars` below it (unless it only repeats the title)."""
    text = squash(f.text, text_chars) if text_chars else ""
    if text and text.rstrip(".") != f.title.rstrip("."):
        return f"{label(f)}\n{INDENT}{text}"
    return label(f)


def frame(title: str, sections: list[str]) -> str:
    """Sections under a `-- title --` line and above a rule; empty sections are dropped."""
    head = f"-- {title} " + "-" * max(3, 70 - len(title))
    body = "\n\n".join(s.rstrip() for s in sections if s and s.strip())
    return f"{head}\n{body}\n{RULE}\n"
