"""Guidance files (AGENTS.md, CLAUDE.md, Cursor rules, Copilot instructions) as instruction and
constraint drafts.

Each top-level bullet is one fact (its sub-bullets and continuation lines stay with it); a section
with no bullets is one fact of its prose and code; prose beside bullets (other than a line that
introduces them) is named in the report, not imported, so a list of N rules gives at most N facts. A rule's scope in the frontmatter (Cursor's
`globs`, Copilot's `applyTo`, Claude's `paths`) becomes the facts' anchors. A bullet that forbids
(never, do not, must not, avoid, only) is a constraint; the rest are instructions. Delivery is
`ranked`: the harness already loads the file itself on every prompt, so pushing each rule again as
`always` would only repeat it.

The frontmatter is read leniently: Cursor writes `globs: **/*.ts,src/*.md` unquoted, which is not
valid YAML (a leading `*` is an alias), so a key is read from its line when YAML refuses it.
"""
from __future__ import annotations

import posixpath
import re

from ... import textcut
from ...config import load_yaml
from ...errors import ConfigError
from ...kinds import TITLE_MAX
from . import markdown as md
from .draft import Draft

SCOPE_KEYS = ("globs", "applyTo", "paths")
_FORBIDS = re.compile(r"^\W*(never|do not|don't|dont|must not|mustn't|cannot|can't|avoid|no\b|only\b|under no)"
                      r"|\b(must never|must not|never|do not|don't|is forbidden|are forbidden|not allowed)\b", re.I)
_IMPORT_LINE = re.compile(r"^@\S+$")  # CLAUDE.md's `@AGENTS.md`: a pointer, not guidance
PROSE_CHARS = 1200
RULE_CHARS = 2000  # one bullet, with its sub-bullets and code: a rule, not a file
MIN_WORDS = 3  # "Testing", "See below": a heading's echo, not a rule


def read(rel: str, text: str, tag: str) -> list[Draft]:
    text = md.strip_comments(text.replace("\r\n", "\n"))
    front, body, before = md.split_frontmatter(text)
    scope = scope_globs(front, rel)
    out: list[Draft] = []
    for sec in md.sections(body, before + 1):
        blocks = [b for b in sec.blocks if not _IMPORT_LINE.match(b.text.strip())]
        bullets = [b for b in blocks if b.bullet]
        heading = md.plain(sec.heading)
        if bullets:
            drafts = [_draft(rel, b.text, b.start, b.end, heading, scope, tag) for b in bullets]
            beside = [b for b in blocks if not b.bullet and not b.text.rstrip().endswith(":")]
            if beside:
                drafts[0].notes.append("prose beside the bullets left out (lines " + ", ".join(
                    f"{b.start}-{b.end}" for b in beside) + "): `stele remember` it if it is a rule")
            out += drafts
        elif blocks:
            prose = _prose(blocks)
            if prose:
                out.append(_draft(rel, prose, blocks[0].start, blocks[-1].end, heading, scope, tag,
                                  title=heading if len(heading.split()) >= 2 else ""))
    return [d for d in out if len(d.body.split()) >= MIN_WORDS]


def _prose(blocks: list[md.Block]) -> str:
    out: list[str] = []
    used = 0
    for b in blocks:
        if used + len(b.text) > PROSE_CHARS and out:
            out.append("[...]")
            break
        out.append(b.text if used + len(b.text) <= PROSE_CHARS else md.cut(b.text, PROSE_CHARS))
        used += len(b.text)
    return "\n\n".join(out).strip()


def _draft(rel: str, text: str, start: int, end: int, heading: str, scope: list[str], tag: str,
           title: str = "") -> Draft:
    first = next((x for x in text.split("\n") if x.strip() and not x.strip().startswith(("```", "~~~"))), text)
    plain = md.plain(first)
    title = title or textcut.words(_sentence(plain), TITLE_MAX)
    kind = "constraint" if _FORBIDS.search(plain) else "instruction"
    tags = [tag] + ([_slug(heading)] if heading and _slug(heading) else [])
    return Draft(path=rel, start=start, end=end, kind=kind, title=title or rel,
                 body=md.rebase_links(md.cut(text.strip(), RULE_CHARS), posixpath.dirname(rel)) + "\n",
                 delivery="ranked", anchors=list(scope), tags=tags,
                 named=[c for c in md.code_spans(text) if "/" in c and " " not in c])


def _sentence(text: str) -> str:
    m = re.match(r"(.+?[.!?])(\s+[A-Z`\"]|$)", text)
    return (m.group(1) if m else text).rstrip(".:")


def _slug(heading: str) -> str:
    return "-".join(re.findall(r"[a-z0-9]+", heading.lower()))[:40].strip("-")


def scope_globs(front: str, rel: str) -> list[str]:
    """The globs a rule file applies to: `globs` (Cursor), `applyTo` (Copilot), `paths` (Claude rules),
    as a list or a comma-separated string. `**` alone (every file) is no scope at all."""
    if not front:
        return []
    values: list[str] = []
    try:
        data = load_yaml(front, rel)
    except ConfigError:
        data = None
    for key in SCOPE_KEYS:
        value = data.get(key) if isinstance(data, dict) else _line_value(front, key)
        if isinstance(value, str):
            values += value.split(",")
        elif isinstance(value, list):
            values += [str(v) for v in value]
    globs = [v.strip().strip("'\"[] ") for v in values]
    return [g.lstrip("/") for g in dict.fromkeys(globs) if g and g not in ("**", "**/*", "*")]


def _line_value(front: str, key: str) -> str | None:
    m = re.search(rf"^{re.escape(key)}\s*:\s*(.*)$", front, re.M)
    return m.group(1) if m else None
