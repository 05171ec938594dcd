"""Distilling: a finished task's session history drafted into a knowledge document.

It reads the session log (its history, folded as the preamble folds it) and writes through the
knowledge lifecycle (`record.knowledge.draft`), so the draft is reviewed like any other; every entry,
fact and file it was written from is named in its `source`.
"""
from __future__ import annotations

from .. import textcut
from ..errors import UsageError
from ..kinds import KINDS, TITLE_MAX
from ..project import Project
from ..record.edit import Written
from ..record.knowledge import draft
from ..record.lifecycle import refused
from ..record.load import load
from ..record.model import first_sentence
from . import wal

DISTILL_TYPES = ("note", "decision", "outcome")  # listed one by one; stages and steering are folded
DISTILL_MAX_ENTRIES = 40
DISTILL_ENTRY_CHARS = 500


def task_history(project: Project, task_id: str) -> list[wal.Entry]:
    """A task's session history in time order: entries naming the task, and the untagged entries of
    sessions started for it."""
    from .sessions import START, event, order_key

    report = wal.ReadReport()
    every = list(wal.read_all(project, report))
    wal.warn_skipped(report)
    started = {e.session for e in every if event(e) == START and e.task == task_id}
    mine = [e for e in every if e.task == task_id or (e.task is None and e.session in started)]
    return sorted(mine, key=order_key)


def distill(project: Project, task_id: str, title: str | None = None) -> Written:
    """A draft document from a finished task: its session history (goal, stages folded to their latest
    visit, steering, notes, decisions and outcomes), the facts linked to it and the files it touched,
    with all of them named as its sources."""
    from .preamble import fold
    from .sessions import event, is_bookkeeping

    record = load(project)
    task = record.get(task_id)
    if "done" not in KINDS[task.kind].statuses:
        raise UsageError(f"{task.id} is a {task.kind}, not a task: distill takes a finished task")
    if task.status != "done":
        raise refused("distill", task, f"it is {task.status} and only a finished (done) task is distilled",
                      f"finish it first (`stele task done {task.id}`)")
    earlier = [f for f in record.facts.values() if f.kind == "document" and f.source[:1] == [task.id]
               and task.id in f.links.get("relates-to", []) and f.status not in ("superseded", "retired")]
    if earlier:
        doc = earlier[0]
        raise refused("distill", task, f"{doc.id} ({doc.status}, {doc.path}) is already distilled from it",
                      f"edit that draft, or retire it (`stele retire {doc.id} --why ...`) and distill again")
    history = task_history(project, task.id)
    folded = fold(history)
    said = [e for e in history if e.type in DISTILL_TYPES and event(e) is None and not is_bookkeeping(e)]
    said = said[-DISTILL_MAX_ENTRIES:]
    linked = [record.facts[i] for i in dict.fromkeys(o for _, o in record.graph.neighbors(task.id))
              if i in record.facts and record.facts[i].kind != "task"
              and record.facts[i].source[:1] != [task.id]]  # not an earlier distillation of this task
    runs = list(dict.fromkeys(e.refs["run"] for e in history
                              if e.type == "snapshot" and isinstance(e.refs.get("run"), str)))
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
        lines += [f"- [{f.id}] {f.kind}: {_joined(f.title, f.summary_text)}" for f in linked]
    if files:
        lines += ["", "## Files", ""] + [f"- {p}" for p in files]
    lines += ["", "## Sources", "", f"- task {task.id}: {task.title}"]
    used = [e for e in history if e in said or e.type in ("stage", "steering") or event(e) is not None]
    if folded.sessions:
        lines.append(f"- sessions: {', '.join(folded.sessions)} ({textcut.counted(len(used), 'entry', 'entries')})")
    if runs:
        lines.append(f"- runs (what the agent saw: `stele snapshot show RUN`): {', '.join(runs)}")
    if linked:
        lines.append(f"- facts: {', '.join(f.id for f in linked)}")
    if files:
        lines.append(f"- files: {', '.join(files)}")
    title = textcut.one_line(title or task.title, TITLE_MAX)
    source = [task.id, *(e.id for e in used), *(f"run:{r}" for r in runs), *(f.id for f in linked), *files]
    return draft(project, title, "\n".join(lines) + "\n", links=[f"relates-to:{task.id}"], source=source,
                 summary=summary or None, record=record)


def _joined(title: str, summary: str) -> str:
    """`Title. Summary`, without doubling the title's own full stop or repeating it as the summary."""
    if not summary or summary.strip() == title.strip():
        return title
    return f"{title}{'' if title.rstrip().endswith(('.', '!', '?', ':')) else '.'} {summary}"


def _clip(text: str) -> str:
    return textcut.one_line(text, DISTILL_ENTRY_CHARS)
