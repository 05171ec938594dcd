"""From drafts to facts: which drafts are new, their anchors, ids, links and provenance, and one write.

Why it is shaped this way:
- Re-running an import changes nothing. A draft is skipped when the record already has it: a fact
  whose `source:` names the same file (for one-fact-per-file sources such as an ADR) or the same file
  and the same words (a bullet), or any live fact of its kind it repeats or nearly repeats (the rule
  `stele remember` and doctor's `near-duplicate` use, `similar.py`). Drafts of one import that repeat
  each other become one fact naming every place it was read from.
- Ids are derived from the draft (its file, lines and text: `ids.derived_id`), so a dry run shows
  the ids the real run then writes, as long as the record did not change in between.
- Provenance is the file, its lines and the commit it was read at
  (`docs/adr/0004-x.md#L1-L40@9f3c2e1a0b4d`); a file that differs from HEAD has no commit to name.
- Links between ADRs are resolved after every draft has an id: "Superseded by" sets the replacement's
  `supersedes` and the old fact's status, so doctor finds no half-done supersession; an ADR replaced
  by one that is not imported is retired instead, and the report says so.
- Text doctor would flag (an escape sequence, a bidi override, words addressed to the agent, a
  command that downloads and runs code) is named in the report and written as a draft, its control
  and invisible characters made visible (`neutralize`): the files come in pull requests.
- A draft is redacted before it is compared with the record, which holds redacted text: a bullet
  holding a token did not match its own earlier import.
- Each fact is validated as the write will validate it before it is planned: one the record would
  refuse is named in the report (`skipped ...: not imported: why`) and the rest are written.
- Everything is written as one journaled change (`write.save_all`), redacted and validated like any
  other write; a dry run does all of it but the write.
"""
from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from ... import gitrepo
from ...anchors.resolve import WorkTree, resolve
from ...delivery import today
from ...ids import derived_id
from ...kinds import CLOSED_STATUSES
from ...neutralize import FLAG_CHECKS, neutralize, suspects
from ...project import Project
from ...redact import Redactor, Tally
from .. import write
from ..load import Record, load
from ..model import Fact
from ..similar import similar_to, words
from .draft import Draft


@dataclass
class Outcome:
    written: list[Fact] = field(default_factory=list)
    changed: list[Fact] = field(default_factory=list)  # earlier facts given a link or a status
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (where, why)
    notes: list[str] = field(default_factory=list)
    dry_run: bool = False
    redacted: Tally = field(default_factory=Tally)  # the secrets taken out of what is written
    set_up: list[str] = field(default_factory=list)  # what `stele init` wrote first (or would have)


_ENTRY = re.compile(r"^(.*)#L\d+-L\d+(?:@[0-9a-f]+)?$")


MAX_ANCHORS = 20  # and sources: a fact tied to more is tied to nothing in particular


def source_path(entry: str) -> str:
    """`docs/adr/1.md#L1-L9@abc` -> `docs/adr/1.md`; the lines and commit are cut from the end, since a
    file's own name may hold `#` or `@` (JabRef's `0024-use-#-as-indicator-for-BibTeX-string-constants.md`)."""
    m = _ENTRY.match(entry)
    return m.group(1) if m else entry.split("#", 1)[0].split("@", 1)[0]


def apply(project: Project, drafts: list[Draft], *, dry_run: bool = False, record: Record | None = None) -> Outcome:
    with write.changing(project):
        record = record if record is not None else load(project)
        out = Outcome(dry_run=dry_run)
        known: list[tuple[Draft, Fact]] = []
        planned = _plan(project, drafts, record, out, known)
        _link(planned, known, record, out)
        if not dry_run and (planned or out.changed):
            write.save_all(project, [(f, None) for f in [*(f for _, f in planned), *out.changed]])
        for _, f in planned:
            f.path = f.path or project.rel(write.new_fact_path(project, f))
        out.written = [f for _, f in planned]
    return out


def _plan(project: Project, drafts: list[Draft], record: Record, out: Outcome,
          known: list[tuple[Draft, Fact]]) -> list[tuple[Draft, Fact]]:
    """The drafts to write, as facts; `known` gets each ADR imported earlier with its fact (the links
    it declares are still written: its replacement may be new)."""
    tree = WorkTree(project.root)
    tracked, dirty, head = set(tree.files()), gitrepo.changed_paths(project.root), gitrepo.head_sha(project.root)
    earlier: dict[str, list[Fact]] = {}
    for fact in record.facts.values():
        for entry in fact.source:
            earlier.setdefault(source_path(entry), []).append(fact)
    live = [f for f in record.facts.values() if f.status not in CLOSED_STATUSES]
    taken = set(record.facts)
    redactor = Redactor(project.config["redaction.patterns"])
    planned: list[tuple[Draft, Fact]] = []
    for d in drafts:
        # compared as the record holds it: a bullet with a token was new on every run, its twin redacted;
        # and judged redacted, so a note quoting a flagged command does not print the token in its URL
        secrets = [redactor.redact(d.title), redactor.redact(d.body)]
        d.title, d.body = secrets[0].text, secrets[1].text
        flagged = _flagged(d)
        entry = d.where() + (f"@{head[:12]}" if head and d.path in tracked and d.path not in dirty else "")
        before = earlier.get(d.path, [])
        same = next((f for f in before if d.whole_file or words(f.body) == words(d.body)), None)
        if same is not None:
            out.skipped.append((d.where(), f"already imported as {same.id}"))
            if d.whole_file:
                known.append((d, same))
            continue
        out.notes += [f"{d.path}: {n}" for n in d.notes]  # of a draft still to write: a re-run says nothing
        # derived from what was read, so the ids a dry run shows are the ids the real run writes
        fact = Fact(id=derived_id(d.kind, f"{d.where()}\n{d.title}\n{d.body}", taken), kind=d.kind, title=d.title, body=d.body, status=d.status,
                    delivery=d.delivery, anchors=[], tags=list(dict.fromkeys(d.tags)),
                    created=today(), source=[entry])
        threshold = project.config["doctor.near_duplicate"]
        repeats = similar_to(fact, live, threshold)
        if repeats:
            out.skipped.append((d.where(), f"{'repeats' if repeats[0].exact else 'nearly repeats'} {repeats[0].id}"))
            continue
        twin = similar_to(fact, [f for _, f in planned if f.status not in CLOSED_STATUSES], threshold)
        if twin:
            kept = next(f for _, f in planned if f.id == twin[0].id)
            if len(kept.source) < MAX_ANCHORS:  # where it was read, not every place it is repeated
                kept.source.append(entry)
            out.skipped.append((d.where(), f"merged into {kept.id} (the same {d.kind} twice)"))
            continue
        if flagged:
            if fact.status in ("", "current"):
                fact.status = "draft"
            out.notes.append(f"{d.where()}: {flagged}; written as a draft: read it before committing")
        for found in secrets:
            out.redacted.add(found)
        fact.anchors = _anchors(d, tree, out)  # once it is known to be new: each is a lookup in the checkout
        refused = write.refusal(project, fact)
        if refused:  # one fact the record would refuse costs that fact, never the rest of the import
            out.skipped.append((d.where(), f"not imported: {refused}"))
            continue
        taken.add(fact.id)
        planned.append((d, fact))
    return planned


def _flagged(d: Draft) -> str:
    """What doctor would flag in the draft's text, said once ("" when nothing), with its control and
    invisible characters made visible in place: the imported file came in a pull request, and a fact
    that moved a reviewer's cursor or hid a bidi override is no copy of it."""
    found = [s for text in (d.title, d.body) for s in suspects(text, kind=d.kind) if s.check in FLAG_CHECKS]
    d.title, d.body = neutralize(d.title), neutralize(d.body)
    return f"{found[0].message} [{', '.join(dict.fromkeys(s.check for s in found))}]" if found else ""


def _anchors(d: Draft, tree: WorkTree, out: Outcome) -> list[str]:
    """The draft's own anchors and the paths and symbols its text names, each kept only if it resolves
    in the checkout (a glob must match a file): an anchor that names nothing is a doctor finding. At
    most MAX_ANCHORS, after at most ten times as many lookups: an ADR naming 5,000 symbols was a 300 KB
    fact."""
    folder = posixpath.dirname(d.path)
    found: dict[str, None] = {}
    left = False
    tries = 10 * MAX_ANCHORS  # lookups, found or not: 3,000 globs that match nothing are 3,000 walks
    for a in d.anchors:
        if len(found) >= MAX_ANCHORS or not tries:
            left = True
            break
        tries -= 1
        if not a.startswith("~") and resolve(a, tree).ok:
            found[a] = None
    for name in d.named:
        if len(found) >= MAX_ANCHORS or not tries:
            left = True
            break
        tries -= 1
        path, sep, symbol = name.partition("::")
        for candidate in dict.fromkeys([path.lstrip("./") if path.startswith("./") else path,
                                        posixpath.normpath(posixpath.join(folder, path))]):
            if candidate.startswith("..") or not candidate or not tree.exists(candidate):
                continue
            if (tree.root / candidate).is_dir():
                break
            anchor = candidate + (f"::{symbol}" if sep else "")
            if resolve(anchor, tree).ok:
                found[anchor] = None
                break
    if left:
        out.notes.append(f"{d.path}: names more than {MAX_ANCHORS} files, globs or symbols: the first "
                         f"{MAX_ANCHORS} that resolve are its anchors (a folder or a glob can stand for the rest)")
    return list(found)


def _link(planned: list[tuple[Draft, Fact]], known: list[tuple[Draft, Fact]], record: Record,
          out: Outcome) -> None:
    """ADR links by file: the drafts of this import first, then facts imported earlier. An ADR imported
    earlier still declares its links: `adr new -s`, log4brains and MADR mark the old ADR "Superseded
    by" the new one (often only there), so the old fact is superseded when the new one arrives."""
    by_path: dict[str, Fact] = {}
    for fact in sorted(record.facts.values(), key=lambda f: f.id):
        for entry in fact.source:
            by_path.setdefault(source_path(entry), fact)
    by_path.update({d.path: f for d, f in planned if d.whole_file})
    changed: dict[str, Fact] = {}
    new_facts = [f for _, f in planned]
    new_ids = {f.id for f in new_facts}

    def touch(fact: Fact) -> None:
        if fact.id not in new_ids:
            changed[fact.id] = fact

    for d, fact in planned:
        for rel, target in d.refs:
            other = by_path.get(target)
            if other is None or other.id == fact.id:
                out.notes.append(f"{d.path}: {rel} {target}, which is not imported: no link written")
                continue
            if rel == "supersedes":
                _supersede(other, fact, touch)
            elif other.id not in fact.links.get(rel, []):
                fact.links.setdefault(rel, []).append(other.id)
        for target in d.superseded_by:
            other = by_path.get(target)
            if other is None or other.id == fact.id:
                fact.status = "retired"
                out.notes.append(f"{d.path}: superseded by {target}, which is not imported: written as retired")
                continue
            _supersede(fact, other, touch)
    for d, fact in known:  # links to ADRs not imported were reported on the run that imported this one
        for rel, target in d.refs:
            other = by_path.get(target)
            if other is None or other.id == fact.id:
                continue
            if rel == "supersedes":
                _supersede(other, fact, touch)
            elif other.id not in fact.links.get(rel, []):
                fact.links.setdefault(rel, []).append(other.id)
                touch(fact)
        for target in d.superseded_by:
            other = by_path.get(target)
            if other is not None and other.id != fact.id:
                _supersede(fact, other, touch)
    replaced = {i for f in [*record.facts.values(), *new_facts] for i in f.links.get("supersedes", [])}
    for d, fact in planned:  # "Status: Superseded" naming no ADR, or one by a number no file has
        if fact.status == "superseded" and fact.id not in replaced:
            fact.status = "retired"
            out.notes.append(f"{d.path}: superseded, but by no ADR this import found: written as retired "
                             f"(once its replacement is recorded: `stele supersede {fact.id} --by NEW`)")
    out.changed = list(changed.values())


def _supersede(old: Fact, new: Fact, touch: Callable[[Fact], None]) -> None:
    if old.id not in new.links.get("supersedes", []):
        new.links.setdefault("supersedes", []).append(old.id)
        touch(new)
    if old.status != "superseded":
        old.status = "superseded"
        touch(old)
