"""Plain text about committed facts for agents: what the session-start and edit hooks inject, and
`stele brief`. (A recall's rendering lives beside the recall, in `render/agent.py`.)

Byte-stable (no colour, no terminal width, no dates that were not in the data) so golden tests can
pin it, and phrased as reference data about the project rather than instructions: harnesses treat
imperative injected text as a possible prompt injection, and the user's prompt must stay in charge.
"""
from __future__ import annotations

from ..model import Fact

RULE = "-" * 60


def squash(text: str, limit: int) -> str:
    """`text` on one line, cut at a word boundary to at most `limit` characters."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 3].rsplit(" ", 1)[0]
    return (cut or text[: limit - 3]) + "..."


def label(fact: Fact) -> str:
    """`RISK-2M9Q risk [draft]: Title` (the status unless it is the plain `current` or `open`)."""
    status = "" if fact.status in ("current", "open", "") else f" [{fact.status}]"
    return f"{fact.id} {fact.kind}{status}: {fact.title}"


def fact_block(fact: Fact, body_chars: int = 280, indent: str = "  ") -> str:
    """A fact as a label line plus its body squashed to `body_chars` (nothing when the body only
    repeats the title)."""
    body = squash(fact.body, body_chars) if body_chars else ""
    if body and body.rstrip(".") != fact.title.rstrip("."):
        return f"{label(fact)}\n{indent}{body}"
    return label(fact)


def frame(title: str, sections: list[str], footer: str = "") -> str:
    """Sections between two rules, headed by `title`; empty sections are dropped."""
    parts = [f"-- {title} " + "-" * max(3, 56 - len(title))]
    parts += [s.rstrip() for s in sections if s and s.strip()]
    if footer:
        parts.append(footer)
    parts.append(RULE)
    return "\n\n".join(parts[:-1]) + "\n" + parts[-1]
