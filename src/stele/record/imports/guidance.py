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
# a line introducing bullets, or a heading, that ends in a negation: each bullet completes "must not ..."
_NEGATION = re.compile(r"\b(must not|mustn[\'\u2019]t|must never|should not|shouldn[\'\u2019]t|do not|don[\'\u2019]?ts?|do nots"
                       r"|never|avoid|may not|cannot|can[\'\u2019]t|are not allowed to|not allowed)\W*$", re.I)
_EXAMPLE = re.compile(r"^(?:bad|good|wrong|right|correct|incorrect|not|but|instead|example|examples|e\.g\.|"
                      r"for example|before|after)\b\W*$", re.I)
# `docs/` — developer documentation; [devdocs](https://...) — the reference: a path or link and what it
# holds, with no word that asks anything of the reader
_POINTER = re.compile(r"^(?:`[^`]+`|https?://\S+|<https?://[^>]+>|[\w.-]+\.[a-z]{2,}(?:/\S*)?)\s*(?:[\u2013\u2014:]|--?)\s+"
                      r"(?!.*\b(?:must|should|never|always|do not|don't|use|only|avoid|prefer|run|follow|keep)\b).*$",
                      re.I)
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
        heading = md.plain(sec.heading)
        if any(b.bullet for b in blocks):
            out += _bullets(rel, blocks, heading, scope, tag)
        elif blocks:
            prose = _prose(blocks)
            if prose:
                out.append(_draft(rel, prose, blocks[0].start, blocks[-1].end, heading, scope, tag,
                                  title=heading if len(heading.split()) >= 2 else ""))
    return [d for d in out if len(d.body.split()) >= MIN_WORDS]


def _bullets(rel: str, blocks: list[md.Block], heading: str, scope: list[str], tag: str) -> list[Draft]:
    """The drafts of a section's bullets. A bullet under a line that introduces it ("Agents **must
    not**:") or a heading that forbids ("Don'ts", "Never") carries that negation in its title, body and
    kind; a bullet that is only a code example ("BAD:", "GOOD:") goes with the rule before it; a run of
    pointers (`` `docs/` — developer documentation ``) is one `fyi`, not a rule each."""
    out: list[Draft] = []
    beside: list[md.Block] = []
    examples: list[md.Block] = []
    pointers: list[md.Block] = []
    lead = ""  # the line introducing the bullets that follow it
    pointed = ""  # the one introducing the first pointer
    for b in blocks:
        if not b.bullet:
            if b.text.rstrip().endswith(":") and "\n" not in b.text.strip():
                lead = b.text.strip()
            else:
                beside.append(b)
                lead = ""
            continue
        if _example(b.text):
            if out and out[-1].end < b.start:
                out[-1].body = out[-1].body.rstrip("\n") + "\n" + md.cut("- " + b.text.strip(), RULE_CHARS) + "\n"
                out[-1].end = b.end
            else:
                examples.append(b)
            continue
        if _POINTER.match(md.plain(b.text)) and "\n" not in b.text.strip():
            pointed = pointed if pointers else lead
            pointers.append(b)
            continue
        negation = _negation(md.plain(lead)) or ("" if lead else _negation(heading))
        out.append(_draft(rel, b.text, b.start, b.end, heading, scope, tag, negation=negation,
                          lead=lead if negation else ""))
    if pointers:
        said = md.plain(pointed).rstrip(":") if pointed else heading
        out.append(Draft(path=rel, start=pointers[0].start, end=pointers[-1].end, kind="fyi",
                         title=textcut.phrase(said or "Pointers", TITLE_MAX),
                         body="\n".join("- " + md.rebase_links(p.text.strip(), posixpath.dirname(rel))
                                        for p in pointers) + "\n",
                         delivery="ranked", anchors=list(scope), tags=_tags(tag, heading),
                         named=[c for p in pointers for c in md.code_spans(p.text) if "/" in c and " " not in c]))
    if out and beside:
        out[0].notes.append("prose beside the bullets left out (lines " + ", ".join(
            f"{b.start}-{b.end}" for b in beside) + "): `stele remember` it if it is a rule")
    if out and examples:
        out[0].notes.append("a bullet that is only a code example, with no rule before it, left out (lines " + ", ".join(
            f"{b.start}-{b.end}" for b in examples) + ")")
    return out


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
           title: str = "", negation: str = "", lead: str = "") -> Draft:
    first = next((x for x in text.split("\n") if x.strip() and not x.strip().startswith(("```", "~~~"))), text)
    plain = md.plain(first)
    if negation:  # "Agents must not:" + "Introduce new dependencies" -> "Must not: introduce new dependencies"
        said = _sentence(plain)
        title = f"{negation}: {said[:1].lower() + said[1:] if said[1:2].islower() else said}"
    title = title or _sentence(plain)
    kind = "constraint" if negation or _FORBIDS.search(plain) else "instruction"
    text = f"{lead}\n\n- {text.strip()}" if lead else text.strip()
    return Draft(path=rel, start=start, end=end, kind=kind, title=textcut.phrase(title, TITLE_MAX) or rel,
                 body=md.rebase_links(md.cut(text, RULE_CHARS), posixpath.dirname(rel)) + "\n",
                 delivery="ranked", anchors=list(scope), tags=_tags(tag, heading),
                 named=[c for c in md.code_spans(text) if "/" in c and " " not in c])


def _tags(tag: str, heading: str) -> list[str]:
    return [tag] + ([_slug(heading)] if heading and _slug(heading) else [])


def _negation(said: str) -> str:
    """How a line that introduces bullets forbids them ("Must not", "Never", "Don't"), or ""."""
    m = _NEGATION.search(said)
    if not m:
        return ""
    word = m.group(1).lower().replace("\u2019", "'")
    word = {"don'ts": "don't", "donts": "don't", "dont": "don't", "do nots": "do not"}.get(word, word)
    return word[:1].upper() + word[1:]


def _example(text: str) -> bool:
    """A bullet that is a label ("BAD:", "GOOD:", "Example:") over a code block: an example of a rule."""
    lines = [x for x in text.split("\n") if x.strip()]
    return len(lines) > 1 and bool(_EXAMPLE.match(md.plain(lines[0])))


def _sentence(text: str) -> str:
    m = re.match(r"(.+?(?<!\be\.g)(?<!\bi\.e)[.!?])(\s+[A-Z`\"]|$)", text)  # not at "e.g. `X`"
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
