"""Knowledge documents: draft -> reviewed (with a note) -> current -> superseded.

Agents treat knowledge as current truth, so writing it and accepting it are separate steps, each its
own function here. Every transition checks the status it starts from and refuses anything else with
one line naming the transition, why it is not allowed, and the step to take instead. Editing stays in
`memory.edit` (`check_editable`: only drafts are edited, an edit clears a review); superseding reuses
`memory.supersede` for the edge and the old status. `distill` drafts a document from a finished task
with its provenance; `export` is the only way knowledge becomes a file outside the record.
"""
from __future__ import annotations

from pathlib import Path

from . import memory, store, wal
from .errors import SteleError, UsageError
from .kinds import KINDS
from .lifecycle import today
from .memory import KNOWLEDGE_STATUSES, REVIEW_KEY
from .model import TITLE_MAX, Fact, first_sentence
from .project import Project
from .record import Record, load

DRAFT_BODY = """\
## Summary

Two or three sentences; this is what briefings show.

## Details

The knowledge itself: how it works, runbook steps, findings.

## Sources

Tasks, sessions, files and facts this was written from.
"""
DISTILL_TYPES = ("note", "decision", "outcome")  # listed one by one; stages and steering are folded
DISTILL_MAX_ENTRIES = 40
DISTILL_ENTRY_CHARS = 500


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


def draft(project: Project, title: str, body: str | None = None, **fields) -> memory.Written:
    """A new document in status draft (`fields`: anchors, tags, links, summary, source)."""
    return memory.remember(project, body or DRAFT_BODY, kind="document", title=title, status="draft",
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
    clean = memory.redactor(project).redact(note).text
    store.save(project, fact, extra={REVIEW_KEY: {"on": today().isoformat(), "note": clean}})
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
    store.save(project, fact)
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
    old, new = memory.supersede(project, old.id, new.id)
    new.status = "current"
    store.save(project, new)
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
    store.atomic_write(dest, f"{note}# {fact.title}\n\n{fact.body.strip()}\n")
    return dest


def task_history(project: Project, task_id: str) -> list[wal.Entry]:
    """A task's session history in time order: entries naming the task, and the untagged entries of
    sessions started for it."""
    from .session import START, event, order_key

    report = wal.ReadReport()
    every = list(wal.read_all(project, report))
    wal.warn_skipped(report)
    started = {e.session for e in every if event(e) == START and e.task == task_id}
    mine = [e for e in every if e.task == task_id or (e.task is None and e.session in started)]
    return sorted(mine, key=order_key)


def distill(project: Project, task_id: str, title: str | None = None) -> memory.Written:
    """A draft document from a finished task: its session history (goal, stages folded to their latest
    visit, steering, notes, decisions and outcomes), the facts linked to it and the files it touched,
    with all of them named as its sources."""
    from .preamble import fold
    from .session import event, is_bookkeeping

    record = load(project)
    task = record.get(task_id)
    if "done" not in KINDS[task.kind].statuses:
        raise UsageError(f"{task.id} is a {task.kind}, not a task: distill takes a finished task")
    if task.status != "done":
        raise refused("distill", task, f"it is {task.status} and only a finished (done) task is distilled",
                      f"finish it first (`stele task done {task.id}`)")
    history = task_history(project, task.id)
    folded = fold(history)
    said = [e for e in history if e.type in DISTILL_TYPES and event(e) is None and not is_bookkeeping(e)]
    said = said[-DISTILL_MAX_ENTRIES:]
    linked = [record.facts[i] for i in dict.fromkeys(o for _, o in record.graph.neighbors(task.id))
              if i in record.facts and record.facts[i].kind != "task"]
    files = list(dict.fromkeys([*task.anchors, *(p for e in history for p in e.paths)]))
    outcomes = [e.text for e in said if e.type == "outcome"]
    summary = first_sentence(outcomes[-1]) if outcomes else task.summary_text
    lines = ["## Summary", "", summary or task.title]
    if folded.goal:
        lines += ["", "## Goal", "", _clip(folded.goal)]
    if folded.stages:
        lines += ["", "## Stages", ""]
        lines += [f"- {st.name}" + (f" ({st.visits} visits)" if st.visits > 1 else "") + f": {_clip(st.text)}"
                  for st in folded.stages]
    if folded.steering:
        lines += ["", "## Steering", ""] + [f"- {_clip(e.text)}" for e in folded.steering]
    lines += ["", "## What was done", ""]
    lines += [f"- {e.ts[:10]} {e.type}: {_clip(e.text)}" for e in said] or ["- (no session history)"]
    if linked:
        lines += ["", "## Decisions and facts", ""]
        lines += [f"- [{f.id}] {f.kind}: {f.title}. {f.summary_text}" for f in linked]
    if files:
        lines += ["", "## Files", ""] + [f"- {p}" for p in files]
    lines += ["", "## Sources", "", f"- task {task.id}: {task.title}"]
    used = [e for e in history if e in said or e.type in ("stage", "steering") or event(e) is not None]
    if folded.sessions:
        lines.append(f"- sessions: {', '.join(folded.sessions)} ({len(used)} entries)")
    if linked:
        lines.append(f"- facts: {', '.join(f.id for f in linked)}")
    if files:
        lines.append(f"- files: {', '.join(files)}")
    title = (title or task.title).strip()[:TITLE_MAX]
    source = [task.id, *(e.id for e in used), *(f.id for f in linked), *files]
    return draft(project, title, "\n".join(lines) + "\n", links=[f"relates-to:{task.id}"], source=source,
                 summary=summary or None, record=record)


def _clip(text: str) -> str:
    text = " ".join(text.split())
    if len(text) <= DISTILL_ENTRY_CHARS:
        return text
    return text[:DISTILL_ENTRY_CHARS - 3].rsplit(" ", 1)[0] + "..."
