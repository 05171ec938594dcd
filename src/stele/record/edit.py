"""The write path: remember, edit (by flags or as a whole text from $EDITOR), link, unlink, retire,
verify.

This is the library API the CLI, the hooks and the MCP server all call; each function takes the
record's write lock (`write.changing`), loads what it needs, checks everything before writing, and
writes through `write.save` (validated, atomic), so concurrent commands serialize instead of losing
each other's changes. Field values are checked by the file's own validator (`model.check_flag`),
status changes by the knowledge lifecycle (`lifecycle`). Secrets are redacted from every text field
before anything reaches the disk. (`supersede` changes two facts and follows the lifecycle's
supersession rule, so it lives with the lifecycle's transitions in `knowledge.py`.)
"""
from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .. import gitrepo, plain, textcut
from ..anchors import codecheck
from ..delivery import today
from ..errors import SteleError, UsageError
from ..ids import ID_RE, SESSION_ID_RE, new_id
from ..kinds import DECLARABLE_RELATIONS, KINDS, TITLE_MAX
from ..project import Project
from ..redact import Redactor, Tally, describe
from . import lifecycle, write
from .load import Record, load
from .model import Fact, as_date, check_flag, parse_fact
from .similar import Similar, similar_to


@dataclass
class Written:
    fact: Fact
    redacted: Counter = field(default_factory=Counter)
    similar: list[Similar] = field(default_factory=list)  # existing facts the new one (nearly) repeats
    warnings: list[str] = field(default_factory=list)  # e.g. an anchor that names nothing yet

    @property
    def redaction_summary(self) -> str:
        return describe(self.redacted)

    def notices(self) -> list[str]:
        """What the writer is told beside the fact, one line each: what was redacted, the facts it
        (nearly) repeats, anchors that name nothing yet. The CLI prints them; MCP `remember` returns
        them (one home, so an agent is told what a person is)."""
        out = [f"redacted before writing: {self.redaction_summary} (the secret text is not in the file)"
               ] if self.redacted else []
        out += [f"{self.fact.id} {s.describe()} {s.id}: if it is one fact twice, keep one "
                f"(`stele supersede {s.id} --by {self.fact.id}`, or `stele retire {self.fact.id} --why ...`)"
                for s in self.similar]
        return out + self.warnings


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


def parse_date(value: str, flag: str, key: str) -> dt.date:
    check_flag(flag, key, value)
    date = as_date(value)
    assert date is not None
    return date


def title_from_body(body: str) -> str:
    for line in body.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return textcut.words(line, TITLE_MAX)
    raise UsageError("the body is empty: give the fact some text (argument, --body-file or - for stdin)")


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


def _check_anchors(anchors: list[str], flag: str = "--anchor") -> None:
    for anchor in anchors:
        check_flag(flag, "anchors", anchor)


def unresolved(project: Project, anchors: list[str]) -> list[str]:
    """One warning per anchor that names nothing in the checkout yet (a typo, or code not written yet):
    written all the same, `stele doctor` reports it until it resolves."""
    if not anchors:
        return []
    from ..anchors.resolve import WorkTree, resolve

    tree = WorkTree(project.root)
    out = []
    for anchor in anchors:
        res = resolve(anchor, tree)
        if res.ok and res.by_words:
            out.append(f"anchor {anchor!r}: found only as a word on line {res.lines[0] if res.lines else '?'}, "
                       "not as a definition (no definition rule for this kind of file; `stele doctor` "
                       "reports it)")
        elif not res.ok:
            what = {"file gone": "no such file", "symbol gone": "no such symbol in the file",
                    "no match": "the glob matches no file"}.get(res.problem, res.problem)
            out.append(f"anchor {anchor!r}: {what} in the checkout (written anyway; `stele doctor` "
                       "reports it until it resolves)")
    return out


# A fact is read whole by people in review and by agents in their context: 64 KiB is far past any
# fact worth keeping (doctor warns from doctor.oversized_bytes) and keeps a runaway write out.
MAX_BODY_BYTES = 64 * 1024


def remember(project: Project, body: str, *, kind: str = "note", title: str | None = None,
             anchors: Sequence[str] = (), links: Sequence[str] = (), tags: Sequence[str] = (),
             delivery: str | None = None, priority: str | None = None, expires: str | None = None,
             review_after: str | None = None, retire_when: str | None = None, summary: str | None = None,
             source: Sequence[str] = (),
             status: str | None = None, record: Record | None = None,
             allow_duplicate: bool = False, forbid: Sequence[str] = (), require: Sequence[str] = (),
             enforce: str | None = None) -> Written:
    """Create a fact. Everything is checked before the file is written; returns the fact, what was
    redacted (kind of secret -> count), the existing facts it nearly repeats and any warnings. An
    exact repeat of a live fact of the same kind is refused unless `allow_duplicate`."""
    check_flag("--kind", "kind", kind)
    for flag, key, value in (("--delivery", "delivery", delivery), ("--priority", "priority", priority),
                             ("--status", "status", status), ("--expires", "expires", expires),
                             ("--review-after", "review_after", review_after)):
        if value is not None:
            check_flag(flag, key, value, KINDS[kind])
    lifecycle.check_new(kind, status)
    body = body.strip("\n")
    if not body.strip():
        raise UsageError("the body is empty: give the fact some text (argument, --body-file or - for stdin)")
    size = len(body.encode("utf-8"))
    if size > MAX_BODY_BYTES:
        raise UsageError(f"the text is {size} bytes; a fact holds at most {MAX_BODY_BYTES}: record the point, "
                         "and keep the long form in a document (--kind document) split into parts")
    title = (title or "").strip() or title_from_body(body)
    check_flag("--title", "title", title)
    size += sum(len(x.encode("utf-8")) for x in (*anchors, *links, *tags, *source))
    if size > MAX_BODY_BYTES:  # 20,000 anchors made a 790 KB fact that took doctor two minutes
        raise UsageError(f"the fact is {size} bytes with its anchors, links, tags and sources; a fact holds at "
                         f"most {MAX_BODY_BYTES}: anchor a folder or a glob instead of each file")
    _check_anchors(list(anchors))
    checks = flag_checks(kind, forbid, require, enforce)
    if enforce is not None and not checks:
        raise UsageError("--enforce needs a check: add --check-forbid REGEX or --check-require REGEX")
    link_map: dict[str, list[str]] = {}
    for spec in links:
        rel, target = parse_link(spec)
        if target not in link_map.setdefault(rel, []):
            link_map[rel].append(target)

    with write.changing(project):
        record = record if record is not None else load(project)
        _check_targets(record, link_map)
        fact = Fact(
            id=new_id(kind, record.facts), kind=kind, title=title, body=body + "\n",
            status=status or "", delivery=delivery or "", priority=priority or "normal",
            anchors=list(dict.fromkeys(anchors)), links=link_map, tags=list(dict.fromkeys(tags)),
            created=today(), expires=as_date(expires), review_after=as_date(review_after),
            retire_when=retire_when, summary=summary, source=list(source), checks=checks,
        )
        tally = Tally()
        write.redact_fact(fact, Redactor(project.config["redaction.patterns"]), tally)  # as the record holds it
        similar = similar_to(fact, record.facts.values(), project.config["doctor.near_duplicate"])
        exact = [s for s in similar if s.exact]
        if exact and not allow_duplicate:
            other = record.facts[exact[0].id]
            raise SteleError(f"{other.id} ({other.path}) already says this: nothing was written; edit or verify "
                             f"it (`stele show {other.id}`), or pass --allow-duplicate to record it again")
        write.save(project, fact, create=True, tally=tally)  # redacts every field on the way
        record.facts[fact.id] = fact
    return Written(fact, tally.found, similar, unresolved(project, list(fact.anchors)))


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
    add_forbid: list[str] = field(default_factory=list)  # `check:` entries to add
    add_require: list[str] = field(default_factory=list)
    enforce: str | None = None  # warn | deny, for every check of the fact
    clear_checks: bool = False

    def empty(self) -> bool:
        return all(not v for v in vars(self).values() if isinstance(v, (list, bool))) and all(
            v is None for v in vars(self).values() if not isinstance(v, (list, bool)))


def _check_changes(fact: Fact, changes: Changes) -> None:
    """Every flag checked before anything changes, by the same validator a file goes through."""
    kind = KINDS[fact.kind]
    for flag, key, value in (("--title", "title", changes.title), ("--status", "status", changes.status),
                             ("--delivery", "delivery", changes.delivery),
                             ("--priority", "priority", changes.priority),
                             ("--expires", "expires", changes.expires or None),
                             ("--review-after", "review_after", changes.review_after or None)):
        if value is not None:
            check_flag(flag, key, value.strip() if key == "title" else value, kind)
    if changes.status is not None:
        lifecycle.check_status(fact, changes.status)
    if changes.body is not None and not changes.body.strip():
        raise UsageError("--body is empty: a fact needs some text")
    _check_anchors(changes.add_anchors, "--add-anchor")
    flag_checks(fact.kind, changes.add_forbid, changes.add_require, changes.enforce)
    if changes.enforce is not None and not (changes.add_forbid or changes.add_require) and (
            not fact.checks or changes.clear_checks):
        raise UsageError(f"--enforce: {fact.id} has no check; add --check-forbid REGEX or --check-require REGEX")


def flag_checks(kind: str, forbid: Sequence[str], require: Sequence[str], enforce: str | None) -> list[codecheck.Check]:
    """Checks from `--check-forbid`/`--check-require`/`--enforce`, through the validator a file's
    `check:` goes through (the flag named in the message)."""
    if enforce is not None and enforce not in codecheck.ENFORCE:
        raise UsageError(f"--enforce {enforce!r} is not one of " + ", ".join(codecheck.ENFORCE))
    out = []
    for flag, mode, patterns in (("--check-forbid", "forbid", forbid), ("--check-require", "require", require)):
        for pattern in patterns:
            problem = codecheck.pattern_problem(pattern) or _secret_in(pattern)
            if problem:
                raise UsageError(f"{flag} {problem}")
            out.append(codecheck.Check(mode, pattern, enforce or "warn"))
    if out and kind not in codecheck.CHECK_KINDS:
        raise UsageError(f"a check is evaluated only on {', '.join(codecheck.CHECK_KINDS)} facts, not on a {kind}")
    return out


def _secret_in(pattern: str) -> str | None:
    """Why a check pattern that spells a credential is refused: the file is redacted on the way to
    disk, so the check would forbid the placeholder instead of the credential (a `forbid` of a leaked
    token is a natural thing to ask for)."""
    from ..redact import redact

    found = sorted(kind for kind, _ in redact(pattern).secrets)
    if not found:
        return None
    return (f"holds a {found[0]}: it would be redacted in the fact's file, and the check would then look for "
            "the placeholder instead; match it without spelling it whole (e.g. its first characters)")


def edit(project: Project, fact_id: str, changes: Changes) -> Written:
    if changes.empty():
        raise UsageError("nothing to change: pass a field option (see `stele edit --help`), or no option at "
                         "all to open the file in $EDITOR")
    with write.changing(project):
        record = load(project)
        fact = record.get(fact_id)
        lifecycle.check_edit(fact)
        _check_changes(fact, changes)
        added: dict[str, list[str]] = {}
        for spec in changes.add_links:
            rel, target = parse_link(spec)
            added.setdefault(rel, []).append(target)
        removed = [parse_link(spec) for spec in changes.remove_links]
        _check_targets(record, added, fact.id)

        if changes.title is not None:
            fact.title = changes.title.strip()
        for name in ("delivery", "priority"):
            value = getattr(changes, name)
            if value is not None:
                setattr(fact, name, value)
        for name in ("summary", "retire_when"):
            value = getattr(changes, name)
            if value is not None:
                setattr(fact, name, value or None)
        if changes.expires is not None:
            fact.expires = as_date(changes.expires)
        if changes.review_after is not None:
            fact.review_after = as_date(changes.review_after)
        if changes.body is not None:
            fact.body = changes.body.strip("\n") + "\n"
        fact.anchors = [a for a in fact.anchors if a not in changes.remove_anchors]
        fact.anchors += [a for a in dict.fromkeys(changes.add_anchors) if a not in fact.anchors]
        fact.tags = [t for t in fact.tags if t not in changes.remove_tags]
        fact.tags += [t for t in dict.fromkeys(changes.add_tags) if t not in fact.tags]
        for rel, target in removed:
            drop_link(fact, rel, target)
        for rel, targets in added.items():
            for target in targets:
                add_link(fact, rel, target)
        if changes.clear_checks:
            fact.checks = []
        fact.checks += [c for c in flag_checks(fact.kind, changes.add_forbid, changes.add_require, None)
                        if c not in fact.checks]
        if changes.enforce is not None:
            fact.checks = [plain.replace(c, enforce=changes.enforce) for c in fact.checks]
        extra = lifecycle.clears_review(fact)  # an edit clears a review, and the note of that review
        if changes.status is not None:
            fact.status = changes.status
        tally = Tally()
        write.save(project, fact, extra=extra, tally=tally)
        renamed = write.retitled_path(fact) if changes.title is not None else None
        if renamed:  # the file name follows the title (`...-300-second-ttl.md` for a 60-second TTL misleads)
            write.move(project, fact, renamed)
    return Written(fact, tally.found, warnings=unresolved(project, changes.add_anchors))


@dataclass
class Copy:
    """A fact's text handed to an editor: `path` is a private copy outside the record (an editor's swap
    and backup files never land in docs/memory/); `original` is what the record held when it was made
    (an edit is refused if the fact changed meanwhile). `fact_id` is None for a new fact's template."""
    fact_id: str | None
    rel: str
    path: Path
    original: str

    def discard(self) -> None:
        """The editor could not run: the copy holds nothing of the user's, so it goes."""
        self.path.unlink(missing_ok=True)


def open_copy(project: Project, fact_id: str) -> Copy:
    """Copy a fact to a private temporary file for $EDITOR, after checking it may be edited."""

    fact = load(project).get(fact_id)
    lifecycle.check_edit(fact)
    original = (project.root / fact.path).read_text(encoding="utf-8")
    return Copy(fact.id, fact.path, _private_copy(original, fact.id), original)


def open_new(project: Project, kind: str, title: str | None) -> Copy:
    """A new fact of `kind` from its template, in a private temporary file for $EDITOR."""
    from .scaffold import template_text

    rel, text = template_text(project, kind, title)
    return Copy(None, rel, _private_copy(text, "new"), text)


def _private_copy(text: str, name: str) -> Path:
    import tempfile

    fd, path = tempfile.mkstemp(suffix=".md", prefix=f"{name}-")
    with open(fd, "w", encoding="utf-8") as f:
        f.write(text)
    return Path(path)


def replace(project: Project, copy: Copy) -> Written:
    """Put an edited copy back: the same checks as a flag edit (valid, same id, the lifecycle's status
    rules, a review cleared), under the write lock, and only if the fact is as the copy found it. On
    success the copy is removed; on a refusal it stays and the message names it."""
    assert copy.fact_id is not None, "a new fact's copy is written by create()"
    edited = copy.path.read_text(encoding="utf-8")
    keep = f"; nothing was written, your edited copy is at {copy.path}"
    if edited == copy.original:
        copy.path.unlink(missing_ok=True)
        raise SteleError(f"{copy.fact_id}: no changes; nothing was written")
    with write.changing(project):
        record = load(project)
        fact = record.get(copy.fact_id)
        if fact.path != copy.rel or (project.root / fact.path).read_text(encoding="utf-8") != copy.original:
            raise SteleError(f"{copy.fact_id} changed while you edited it{keep}")
        new, problems = parse_fact(edited, fact.path)
        errors = [str(x) for x in problems if x.severity == "error"]
        if errors or new is None:
            raise SteleError("\n".join(errors) + keep)
        if new.id != fact.id:
            raise SteleError(f"the id must stay {fact.id}{keep}")
        try:
            lifecycle.check_edit(fact)
            if new.status != fact.status:
                lifecycle.check_status(fact, new.status, "`status:`")
            _check_targets(record, {rel: [t for t in ts if t not in fact.links.get(rel, [])]
                                    for rel, ts in new.links.items()}, fact.id)
        except SteleError as e:
            raise SteleError(f"{e}{keep}") from None
        extra = None
        if new.status == fact.status:
            extra = lifecycle.clears_review(new)
        tally = Tally()
        write.save(project, new, extra=extra, tally=tally)
        renamed = write.retitled_path(new) if new.title != fact.title else None
        if renamed:
            write.move(project, new, renamed)
    copy.path.unlink(missing_ok=True)
    return Written(new, tally.found, warnings=unresolved(project, [a for a in new.anchors if a not in fact.anchors]))


def create(project: Project, copy: Copy) -> Written:
    """Write a new fact from its edited template copy (`open_new`); on a refusal the copy stays and
    the message names it."""
    try:
        written = create_text(project, copy.rel, copy.path.read_text(encoding="utf-8"))
    except SteleError as e:
        raise SteleError(f"{e}; your edited copy is at {copy.path}") from None
    copy.path.unlink(missing_ok=True)
    return written


def create_text(project: Project, rel: str, text: str) -> Written:
    """Write a new fact from `text` (a template, filled in by hand or not) at `rel`: parsed, checked
    and redacted like any other write. Nothing is written when it does not hold."""
    new, problems = parse_fact(text, rel)
    errors = [str(x) for x in problems if x.severity == "error"]
    if errors or new is None:
        raise SteleError("; ".join(errors) + " (nothing was written)")
    new.path = rel
    with write.changing(project):
        if new.id in load(project).facts:
            raise SteleError(f"{new.id} already exists; give the new fact another id (nothing was written)")
        tally = Tally()
        write.save(project, new, create=True, tally=tally)
    return Written(new, tally.found, warnings=unresolved(project, list(new.anchors)))


def add_link(fact: Fact, rel: str, target: str) -> bool:
    targets = fact.links.setdefault(rel, [])
    if target in targets:
        return False
    targets.append(target)
    return True


def drop_link(fact: Fact, rel: str, target: str) -> bool:
    targets = fact.links.get(rel, [])
    if target not in targets:
        return False
    targets.remove(target)
    if not targets:
        del fact.links[rel]
    return True


def link(project: Project, src: str, rel: str, dst: str) -> Fact:
    check_relation(rel)
    with write.changing(project):
        record = load(project)
        fact = record.get(src)
        _check_targets(record, {rel: [dst.upper()]}, fact.id)
        if not add_link(fact, rel, record.get(dst).id):
            raise SteleError(f"{fact.id} already has {rel} -> {dst}; nothing changed")
        write.save(project, fact)
    return fact


def unlink(project: Project, src: str, rel: str, dst: str) -> Fact:
    check_relation(rel)
    with write.changing(project):
        fact = load(project).get(src)
        if not drop_link(fact, rel, dst.upper()):
            raise SteleError(f"{fact.id} has no {rel} -> {dst.upper()} link; `stele show {fact.id}` lists its "
                             "links")
        write.save(project, fact)
    return fact


def retire(project: Project, fact_id: str, why: str) -> Fact:
    if not why.strip():
        raise UsageError("--why is empty: say why the fact no longer holds")
    with write.changing(project):
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
    """Someone confirmed the fact still holds: stamp the day and commit, clear a `needs_review` mark,
    and record fresh fingerprints of the code it is anchored to."""
    with write.changing(project):
        fact = load(project).get(fact_id)
        fact.verified = today()
        fact.verified_at = gitrepo.head_sha(project.root)
        fact.needs_review = None
        write.save(project, fact, repin=True)
    return fact
