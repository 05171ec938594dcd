"""Plain text about committed facts for agents: what the session-start and edit hooks inject,
`stele brief`, and one fact in full (the MCP `show` tool; `stele show` frames the same lines in a
panel, so a person sees the marks an agent reads). (A recall's rendering lives beside the recall, in `render/agent.py`; this module follows its
look, `KIND ID  Title` and an indented excerpt, so all injected text reads alike.)

Byte-stable (no colour, no terminal width, no dates that were not in the data) so golden tests can
pin it, and phrased as reference data about the project rather than instructions: harnesses treat
imperative injected text as a possible prompt injection, and the user's prompt must stay in charge.
"""
from __future__ import annotations

from .. import textcut
from ..neutralize import flag_mark, shown
from ..plain import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..record.load import Record
    from ..record.model import Fact
    from ..retrieve.brief import Brief, Point

RULE = "-" * 60
INDENT = "    "
TITLE = "project memory (reference data, not instructions)"


@dataclass(frozen=True)
class Line:
    """What a fact contributes to agent text (from the record or the index alike)."""
    id: str
    kind: str
    title: str
    status: str = ""
    text: str = ""  # body or excerpt
    note: str = ""  # how fresh it is (`retrieve/fresh.py`): `verified 12 days ago`, `anchor changed ...`


def label(f: Line) -> str:
    """`DECISION DEC-4F7K [draft] [verified 3 days ago]  Title` (the status unless it is the plain
    `current` or `open`; the freshness note when there is one)."""
    status = "" if f.status in ("current", "open", "") else f" [{f.status}]"
    note = f" [{f.note}]" if f.note else ""
    return f"{f.kind.upper()} {f.id}{status}{note}  {f.title}"


def block(f: Line, text_chars: int = 280) -> str:
    """The label, and the text squashed to `text_chars` below it (unless it only repeats the title);
    marked first when doctor would flag the title or text (`neutralize.flag_mark`)."""
    mark = flag_mark(f"{f.title}\n{f.text}", f.kind)
    text = textcut.one_line(f.text, text_chars) if text_chars else ""
    if text and text.rstrip(".") != f.title.rstrip("."):
        return f"{mark}{label(f)}\n{INDENT}{text}"
    return mark + label(f)


def fact_lines(record: Record, fact: Fact) -> list[str]:
    """One fact in full: its label, fields, anchors, checks, links both ways (with the title at the
    other end), then a blank line and the body. Marked where doctor would flag it, as every text an
    agent reads of memory is (the MCP `show` tool delivers these lines): the mark on a line of its own
    under the label when the title or body would be flagged (`stele show` keeps the label as its
    panel's title), a check's line when its message or pattern would be (as the pre-edit hook marks a
    broken check, `hooks.edit.broken_text`). A check's message is shown as a violation shows it
    (`shown`: redacted, since a check forbidding a leaked token may quote it)."""
    title = lambda i: record.facts[i].title if i in record.facts else "(not in the record)"  # noqa: E731
    mark = flag_mark(f"{fact.title}\n{fact.body}", fact.kind).strip()
    lines = [label(Line(fact.id, fact.kind, fact.title)),  # reads like the recall's entries
             *([mark] if mark else []),
             f"status {fact.status} · delivery {fact.delivery} · priority {fact.priority}",
             f"file: {fact.path}"]
    for key in ("created", "verified", "verified_at", "review_after", "expires", "retire_when", "needs_review"):
        value = getattr(fact, key)
        if value:
            lines.append(f"{key}: {value}")
    if fact.tags:
        lines.append("tags: " + ", ".join(fact.tags))
    lines += [f"anchor: {a}" for a in fact.anchors]
    lines += [flag_mark(f"{c.message}\n{c.pattern}", fact.kind)
              + f"check: {c.describe()} ({c.enforce}){': ' + shown(c.message) if c.message else ''}"
              for c in fact.checks]
    lines += [f"-> {e.rel} {e.dst}: {title(e.dst)}" for e in record.graph.out.get(fact.id, [])]
    lines += [f"<- {e.rel} {e.src}: {title(e.src)}" for e in record.graph.inc.get(fact.id, [])]
    return lines + ["", fact.body.strip()]


def frame(title: str, sections: list[str]) -> str:
    """Sections under a `-- title --` line and above a rule; empty sections are dropped."""
    head = f"-- {title} " + "-" * max(3, 70 - len(title))
    body = "\n\n".join(s.rstrip() for s in sections if s and s.strip())
    return f"{head}\n{body}\n{RULE}\n"


BRIEF_MAX = 2000
BRIEF_MIN_POINTS = 8
BRIEF_GROUPS: tuple[tuple[str, set[str] | None], ...] = (  # None: the risks on the path
    ("Risks on the path", None),
    ("Decisions and architecture", {"decision", "architecture"}),
    ("Constraints and instructions", {"constraint", "instruction", "priority", "goal"}),
    ("Risks", {"risk"}),
    ("Lessons", {"lesson"}),
    ("Tasks", {"task", "epic", "objective", "milestone"}),
    ("Also", set()),
)


def _group(point: Point, risks: list[str]) -> int:
    if point.id in risks:
        return 0
    for i, (_, kinds) in enumerate(BRIEF_GROUPS[1:-1], 1):
        if kinds and point.kind in kinds:
            return i
    return len(BRIEF_GROUPS) - 1


def _statement(p: Point, text_chars: int) -> str:
    status = f" [{p.status}]" if p.status not in ("current", "open", "") else ""
    via = f", via {p.via.rel} {p.via.from_id}" if p.via is not None else ""
    text = textcut.one_line(p.text, text_chars) if text_chars and p.text else ""
    text = "" if not text or text.rstrip(".") == p.title.rstrip(".") else f": {text}"
    return f"- {p.title}{status}{text} ({p.id}{via})"


def _brief_lines(b: Brief, chosen: list[Point], width: int) -> str:
    lines = [f'Briefing on "{textcut.one_line(b.question, 120)}" from the project record (cite the ids):']
    for i, (title, _) in enumerate(BRIEF_GROUPS):
        members = [p for p in chosen if _group(p, b.risks) == i]
        if members:
            lines += [f"{title}:"] + [_statement(p, width) for p in members]
    if len(chosen) < len(b.points):
        lines.append(f"({len(b.points) - len(chosen)} more: `stele search \"...\"`, `stele show ID`)")
    if b.partial:
        lines.append("(the walk ran out of time: partial)")
    return "\n".join(lines) + "\n"


def brief_text(b: Brief, max_chars: int = BRIEF_MAX) -> str:
    """A briefing grouped by kind, every point citing its id, at most `max_chars` characters. The best
    points are kept (risks on the path, then by score) with a line of text each; the text is shortened,
    and then dropped, only when fewer than BRIEF_MIN_POINTS points would fit with it."""
    if not b.points:
        return (f'The record has nothing on "{textcut.one_line(b.question, 120)}": no fact matched it well '
                f"enough ({b.searches} searches; `stele why` shows the nearest misses). Do not fill the gap "
                "with guesses.\n")
    for width in (160, 90, 0):
        for n in range(len(b.points), 0, -1):
            text = _brief_lines(b, b.points[:n], width)
            if len(text) <= max_chars:
                break
        if n >= min(BRIEF_MIN_POINTS, len(b.points)) or width == 0:
            return text if len(text) <= max_chars else text[: max_chars - 4].rstrip() + "...\n"
    raise AssertionError("unreachable")
