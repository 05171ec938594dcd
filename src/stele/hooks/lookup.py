"""The committed facts the session-start and edit hooks need: standing rules, open tasks, and the
facts anchored to a file.

Only current, unexpired facts that are not overdue for review are pushed at an agent (DESIGN.md
section 2); `stele show` and search still find the rest. Ordering is fixed (priority, then weight,
then id) so the same record always gives the same text.
"""
from __future__ import annotations

from typing import Iterable

from ..anchors import covers
from ..kinds import KINDS, PRIORITIES
from ..lifecycle import inactive_reason, today
from ..model import Fact
from ..record import Record

OPEN_TASK_STATUSES = ("in-progress", "blocked", "open")
_PRIORITY_RANK = {p: i for i, p in enumerate(PRIORITIES)}


def pushable(fact: Fact, on=None) -> bool:
    return inactive_reason(fact.status, fact.expires, fact.review_after, on or today()) is None


def _order(fact: Fact) -> tuple:
    return (_PRIORITY_RANK.get(fact.priority, 2), -KINDS[fact.kind].weight if fact.kind in KINDS else 0, fact.id)


def always(record: Record) -> list[Fact]:
    """Current facts with `delivery: always` (drafts and proposals are not standing rules)."""
    on = today()
    return sorted((f for f in record.facts.values()
                   if f.delivery == "always" and f.status == "current" and pushable(f, on)), key=_order)


def open_tasks(record: Record) -> list[Fact]:
    """Tasks not done or cancelled: in progress first, then blocked, then open."""
    tasks = [f for f in record.facts.values() if f.kind == "task" and f.status in OPEN_TASK_STATUSES]
    return sorted(tasks, key=lambda f: (OPEN_TASK_STATUSES.index(f.status), _order(f)))


def anchored(record: Record, paths: Iterable[str]) -> list[Fact]:
    """Pushable facts with an anchor covering any of `paths` (repo-relative): risks first, then by
    priority and weight. Tasks are left out: they are work, not knowledge about the file."""
    paths = list(paths)
    on = today()
    hits = [f for f in record.facts.values()
            if f.kind != "task" and f.anchors and pushable(f, on)
            and any(covers(a, p) for a in f.anchors for p in paths)]
    return sorted(hits, key=lambda f: (f.kind != "risk", _order(f)))
