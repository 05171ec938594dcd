"""Knowledge documents: draft -> reviewed (with a note) -> current -> superseded.

Agents treat knowledge as current truth, so writing it and accepting it are separate steps, each its
own function here. Every transition checks the status it starts from and refuses anything else with
one line naming the transition, why it is not allowed, and the step to take instead. Editing stays in
`edit.edit` (`check_editable`: only drafts are edited, an edit clears a review); superseding reuses
`edit.supersede` for the edge and the old status. `distill` drafts a document from a finished task
with its provenance; `export` is the only way knowledge becomes a file outside the record.
"""
from __future__ import annotations

from pathlib import Path

from .. import atomic
from ..errors import SteleError, UsageError
from ..lifecycle import today
from ..project import Project
from . import edit, write
from .edit import KNOWLEDGE_STATUSES, REVIEW_KEY
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


def refused(action: str, fact: Fact, why: str, instead: str) -> SteleError:
    return SteleError(f"`{action}` is not allowed for {fact.id}: {why}; {instead}")


def document(record: Record, fact_id: str) -> Fact:
    fact = record.get(fact_id)
    if fact.kind != "document" and fact.status not in KNOWLEDGE_STATUSES:
        raise SteleError(f"{fact.id} is a {fact.kind} edited in place, not a knowledge document: "
                         "`stele knowledge` handles documents and drafts (`stele edit` changes this one)")
    return fact


def _ended(action: str, fact: Fact) -> SteleError:
    return refused(action, fact, f"it is {fact.status} and stays only as history",
                   "write a new draft with `stele knowledge draft`")


def draft(project: Project, title: str, body: str | None = None, **fields) -> edit.Written:
    """A new document in status draft (`fields`: anchors, tags, links, summary, source)."""
    return edit.remember(project, body or DRAFT_BODY, kind="document", title=title, status="draft",
                           **fields)


def review(project: Project, fact_id: str, note: str) -> Fact:
    """draft -> reviewed, keeping the reviewer's note in the frontmatter (`review: {on, note}`)."""
    note = " ".join(note.split())
    if not note:
        raise UsageError("--note is empty: say what you checked, e.g. --note 'matches the code at 9f3c2e1'")
    fact = document(load(project), fact_id)
    if fact.status == "reviewed":
        raise refused("review", fact, "it is already reviewed", f"promote it (`stele knowledge promote "
                      f"{fact.id}`), or edit it, which clears the review, and review it again")
    if fact.status == "current":
        raise refused("review", fact, "it is current knowledge and only drafts are reviewed",
                      f"write a new draft and `stele knowledge supersede {fact.id} --with NEW`")
    if fact.status != "draft":
        raise _ended("review", fact)
    fact.status = "reviewed"
    write.save(project, fact, extra={REVIEW_KEY: {"on": today().isoformat(), "note": note}})
    return fact


def promote(project: Project, fact_id: str) -> Fact:
    """reviewed -> current: from now on briefings list it."""
    fact = document(load(project), fact_id)
    if fact.status == "draft":
        raise refused("promote", fact, "it is a draft that has not been reviewed, and only reviewed drafts "
                      "are promoted", f"review it first: `stele knowledge review {fact.id} --note TEXT`")
    if fact.status == "current":
        raise refused("promote", fact, "it is already current", "nothing changed")
    if fact.status != "reviewed":
        raise _ended("promote", fact)
    fact.status = "current"
    write.save(project, fact)
    return fact


def supersede(project: Project, old_id: str, new_id: str) -> tuple[Fact, Fact]:
    """Current OLD is replaced by reviewed NEW: NEW becomes current and `supersedes` OLD, which stays
    readable as history."""
    record = load(project)
    old, new = document(record, old_id), document(record, new_id)
    action = f"supersede {old.id} --with {new.id}"
    if old.id == new.id:
        raise UsageError("a document cannot supersede itself: give --with the id of its replacement")
    if old.status in KNOWLEDGE_STATUSES:
        which = "a reviewed" if old.status == "reviewed" else "an unreviewed"
        raise refused(action, old, f"{old.id} is {which} draft and only current knowledge is superseded",
                      f"edit the draft instead, or retire it (`stele retire {old.id} --why ...`)")
    if old.status != "current":
        raise refused(action, old, f"{old.id} is already {old.status}",
                      "supersede the document that is current")
    if new.status == "draft":
        raise refused(action, new, f"{new.id} is a draft that has not been reviewed, and only a reviewed "
                      "draft replaces current knowledge",
                      f"review it first: `stele knowledge review {new.id} --note TEXT`")
    if new.status != "reviewed":
        raise refused(action, new, f"{new.id} is {new.status}, not a reviewed draft",
                      "write a new draft, review it, then supersede")
    old, new = edit.supersede(project, old.id, new.id)
    new.status = "current"
    write.save(project, new)
    return old, new


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
