"""The write path: remember, edit, link, supersede, retire, verify.

This is the library API the CLI, the hooks and the MCP server all call; each function loads what it
needs, checks everything before writing, and writes through `write.save` (validated, atomic). Secrets
are redacted from every text field before anything reaches the disk.
"""
from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass, field

from .. import gitrepo, textcut
from ..errors import SteleError, UsageError
from ..ids import ID_RE, SESSION_ID_RE, new_id
from ..kinds import DECLARABLE_RELATIONS, DELIVERIES, KINDS, PRIORITIES, TITLE_MAX
from ..lifecycle import today
from ..project import Project
from ..redact import Tally, describe
from . import write
from .load import Record, load
from .model import Fact, anchor_problem

KNOWLEDGE_STATUSES = ("draft", "reviewed")
REVIEW_KEY = "review"  # frontmatter: {on: DATE, note: TEXT}, written by `stele knowledge review`


@dataclass
class Written:
    fact: Fact
    redacted: Counter = field(default_factory=Counter)

    @property
    def redaction_summary(self) -> str:
        return describe(self.redacted)


def parse_link(spec: str) -> tuple[str, str]:
    """`caused-by:RISK-2M9Q` -> ("caused-by", "RISK-2M9Q")."""
    rel, sep, target = spec.partition(":")
    rel, target = rel.strip(), target.strip().upper()
    if not sep or not rel or not target:
        raise UsageError(f"--link {spec!r}: write it as RELATION:ID, e.g. caused-by:RISK-2M9Q")
    check_relation(rel)
    return rel, target


def check_relation(rel: str) -> None:
    if rel not in DECLARABLE_RELATIONS:
        raise UsageError(f"unknown relation {rel!r}: use one of " + ", ".join(DECLARABLE_RELATIONS))


def parse_date(value: str, flag: str) -> dt.date:
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise UsageError(f"{flag} {value!r} is not a date: write it as YYYY-MM-DD") from None


def title_from_body(body: str) -> str:
    for line in body.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return textcut.words(line, TITLE_MAX)
    raise UsageError("the body is empty: give the fact some text (argument, --body-file or - for stdin)")


def _check_choice(value: str | None, allowed: tuple[str, ...], flag: str) -> None:
    if value is not None and value not in allowed:
        raise UsageError(f"{flag} {value!r} is not one of " + ", ".join(allowed))


def _check_targets(record: Record, links: dict[str, list[str]], own_id: str | None = None) -> None:
    for rel, targets in links.items():
        for target in targets:
            if target == own_id:
                raise SteleError(f"link {rel} -> {target}: a fact cannot link to itself; nothing was written")
            if SESSION_ID_RE.match(target):
                continue
            if not ID_RE.match(target) or target not in record.facts:
                raise SteleError(f"link {rel} -> {target}: no fact has that id (`stele list` shows ids); "
                                 "nothing was written")


def _check_anchors(anchors: list[str]) -> None:
    for anchor in anchors:
        problem = anchor_problem(anchor)
        if problem:
            raise UsageError(f"--anchor {anchor!r}: {problem}")


def remember(project: Project, body: str, *, kind: str = "note", title: str | None = None,
             anchors: list[str] = (), links: list[str] = (), tags: list[str] = (), delivery: str | None = None,
             priority: str | None = None, expires: str | None = None, review_after: str | None = None,
             retire_when: str | None = None, summary: str | None = None, source: list[str] = (),
             status: str | None = None, record: Record | None = None) -> Written:
    """Create a fact. Everything is checked before the file is written; returns the fact and what was
    redacted (kind of secret -> count)."""
    if kind not in KINDS:
        raise UsageError(f"--kind {kind!r} is not a kind: use one of " + ", ".join(KINDS))
    _check_choice(delivery, DELIVERIES, "--delivery")
    _check_choice(priority, PRIORITIES, "--priority")
    if status is not None and status not in KINDS[kind].statuses:
        raise UsageError(f"--status {status!r} is not valid for a {kind}: use one of "
                         + ", ".join(KINDS[kind].statuses))
    body = body.strip("\n")
    if not body.strip():
        raise UsageError("the body is empty: give the fact some text (argument, --body-file or - for stdin)")
    title = (title or "").strip() or title_from_body(body)
    if len(title) > TITLE_MAX:
        raise UsageError(f"--title is {len(title)} characters; shorten it to at most {TITLE_MAX}")
    _check_anchors(list(anchors))
    link_map: dict[str, list[str]] = {}
    for spec in links:
        rel, target = parse_link(spec)
        if target not in link_map.setdefault(rel, []):
            link_map[rel].append(target)
    record = record or load(project)
    _check_targets(record, link_map)

    fact = Fact(
        id=new_id(kind, record.facts), kind=kind, title=title, body=body + "\n",
        status=status or "", delivery=delivery or "", priority=priority or "normal",
        anchors=list(dict.fromkeys(anchors)), links=link_map, tags=list(dict.fromkeys(tags)),
        created=today(), expires=parse_date(expires, "--expires") if expires else None,
        review_after=parse_date(review_after, "--review-after") if review_after else None,
        retire_when=retire_when, summary=summary, source=list(source),
    )
    tally = Tally()
    write.save(project, fact, create=True, tally=tally)
    record.facts[fact.id] = fact
    return Written(fact, tally.found)


@dataclass
class Changes:
    """Field edits for `edit()`; None leaves a field alone, "" clears an optional one."""
    title: str | None = None
    status: str | None = None
    delivery: str | None = None
    priority: str | None = None
    summary: str | None = None
    expires: str | None = None
    review_after: str | None = None
    retire_when: str | None = None
    body: str | None = None
    add_anchors: list[str] = field(default_factory=list)
    remove_anchors: list[str] = field(default_factory=list)
    add_tags: list[str] = field(default_factory=list)
    remove_tags: list[str] = field(default_factory=list)
    add_links: list[str] = field(default_factory=list)
    remove_links: list[str] = field(default_factory=list)

    def empty(self) -> bool:
        return all(not v for v in vars(self).values() if isinstance(v, list)) and all(
            v is None for v in vars(self).values() if not isinstance(v, list))


def check_editable(fact: Fact) -> None:
    """Knowledge follows draft -> reviewed -> current -> superseded: only drafts are edited."""
    if fact.kind == "document" or fact.status in KNOWLEDGE_STATUSES:
        if fact.status == "current":
            raise SteleError(f"{fact.id} is current knowledge and is not edited in place: write a new draft "
                             f"(`stele knowledge draft`), review it, then `stele knowledge supersede {fact.id} "
                             "--with NEW`")
        if fact.status in ("superseded", "retired"):
            raise SteleError(f"{fact.id} is {fact.status}: it stays as history and is not edited")


def edit(project: Project, fact_id: str, changes: Changes) -> Written:
    record = load(project)
    fact = record.get(fact_id)
    if changes.empty():
        raise UsageError("nothing to change: pass a field option (see `stele edit --help`), or no option at "
                         "all to open the file in $EDITOR")
    check_editable(fact)
    was_reviewed = fact.status == "reviewed"
    _check_choice(changes.delivery, DELIVERIES, "--delivery")
    _check_choice(changes.priority, PRIORITIES, "--priority")
    if changes.status is not None and changes.status not in KINDS[fact.kind].statuses:
        raise UsageError(f"--status {changes.status!r} is not valid for a {fact.kind}: use one of "
                         + ", ".join(KINDS[fact.kind].statuses))
    if changes.title is not None:
        if not changes.title.strip() or len(changes.title) > TITLE_MAX:
            raise UsageError(f"--title must be 1 to {TITLE_MAX} characters")
        fact.title = changes.title.strip()
    for name in ("status", "delivery", "priority"):
        value = getattr(changes, name)
        if value is not None:
            setattr(fact, name, value)
    for name in ("summary", "retire_when"):
        value = getattr(changes, name)
        if value is not None:
            setattr(fact, name, value or None)
    if changes.expires is not None:
        fact.expires = parse_date(changes.expires, "--expires") if changes.expires else None
    if changes.review_after is not None:
        fact.review_after = parse_date(changes.review_after, "--review-after") if changes.review_after else None
    if changes.body is not None:
        if not changes.body.strip():
            raise UsageError("--body is empty: a fact needs some text")
        fact.body = changes.body.strip("\n") + "\n"
    _check_anchors(changes.add_anchors)
    fact.anchors = [a for a in fact.anchors if a not in changes.remove_anchors]
    fact.anchors += [a for a in dict.fromkeys(changes.add_anchors) if a not in fact.anchors]
    fact.tags = [t for t in fact.tags if t not in changes.remove_tags]
    fact.tags += [t for t in dict.fromkeys(changes.add_tags) if t not in fact.tags]
    added: dict[str, list[str]] = {}
    for spec in changes.add_links:
        rel, target = parse_link(spec)
        added.setdefault(rel, []).append(target)
    _check_targets(record, added, fact.id)
    for spec in changes.remove_links:
        rel, target = parse_link(spec)
        _drop_link(fact, rel, target)
    for rel, targets in added.items():
        for target in targets:
            _add_link(fact, rel, target)
    cleared = was_reviewed and changes.status is None
    if cleared:
        fact.status = "draft"  # an edit clears a review, and the note of that review
    tally = Tally()
    write.save(project, fact, extra={REVIEW_KEY: None} if cleared else None, tally=tally)
    return Written(fact, tally.found)


def replace_text(project: Project, fact_id: str, text: str) -> Written:
    """Replace a fact with `text` as edited by hand ($EDITOR): parsed, checked and redacted like any
    other write, and the id must stay. Nothing is written when it does not hold."""
    fact = load(project).get(fact_id)
    check_editable(fact)
    new = _parse_edited(text, fact.path, fact.id)
    tally = Tally()
    write.save(project, new, tally=tally)
    return Written(new, tally.found)


def create_text(project: Project, rel: str, text: str) -> Written:
    """Write a new fact from `text` (a template filled in by hand) at `rel`, redacted and checked."""
    new = _parse_edited(text, rel, None)
    if new.id in load(project).facts:
        raise SteleError(f"{new.id} already exists; give the new fact another id; nothing was written")
    tally = Tally()
    write.save(project, new, create=True, tally=tally)
    return Written(new, tally.found)


def _parse_edited(text: str, rel: str, keep_id: str | None) -> Fact:
    from .model import parse_fact

    new, problems = parse_fact(text, rel)
    errors = [x for x in problems if x.severity == "error"]
    if errors or new is None or (keep_id and new.id != keep_id):
        why = "; ".join(str(x) for x in errors) or f"the id must stay {keep_id}"
        raise SteleError(f"{why}; nothing was written")
    new.path = rel
    return new


def _add_link(fact: Fact, rel: str, target: str) -> bool:
    targets = fact.links.setdefault(rel, [])
    if target in targets:
        return False
    targets.append(target)
    return True


def _drop_link(fact: Fact, rel: str, target: str) -> bool:
    targets = fact.links.get(rel, [])
    if target not in targets:
        return False
    targets.remove(target)
    if not targets:
        del fact.links[rel]
    return True


def link(project: Project, src: str, rel: str, dst: str) -> Fact:
    check_relation(rel)
    record = load(project)
    fact = record.get(src)
    _check_targets(record, {rel: [dst.upper()]}, fact.id)
    if not _add_link(fact, rel, record.get(dst).id):
        raise SteleError(f"{fact.id} already has {rel} -> {dst}; nothing changed")
    write.save(project, fact)
    return fact


def unlink(project: Project, src: str, rel: str, dst: str) -> Fact:
    check_relation(rel)
    fact = load(project).get(src)
    if not _drop_link(fact, rel, dst.upper()):
        raise SteleError(f"{fact.id} has no {rel} -> {dst.upper()} link; `stele show {fact.id}` lists its links")
    write.save(project, fact)
    return fact


def supersede(project: Project, old_id: str, new_id_: str) -> tuple[Fact, Fact]:
    """NEW supersedes OLD: the edge goes on NEW, OLD's status becomes superseded."""
    record = load(project)
    old, new = record.get(old_id), record.get(new_id_)
    if old.id == new.id:
        raise UsageError("a fact cannot supersede itself")
    if "superseded" not in KINDS[old.kind].statuses:
        raise SteleError(f"{old.id} is a {old.kind}; a {old.kind} is cancelled, not superseded "
                         f"(`stele task cancel {old.id}`)")
    if old.status == "superseded":
        raise SteleError(f"{old.id} is already superseded; nothing changed")
    if _reaches(record, old.id, new.id):
        raise SteleError(f"{old.id} already supersedes {new.id} (directly or through others): that would be "
                         "a cycle; nothing changed")
    _add_link(new, "supersedes", old.id)
    old.status = "superseded"
    write.save(project, new)
    write.save(project, old)
    return old, new


def _reaches(record: Record, start: str, goal: str) -> bool:
    seen, todo = set(), [start]
    while todo:
        node = todo.pop()
        if node == goal:
            return True
        if node in seen or node not in record.facts:
            continue
        seen.add(node)
        todo.extend(record.facts[node].links.get("supersedes", []))
    return False


def retire(project: Project, fact_id: str, why: str) -> Fact:
    if not why.strip():
        raise UsageError("--why is empty: say why the fact no longer holds")
    fact = load(project).get(fact_id)
    if "retired" not in KINDS[fact.kind].statuses:
        raise SteleError(f"{fact.id} is a {fact.kind}: use `stele task cancel {fact.id}` or `stele task done`")
    if fact.status == "retired":
        raise SteleError(f"{fact.id} is already retired; nothing changed")
    fact.status = "retired"
    fact.body = fact.body.rstrip("\n") + f"\n\nRetired {today().isoformat()}: {' '.join(why.split())}\n"
    write.save(project, fact)
    return fact


def verify(project: Project, fact_id: str) -> Fact:
    fact = load(project).get(fact_id)
    fact.verified = today()
    fact.verified_at = gitrepo.head_sha(project.root)
    write.save(project, fact)
    return fact
