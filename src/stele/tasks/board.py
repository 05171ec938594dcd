"""Tasks: facts of kind task (and epic/objective/milestone containers), and the work on them.

A task's committed file says what the work is and whether it is finished; who is working on it right
now is a claim (`claims.py`), which lives in git refs and never in the file. So claiming never dirties
a working tree, every worktree and branch sees the same claim at once, and a merge never conflicts
over who held what. `ready()` joins the two: open tasks, nothing open blocking them, nobody holding them.
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import clock
from ..delivery import today
from ..errors import SteleError, UsageError
from ..kinds import CLOSED_STATUSES, CONTAINERS, ENDED_STATUSES, KINDS, WORK_KINDS, priority_rank
from ..project import Project
from ..record.load import Record, find_one, load
from ..record.model import Fact
from . import claims
from .claims import Claim, Claimed, Identity

if TYPE_CHECKING:  # imported where used: a claim's loser needs neither the writer nor the session log
    from ..record import edit
    from ..session import wal

HISTORY_LIMIT = 20


@dataclass
class TaskRow:
    """A task or container with what the record and the claims say about it now."""

    fact: Fact
    claim: Claim | None  # the latest claim record (held, expired or released), if it was ever claimed
    blocked_by: list[str] = field(default_factory=list)  # open facts that `blocks` it
    blocks: list[str] = field(default_factory=list)  # what it `blocks` (its container, later tasks)

    def held(self, now: dt.datetime) -> bool:
        return self.claim is not None and self.claim.live(now)

    def as_dict(self, now: dt.datetime) -> dict[str, Any]:
        f = self.fact
        return {"id": f.id, "kind": f.kind, "status": f.status, "title": f.title, "priority": f.priority,
                "blocks": self.blocks, "blocked_by": self.blocked_by,
                "claim": self.claim.as_dict(now) if self.claim and self.claim.state == "held" else None}


def blockers(record: Record, fact_id: str) -> list[Fact]:
    """Facts that declare `blocks: [fact_id]` (a container's children, a task's prerequisites)."""
    return [record.facts[e.src] for e in record.graph.inc.get(fact_id, ()) if e.rel == "blocks"
            and e.src in record.facts]


def dependents(record: Record, fact_id: str) -> list[Fact]:
    """Facts that `fact_id` declares it `blocks`."""
    return [record.facts[e.dst] for e in record.graph.out.get(fact_id, ()) if e.rel == "blocks"
            and e.dst in record.facts]


def rows(project: Project, record: Record) -> list[TaskRow]:
    known = claims.known_claims(project)
    work = sorted((f for f in record.facts.values() if f.kind in WORK_KINDS), key=_order)
    return [_row(record, f, known) for f in work]


def _row(record: Record, fact: Fact, known: dict[str, Claim]) -> TaskRow:
    return TaskRow(fact, known.get(fact.id),
                   [b.id for b in blockers(record, fact.id) if b.status not in CLOSED_STATUSES],
                   [d.id for d in dependents(record, fact.id)])


def _order(fact: Fact) -> tuple:
    return (priority_rank(fact.priority), fact.created or dt.date.max, fact.id)


def list_tasks(project: Project, record: Record, *, statuses: Sequence[str] = (),
               mine: Identity | None = None, include_closed: bool = False,
               now: dt.datetime | None = None) -> list[TaskRow]:
    """Tasks and containers: open ones by default; `statuses` picks exactly; `mine` keeps live claims of
    that agent (and session, when it has one)."""
    now = now or clock.utcnow()
    for status in statuses:
        if status not in KINDS["task"].statuses:
            raise UsageError(f"--status {status!r} is not a task status: use one of "
                             + ", ".join(KINDS["task"].statuses))
    found = rows(project, record)
    if statuses:
        found = [r for r in found if r.fact.status in statuses]
    elif not include_closed:
        found = [r for r in found if r.fact.status not in CLOSED_STATUSES]
    if mine is not None:
        found = [r for r in found if r.held(now) and mine.matches(r.claim)]
    return found


def ready(project: Project, record: Record, now: dt.datetime | None = None) -> list[TaskRow]:
    """Work to pick up: open tasks (never containers) with no open blocker and no live claim."""
    now = now or clock.utcnow()
    return [r for r in rows(project, record)
            if r.fact.kind == "task" and r.fact.status == "open" and not r.blocked_by and not r.held(now)]


def new_task(project: Project, title: str, *, kind: str = "task", parent: str | None = None,
             links: Sequence[str] = (), body: str | None = None, priority: str | None = None,
             anchors: Sequence[str] = (), tags: Sequence[str] = (), allow_duplicate: bool = False
             ) -> edit.Written:
    """Create an open task (or container); `parent` becomes `blocks: [PARENT]` on the new task.
    `allow_duplicate`: a recurring task repeats an open one's title on purpose."""
    from ..record import edit

    if kind not in WORK_KINDS:
        raise UsageError(f"--kind {kind!r}: a task is one of " + ", ".join(WORK_KINDS))
    record = load(project)
    wanted = list(links)
    if parent:
        up = record.get(parent)
        if up.kind not in WORK_KINDS:
            raise SteleError(f"--parent {up.id} is a {up.kind}: a parent is a task, epic, objective or "
                             "milestone")
        wanted.append(f"blocks:{up.id}")
    return edit.remember(project, body or title, kind=kind, title=title, links=wanted, status="open",
                           priority=priority, anchors=anchors, tags=tags, record=record,
                           allow_duplicate=allow_duplicate)


def work_fact(record: Record, task_id: str) -> Fact:
    return work_fact_check(record.get(task_id))


def work_fact_check(fact: Fact) -> Fact:
    if fact.kind not in WORK_KINDS:
        raise SteleError(f"{fact.id} is a {fact.kind}, not a task: `stele task list` shows the tasks")
    return fact


def claimable(project: Project, task_id: str, record: Record | None = None) -> Fact:
    """The task a claim is for, checked: a task (not a container), not closed. Read from its own file
    when it can be (`find_one`), so deciding a claim never waits on loading the whole record."""
    fact = find_one(project, task_id) if record is None else None
    fact = work_fact(record or load(project), task_id) if fact is None else work_fact_check(fact)
    if fact.kind in CONTAINERS:
        raise SteleError(f"{fact.id} is an {fact.kind}, a container: claim one of its tasks "
                         f"(`stele task ready`, `stele task show {fact.id}`)")
    if fact.status in CLOSED_STATUSES:
        raise SteleError(f"{fact.id} is {fact.status}; reopen it first "
                         f"(`stele edit {fact.id} --status open`)")
    return fact


def claim_task(project: Project, task_id: str, me: Identity, *, lease: dt.timedelta | None = None,
               remote: str | None = None, now: dt.datetime | None = None,
               record: Record | None = None, log: bool = True) -> Claimed:
    """Claim a task for `me` (see `claims.claim`) and log it to `me`'s session. The returned Claimed is
    what a caller hands on to whatever a claim sets off (a run's snapshot, for instance)."""
    fact = claimable(project, task_id, record)
    claimed = claims.claim(project, fact.id, me, lease or claims.default_lease(project), now=now, remote=remote)
    if log:
        log_claim(project, me, claimed)
    return claimed


def accept(project: Project, claimed: Claimed, me: Identity, log: bool = True) -> Claimed:
    """Check a claim that was decided before its task was read (`snapshot.claim`: so that racing
    losers never pay for the record's parser) the way `claim_task` checks first, and log it. A claim
    on something that is not a claimable task (a typo, a done task, an epic) is undone before the
    check's error is raised: a first claim is forgotten (its ref deleted), a takeover released. A
    renewal stands, renewed: the task was held before, and only its holder could have renewed it."""
    try:
        claimable(project, claimed.claim.task)
    except BaseException:
        undo(project, claimed, me)
        raise
    if log:
        log_claim(project, me, claimed)
    return claimed


def undo(project: Project, claimed: Claimed, me: Identity) -> None:
    """Take back a claim that was just decided, as if it had not been made: a first claim is forgotten
    (its ref deleted), a takeover released; a renewal stands (the task was held before)."""
    if claimed.action == "renewed" or (claimed.previous is None and claims.forget(project, claimed.claim)):
        return
    try:
        claims.release(project, claimed.claim.task, me)
    except SteleError:
        pass  # someone else's record is on top by now: nothing of ours is left to undo


def log_claim(project: Project, me: Identity, claimed: Claimed) -> None:
    c = claimed.claim
    _log(project, me, "claim", claims.claimed_line(claimed), c.task, token=c.token, until=clock.iso(c.until))


def release_task(project: Project, task_id: str, me: Identity, *, force: bool = False,
                 remote: str | None = None, now: dt.datetime | None = None) -> Claim:
    fact = work_fact(load(project), task_id)
    released = claims.release(project, fact.id, me, force=force, now=now, remote=remote)
    who = "" if me.owns(released) else f" (held by {released.holder.agent}; forced)"
    _log(project, me, "release", f"released {fact.id}{who}", fact.id, token=released.token)
    return released


@dataclass
class Closed:
    fact: Fact
    released: Claim | None = None
    retired: list[Fact] = field(default_factory=list)


def done(project: Project, task_id: str, me: Identity, *, note: str | None = None, force: bool = False,
         now: dt.datetime | None = None) -> Closed:
    """Mark a task done, release its claim, and retire the facts that `expires-on` it."""
    from ..record import edit

    record = load(project)  # closing the task changes no edge into it
    closed = _close(project, record, task_id, "done", me, note, force, now)
    for edge in record.graph.inc.get(closed.fact.id, ()):
        fact = record.facts.get(edge.src)
        if edge.rel == "expires-on" and fact and "retired" in KINDS[fact.kind].statuses \
                and fact.status not in ENDED_STATUSES:
            closed.retired.append(edit.retire(project, fact.id, f"{closed.fact.id} is done"))
    return closed


def cancel(project: Project, task_id: str, me: Identity, *, note: str | None = None, force: bool = False,
           now: dt.datetime | None = None) -> Closed:
    """Mark a task cancelled and release its claim (facts that `expires-on` it are left for a person)."""
    return _close(project, load(project), task_id, "cancelled", me, note, force, now)


def _close(project: Project, record: Record, task_id: str, status: str, me: Identity, note: str | None,
           force: bool, now: dt.datetime | None) -> Closed:
    from ..record import edit

    now = now or clock.utcnow()
    fact = work_fact(record, task_id)
    if fact.status in CLOSED_STATUSES:
        raise SteleError(f"{fact.id} is already {fact.status}; nothing changed")
    current = claims.known_claims(project).get(fact.id)
    if current is not None and current.live(now) and not me.owns(current) and not force:
        raise SteleError(f"{current.describe()}: ask them, or pass --force to close it anyway")
    released = None
    local = claims.read(project, fact.id)
    if local is not None and local.state == "held":  # release before writing: a refusal changes nothing
        released = claims.release(project, fact.id, me, force=not me.owns(local), now=now)
    note = " ".join((note or "").split())
    body = None
    if note:
        label = "Done" if status == "done" else "Cancelled"
        body = fact.body.rstrip("\n") + f"\n\n{label} {today().isoformat()}: {note}\n"
    written = edit.edit(project, fact.id, edit.Changes(status=status, body=body))
    _log(project, me, "outcome", f"{fact.id} {status}" + (f": {note}" if note else ""), fact.id)
    return Closed(written.fact, released)


def _log(project: Project, me: Identity, type_: str, text: str, task: str, **extra: Any) -> None:
    """Claims and outcomes go to the session log when there is a session to log them to (stamped, like
    every entry, with the session's agent and thread)."""
    if me.session:
        from ..session import sessions

        sessions.log(project, me.session, type_, text, task=task, extra=extra)


@dataclass
class Resume:
    """`stele task resume`: everything needed to pick a task back up."""

    row: TaskRow
    blocks: list[Fact]  # the tasks and containers it blocks
    blockers: list[Fact]  # the tasks and containers that block it, open or closed
    linked: list[tuple[str, Fact]]  # every other neighbour: ("-> rel" declared by the task / "<- rel", fact)
    history: list[wal.Entry]
    history_total: int

    def as_dict(self, now: dt.datetime) -> dict[str, Any]:
        brief = lambda f: {"id": f.id, "kind": f.kind, "status": f.status, "title": f.title}  # noqa: E731
        return {**self.row.as_dict(now), "body": self.row.fact.body,
                "related": {"blocks": [brief(f) for f in self.blocks],
                            "blockers": [brief(f) for f in self.blockers],
                            "linked": [{"rel": rel, **brief(f)} for rel, f in self.linked]},
                "history": [e.as_dict() for e in self.history], "history_total": self.history_total}


def resume(project: Project, me: Identity, task_id: str | None = None, *, now: dt.datetime | None = None,
           history_limit: int = HISTORY_LIMIT) -> Resume:
    """The task (default: the one `me` holds, else the last one `me`'s session worked on), its claim,
    its neighbours, and its session history."""
    from ..session import wal
    from ..session.sessions import order_key

    now = now or clock.utcnow()
    record = load(project).usable()
    # by time, then by the millisecond the line was made; a stable sort keeps one millisecond's lines
    # in their log order (an id's random tail would shuffle them: a note across its claim line)
    entries = sorted(wal.read_all(project), key=lambda e: (e.ts, order_key(e)))
    known = claims.known_claims(project)
    fact = work_fact(record, task_id or _current_task(known, me, entries, now))
    row = _row(record, fact, known)
    work = lambda f: f.kind in WORK_KINDS  # noqa: E731
    linked = [(f"-> {e.rel}" if e.src == fact.id else f"<- {e.rel}", record.facts[other])
              for e, other in record.graph.neighbors(fact.id)
              if other in record.facts and not (e.rel == "blocks" and work(record.facts[other]))]
    history = task_history(entries, fact.id)
    shown = history[max(0, len(history) - history_limit):]
    return Resume(row, [f for f in dependents(record, fact.id) if work(f)],
                  [f for f in blockers(record, fact.id) if work(f)], linked, shown, len(history))


def task_history(entries: list, task: str) -> list:
    """Entries about `task`: those tagged with it, and those logged without a task in a session while
    that session held its claim (between its `claim` and `release` lines): an agent working on a
    claimed task does not tag every note `--task`."""
    holding: dict[str, str] = {}
    out = []
    for e in entries:
        if e.type == "claim" and e.task:
            holding[e.session] = e.task
        elif e.type == "release" and e.task and holding.get(e.session) == e.task:
            del holding[e.session]
        if e.task == task or (not e.task and holding.get(e.session) == task):
            out.append(e)
    return out


def _current_task(known: dict[str, Claim], me: Identity, entries: list[wal.Entry], now: dt.datetime) -> str:
    held = [c for c in known.values() if c.state == "held" and me.matches(c)]
    if held:
        return max(held, key=lambda c: (c.live(now), c.since)).task
    for entry in reversed(entries):
        if me.session and entry.session == me.session and entry.task:
            return entry.task
    raise SteleError(f"nothing to resume: {me.describe()} holds no claim and its session names no task; "
                     "pass a task id (`stele task list`)")
