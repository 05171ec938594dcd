"""Architecture decision records (Nygard's and MADR's shapes) as decision drafts.

One ADR is one fact: its title without the number, its status mapped to the record's, a short body
in the ADR's own words (the decision first, then the context and consequences, each cut at a block
boundary), the ADR file as an anchor, and "Superseded by", "Supersedes", "Amends" read as links to
the ADRs they name. The status is read from MADR's frontmatter (`status:`), a `## Status` section
(Nygard, adr-tools), or a `Status:` line or list item near the top (MADR 2, many hand-written ADRs).
"""
from __future__ import annotations

import re
from pathlib import PurePosixPath

from ... import textcut
from ...kinds import TITLE_MAX
from . import markdown as md
from .draft import Draft

# ADR status word -> the record's status. Anything else is a draft, and the report says so.
STATUSES = {
    "accepted": "current", "approved": "current", "adopted": "current", "agreed": "current",
    "decided": "current", "done": "current", "implemented": "current", "active": "current",
    "proposed": "draft", "draft": "draft", "open": "draft", "ongoing": "draft", "pending": "draft",
    "on hold": "draft", "in review": "draft", "in progress": "draft",
    "rejected": "retired", "deprecated": "retired", "withdrawn": "retired", "abandoned": "retired",
    "obsolete": "retired", "superseded": "superseded", "replaced": "superseded",
    # what a later ADR replaced in part, the rest still holds
    "partially superseded": "current", "partly superseded": "current", "amended": "current",
}
DECISION = ("decision outcome", "decision", "decisions", "outcome", "resolution")
CONTEXT = ("context and problem statement", "context", "problem", "problem statement", "background")
CONSEQUENCES = ("consequences", "consequence", "positive consequences", "negative consequences")
STATUS_HEADINGS = ("status", "state")
BODY_CHARS = {"decision": 700, "context": 350, "consequences": 300}

_NUMBER = re.compile(r"^(?:adr|ard|ad|rfc|dr)?[-_ ]?0*(\d+)", re.I)
_DATE_NAME = re.compile(r"^(?:19|20)\d\d-?(?:0[1-9]|1[0-2])-?(?:0[1-9]|[12]\d|3[01])(?:[-_ .]|$)")
_TITLE_NUMBER = re.compile(r"^(?:(?:adr|ard|ad|dr|decision)[-_ ]?\d+\s*[:.\-\u2013\u2014]?\s*|\d+[.:)]?\s+[-\u2013\u2014:]?\s*)",
                           re.I)
_STATUS_LINE = re.compile(r"^\s*(?:[-*]\s*)?(?:\*\*|__)?status(?:\*\*|__)?\s*[:\-]\s*(?:\*\*|__)?\s*(.+)$", re.I)
_DATE_LINE = re.compile(r"^\s*(?:[-*]\s*)?(?:\*\*|__)?date(?:\*\*|__)?\s*:\s*(?:\*\*|__)?\s*(\d{4}-\d{2}-\d{2})", re.I)
_RELATION = re.compile(r"\b((?:partially|partly|in part) superseded by|(?:partially|partly|in part) supersedes|"
                       r"superseded by|supersedes|amended by|amends|extended by|extends|refines|related to)\b", re.I)
_IMAGE = re.compile(r"^\[?!\[[^\]]*\]\([^)]*\)(?:\]\([^)]*\))?$")  # a block that is one image: a broken link in a fact
_ADR_REF = re.compile(r"\b(?:adr|ard|ad|dr)[-_ ]?0*(\d+)\b", re.I)
RELATIONS = {"superseded by": "superseded-by", "supersedes": "supersedes", "amends": "relates-to",
             "extends": "relates-to", "refines": "relates-to", "related to": "relates-to",
             **{f"{part} {verb}": "relates-to" for part in ("partially", "partly", "in part")
                for verb in ("supersedes", "superseded by")}}  # "amended by", "extended by": the other side says it


EXTENSIONS = (".md", ".markdown", ".mdx")  # Markdown, and Docusaurus' MDX (its imports are lines of text)
OTHER_FORMATS = (".rst", ".adoc", ".asciidoc", ".txt", ".org")  # ADRs too, but not Markdown: named, not read


# A template is a file named as one (`template.md`, `adr-template.md`, `0000-template.md`,
# `template-madr.md`), never any name holding the word: JabRef's `0039-use-apache-velocity-as-template-
# engine.md` is an ADR. A template under another name is known by its placeholders (`TEMPLATE_MARKS`).
_TEMPLATE_NAME = re.compile(r"^(?:0+[-_ ])?(?:adr[-_ ]?|madr[-_ ]?|decision[-_ ]?)?template(?:[-_ ]?(?:adr|madr|nygard|"
                            r"short|long|minimal|bare|full|lite))?$", re.I)
TEMPLATE_MARKS = ("{short title of solved problem", "[short title of solved problem", "{title of the adr}",
                  "{problem statement}", "[describe the context and problem statement", "{describe the context")
NOT_ADRS = ("readme", "index", "toc", "_index")


def is_adr(name: str) -> bool:
    """Is a file in an ADR folder an ADR (and not its README, index or template)?"""
    return not_adr(name) is None and name.lower().endswith(EXTENSIONS)


def not_adr(name: str) -> str | None:
    """Why a Markdown file in an ADR folder is not an ADR ("an index or README", "a template"), or None."""
    stem = name.rsplit(".", 1)[0].lower()
    if stem in NOT_ADRS:
        return "an index or README, not an ADR"
    if _TEMPLATE_NAME.match(stem):
        return "a template (named as one), not an ADR"
    return None


def is_template(text: str) -> bool:
    """Does an ADR file still hold a template's placeholders (MADR's "{short title of solved problem ...}")?"""
    head = text[:4000].lower()
    return any(mark in head for mark in TEMPLATE_MARKS)


def number(name: str) -> str | None:
    """The ADR's number from its file name; None for log4brains' date prefix (`20201016-use-...md`: a
    day, shared by the ADRs written on it, is no number to find an ADR by)."""
    if _DATE_NAME.match(name):
        return None
    m = _NUMBER.match(name)
    return m.group(1) if m else None


def read(rel: str, text: str, siblings: dict[str, str]) -> Draft:
    """The draft of the ADR at `rel` (relative to the repository); `siblings` maps ADR numbers in the
    same folder to their paths, so "Superseded by ADR-22" finds `adr-22.md`."""
    text = md.strip_comments(text.replace("\r\n", "\n"))
    front, body, before = md.split_frontmatter(text)
    problems: list[str] = []
    meta = md.frontmatter(front, rel, problems)
    secs = md.sections(body, before + 1)
    title_sec = next((s for s in secs if s.level == 1), None)
    title = str(meta.get("title") or (title_sec.heading if title_sec else "") or PurePosixPath(rel).stem)
    title = md.plain(_TITLE_NUMBER.sub("", title).strip()) or title
    status_text, lines = _status(meta, secs)
    word = _status_word(status_text)
    draft = Draft(path=rel, start=1, end=max(1, text.count("\n") + (0 if text.endswith("\n") else 1)),
                  kind="decision", title=textcut.words(title, TITLE_MAX), body="", whole_file=True,
                  anchors=[rel], tags=["adr"])
    draft.notes += problems
    draft.status = STATUSES.get(word, "draft")
    if word not in STATUSES:
        draft.notes.append(f"status {status_text!r} is not one the importer knows: written as a draft"
                           if status_text else "no status found: written as a draft")
    date = str(meta.get("date") or "")
    draft.created = date if re.fullmatch(r"\d{4}-\d{2}-\d{2}", date) else _date(secs)
    for line in lines:
        _relations(line, rel, siblings, draft)
    draft.body = md.rebase_links(_body(secs, rel, number(PurePosixPath(rel).name), status_text, draft.created),
                                 str(PurePosixPath(rel).parent))
    for sec in secs:
        for block in sec.blocks:
            draft.named += [c for c in md.code_spans(block.text) if _looks_like_path(c)]
            draft.named += [t.split("#")[0] for _, t in md.links(block.text) if _local(t) and not t.endswith(".md")]
    draft.named = list(dict.fromkeys(draft.named))
    return draft



def _status(meta: dict, secs: list[md.Section]) -> tuple[str, list[str]]:
    """The status text, and the lines that may declare links to other ADRs."""
    lines: list[str] = []
    status = str(meta.get("status") or "").strip()
    if status:
        lines.append(status)
    for sec in secs:
        if sec.heading.lower().strip(": ") in STATUS_HEADINGS and sec.blocks:
            text = sec.text()
            lines += text.split("\n")
            status = status or text.split("\n")[0]
    for sec in secs[:3]:  # a `Status:` line or list item near the top
        for block in sec.blocks[:4]:
            for line in block.text.split("\n"):
                m = _STATUS_LINE.match(line)
                if m:
                    lines.append(m.group(1))
                    status = status or m.group(1)
    for sec in secs[:2]:  # a "Superseded by" note at the top ("> Superseded by [ADR-7](...)")
        for block in sec.blocks[:3]:
            lines += [x for x in block.text.split("\n") if _RELATION.search(x)]
    return md.plain(status), lines


def _status_word(text: str) -> str:
    text = re.sub(r"[^a-z ]", " ", text.lower())
    for phrase in sorted(STATUSES, key=len, reverse=True):
        if re.match(rf"\s*{phrase}\b", text):
            return phrase
    return text.split()[0] if text.split() else ""


def _date(secs: list[md.Section]) -> str:
    for sec in secs[:3]:
        for block in sec.blocks[:4]:
            for line in block.text.split("\n"):
                m = _DATE_LINE.match(line)
                if m:
                    return m.group(1)
    return ""


def _relations(line: str, rel: str, siblings: dict[str, str], draft: Draft) -> None:
    """"Superseded by [ADR-22](adr-22.md)", "Amends [5. Help comments](0005-help-comments.md)",
    "superseded by ADR-0123": the relation, then the ADRs named after it on the line."""
    folder = str(PurePosixPath(rel).parent)
    marks = list(_RELATION.finditer(line))
    for i, m in enumerate(marks):
        rest = line[m.end():marks[i + 1].start() if i + 1 < len(marks) else len(line)]
        relation = RELATIONS.get(m.group(1).lower())
        if relation is None:
            continue
        targets = [_from(folder, t.split("#")[0]) for _, t in md.links(rest) if _local(t)]
        if not targets:
            targets = [siblings[n] for n in _ADR_REF.findall(rest) if n in siblings]
        for target in dict.fromkeys(targets):
            if target == rel:
                continue
            if relation == "superseded-by":
                draft.superseded_by.append(target)
            else:
                draft.refs.append((relation, target))


def _body(secs: list[md.Section], rel: str, num: str | None, status: str, date: str) -> str:
    """The decision in the ADR's own words, then its context and consequences, cut to a short fact."""
    parts_of = {*DECISION, *CONTEXT, *CONSEQUENCES, *STATUS_HEADINGS}

    def name(s: md.Section) -> str:
        return md.plain(s.heading).lower().strip(": ")

    def under(i: int) -> list[md.Block]:
        """The blocks of section `i` and of its subsections (`#### Stack domains` under `## Decision`),
        each subsection's heading a line of its own; a subsection that is a part itself (MADR's
        `### Consequences` under `## Decision Outcome`) is left to be found as that part."""
        blocks = list(secs[i].blocks)
        for sub in secs[i + 1:]:
            if sub.level <= secs[i].level:
                break
            if name(sub) in parts_of:
                continue
            if sub.blocks:
                blocks += [md.Block(md.plain(sub.heading) + ":", sub.start, sub.start), *sub.blocks]
        return [b for b in blocks if not _IMAGE.match(b.text.strip())]

    def find(names: tuple[str, ...]) -> list[md.Block] | None:
        return next((under(i) for i, s in enumerate(secs) if name(s) in names and under(i)), None)

    parts = []
    decision, context, consequences = find(DECISION), find(CONTEXT), find(CONSEQUENCES)
    if decision is None:  # no Decision heading: the text after the title and status, as written
        titles = {s.heading.lower() for s in secs if s.level == 1}
        rest = [s for s in secs if s.heading.lower() not in titles and name(s) not in parts_of]
        blocks = [b for s in rest for b in s.blocks]
        if not blocks:  # all of it under the title (a signpost to an ADR kept elsewhere)
            blocks = [b for s in secs if s.level == 1 for b in s.blocks]
        blocks = [b for b in blocks if not _STATUS_LINE.match(b.text) and not _DATE_LINE.match(b.text)
                  and not _IMAGE.match(b.text.strip())]
        parts.append(_cut(blocks, BODY_CHARS["decision"] + BODY_CHARS["consequences"]))
    else:
        parts.append(_cut(decision, BODY_CHARS["decision"]))
    if context is not None:
        parts.append(_labelled("Context", _cut(context, BODY_CHARS["context"])))
    if consequences is not None and decision is not None:
        parts.append(_labelled("Consequences", _cut(consequences, BODY_CHARS["consequences"])))
    label = f"ADR {num}" if num else "the ADR"
    said = (f", status {status!r}" if status else "") + (f", dated {date}" if date else "")
    parts.append(f"Imported from {label} ({rel}{said}); the ADR has the full text.")
    return "\n\n".join(p for p in parts if p.strip()) + "\n"


def _cut(blocks: list[md.Block], limit: int) -> str:
    """Whole blocks up to `limit` characters (a list stays a list), the first cut by words if it alone
    is longer, and `[...]` where the ADR goes on."""
    out = ""
    last_bullet = False
    for block in blocks:
        text = "- " + block.text.strip() if block.bullet else _kept(block.text)
        joint = "" if not out else ("\n" if block.bullet and last_bullet else "\n\n")
        if len(out) + len(joint) + len(text) > limit:
            out = out + "\n\n[...]" if out else textcut.words(" ".join(text.split()), limit)
            break
        out += joint + text
        last_bullet = block.bullet
    return out


def _kept(text: str) -> str:
    """A paragraph as written; an indented code block keeps its first line's indent (stripping it
    left `$servicename.$stackname.internal` as prose and the lines after it as code)."""
    text = text.strip("\n").rstrip()
    return text if text.startswith(("    ", "\t")) else text.strip()


def _labelled(label: str, text: str) -> str:
    return f"{label}:\n\n{text}" if text.startswith(("- ", " ", "\t")) else f"{label}: {text}"


def _looks_like_path(text: str) -> bool:
    return ("/" in text or "::" in text or re.search(r"\.[a-z]{1,5}$", text) is not None) and " " not in text \
        and not text.startswith(("http:", "https:", "-"))


def _local(target: str) -> bool:
    return not re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) and not target.startswith(("#", "/"))


def _from(folder: str, target: str) -> str:
    """A path named in an ADR: relative to the ADR's folder when it starts with `./` or `../`, else as
    written (the importer tries both against the checkout)."""
    import posixpath

    if target.startswith(("./", "../")) or "/" not in target:
        return posixpath.normpath(posixpath.join(folder, target))
    return target
