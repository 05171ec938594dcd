"""Knowledge documents: the lifecycle's transitions, draft -> reviewed (with a note) -> current ->
superseded, and supersession of any fact.

Agents treat knowledge as current truth, so writing it and accepting it are separate steps, each its
own function here. Every transition checks the status it starts from and refuses anything else with
one line naming the transition, why it is not allowed, and the step to take instead; the rules
themselves live in `lifecycle` (which `edit` asks too: only drafts are edited, an edit clears a review).
`supersede` is the one supersession, for short records and knowledge alike: `lifecycle` says which, and
both files are written as one journaled change (`write.save_all`), so a kill between them is finished
by the next write instead of leaving OLD current beside the fact that replaced it. `export` is the
only way knowledge becomes a file outside the record.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import atomic
from ..delivery import today
from ..errors import SteleError, UsageError
from ..kinds import KINDS
from ..project import Project
from . import edit, lifecycle, write
from .lifecycle import REVIEW_KEY, fact_digest, refused, unreviewed
from .load import Record, load
from .model import Fact

DRAFT_BODY = """\
## Summary

Two or three sentences; this is what briefings show.

## Details

The knowledge itself: how it works, runbook steps, findings.

## Sources

Tasks, sessions, files and facts this was written from.
"""


def document(record: Record, fact_id: str) -> Fact:
    fact = record.get(fact_id)
    if not lifecycle.is_knowledge(fact):
        raise SteleError(f"{fact.id} is a {fact.kind} edited in place, not a knowledge document: "
                         "`stele knowledge` handles documents and drafts (`stele edit` changes this one)")
    return fact


def _ended(action: str, fact: Fact) -> SteleError:
    return refused(action, fact, f"it is {fact.status} and stays only as history",
                   "write a new draft with `stele knowledge draft`")


def draft(project: Project, title: str, body: str | None = None, **fields: Any) -> edit.Written:
    """A new document in status draft (`fields`: anchors, tags, links, summary, source)."""
    return edit.remember(project, body or DRAFT_BODY, kind="document", title=title, status="draft",
                           **fields)


def review(project: Project, fact_id: str, note: str) -> Fact:
    """draft -> reviewed, keeping the reviewer's note in the frontmatter (`review: {on, note}`)."""
    return review_all(project, [fact_id], note)[0]


def review_all(project: Project, fact_ids: list[str], note: str, *, drafts: bool = False,
               tag: str | None = None) -> list[Fact]:
    """`review` for several facts, one note for all, written as one journaled change: each is checked
    as `review` checks one, and one refusal writes nothing. `drafts`: every draft of the record (with
    `tag`, those tagged so) besides `fact_ids`: an import of 63 ADRs without a status is two commands
    to accept, not 126."""
    note = " ".join(note.split())
    if not note:
        raise UsageError("--note is empty: say what you checked, e.g. --note 'matches the code at 9f3c2e1'")
    with write.changing(project):
        record = load(project)
        facts = _chosen(record, fact_ids, "draft" if drafts else None, tag)
        for fact in facts:
            if fact.status == "reviewed":
                raise refused("review", fact, "it is already reviewed", f"promote it (`stele knowledge promote "
                              f"{fact.id}`), or edit it, which clears the review, and review it again")
            if fact.status == "current":
                raise refused("review", fact, "it is current knowledge and only drafts are reviewed",
                              f"write a new draft and `stele supersede {fact.id} --by NEW`")
            if fact.status != "draft":
                raise _ended("review", fact)
        on = today().isoformat()
        for fact in facts:
            fact.status = "reviewed"
        write.save_all(project, [(f, {REVIEW_KEY: {"on": on, "note": note, "digest": fact_digest(f)}})
                                 for f in facts])
    return facts


def promote(project: Project, fact_id: str) -> Fact:
    """reviewed -> current: from now on briefings list it."""
    return promote_all(project, [fact_id])[0]


def promote_all(project: Project, fact_ids: list[str], *, reviewed: bool = False,
                tag: str | None = None) -> list[Fact]:
    """`promote` for several facts as one journaled change (one refusal writes nothing); `reviewed`:
    every reviewed draft of the record (with `tag`, those tagged so) besides `fact_ids`."""
    with write.changing(project):
        record = load(project)
        facts = _chosen(record, fact_ids, "reviewed" if reviewed else None, tag)
        for fact in facts:
            if fact.status == "draft":
                raise refused("promote", fact, "it is a draft that has not been reviewed, and only reviewed "
                              "drafts are promoted", f"review it first: `stele knowledge review {fact.id} --note TEXT`")
            if fact.status == "current":
                raise refused("promote", fact, "it is already current", "nothing changed")
            if fact.status != "reviewed":
                raise _ended("promote", fact)
            why = unreviewed(fact)
            if why:
                raise refused("promote", fact, f"it {why.format(status=fact.status)}",
                              f"set it back to draft, then `stele knowledge review {fact.id} --note TEXT`")
        for fact in facts:
            fact.status = "current"
        write.save_all(project, [(f, None) for f in facts])
    return facts


def _chosen(record: Record, fact_ids: list[str], status: str | None, tag: str | None) -> list[Fact]:
    """The facts named (each a document or a draft), then every fact in `status` (tagged `tag`)."""
    facts = {f.id: f for f in (document(record, i) for i in fact_ids)}
    if status is not None:
        facts.update({f.id: f for f in sorted(record.facts.values(), key=lambda f: f.id)
                      if f.status == status and (tag is None or tag in f.tags)})
        if not facts:
            raise SteleError(f"no {status} facts{f' tagged {tag!r}' if tag else ''} in the record: nothing changed")
    if not facts:
        raise UsageError("name the facts (ID ...) or choose them all (--all-drafts / --all-reviewed)")
    return list(facts.values())


def supersede(project: Project, old_id: str, new_id: str) -> tuple[Fact, Fact]:
    """NEW supersedes OLD: the edge goes on NEW, OLD's status becomes superseded and OLD stays readable
    as history. For knowledge (either one a document or a draft) OLD must be current and NEW a
    reviewed draft, which becomes current."""
    with write.changing(project):
        record = load(project)
        old, new = record.get(old_id), record.get(new_id)
        if "superseded" not in KINDS[old.kind].statuses:
            raise SteleError(f"{old.id} is a {old.kind}; a {old.kind} is cancelled, not superseded "
                             f"(`stele task cancel {old.id}`)")
        knowledge = lifecycle.check_supersede(old, new)
        if _reaches(record, old.id, new.id):
            raise SteleError(f"{old.id} already supersedes {new.id} (directly or through others): that would "
                             "be a cycle; nothing changed")
        edit.add_link(new, "supersedes", old.id)
        if knowledge:
            new.status = "current"
        old.status = "superseded"
        write.save_all(project, [(new, None), (old, None)])
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


def export(project: Project, fact_id: str, dest: Path, force: bool = False) -> Path:
    """Write the document as a plain Markdown file at `dest` (outside the record)."""
    fact = document(load(project), fact_id)
    dest = dest if dest.is_absolute() else Path.cwd() / dest
    if dest.resolve().is_relative_to(project.memory_dir.resolve()):
        raise UsageError(f"{dest}: export outside {project.rel(project.memory_dir)}/; the record already "
                         f"holds {fact.id}")
    if dest.is_dir():
        raise UsageError(f"{dest} is a folder: give a file path, e.g. {dest / (fact.id + '.md')}")
    if dest.exists() and not force:
        raise SteleError(f"{dest} already exists: pass --force to replace it")
    note = f"<!-- Exported by Stele from {fact.id} ({fact.status}) on {today().isoformat()}. The record " \
           f"is the source: change it there (`stele show {fact.id}`). -->\n"
    atomic.write(dest, f"{note}# {fact.title}\n\n{fact.body.strip()}\n")
    return dest
