"""`stele doctor --fix`: the safe repairs, planned first and shown as a diff, then written.

Safe means certain: an anchor follows a git rename, or a Python symbol is re-found by its name (the
only definition with that name, in the same file or its renamed file). Nothing else is guessed. A fact
is never deleted: an anchor that cannot be repaired stays as written and the fact is marked for review
(`review_after` set to today), so it surfaces in `doctor` and in the next review.
"""
from __future__ import annotations

import datetime as dt
import difflib
from dataclasses import dataclass, field

from ..anchors.resolve import WorkTree
from ..project import Project
from ..record.load import load
from ..record.model import Fact
from .anchorcheck import broken_anchors


@dataclass
class Repair:
    fact: Fact
    before: str
    after: str
    notes: list[str] = field(default_factory=list)

    def diff(self) -> str:
        return "".join(difflib.unified_diff(self.before.splitlines(keepends=True),
                                            self.after.splitlines(keepends=True),
                                            f"a/{self.fact.path}", f"b/{self.fact.path}"))


def plan(project: Project, today: dt.date) -> list[Repair]:
    record = load(project)
    by_fact: dict[str, list] = {}
    for fact, i, broken in broken_anchors(record, WorkTree(project.root)):
        by_fact.setdefault(fact.id, []).append((fact, i, broken))
    repairs = []
    for items in by_fact.values():
        fact = items[0][0]
        before = fact.render()
        anchors, notes = list(fact.anchors), []
        unrepaired = False
        for _, i, broken in items:
            if broken.repair:
                anchors[i] = broken.repair
                notes.append(f"{fact.id}: {broken.anchor} -> {broken.repair} ({broken.why})")
            else:
                unrepaired = True
                notes.append(f"{fact.id}: {broken.anchor} cannot be repaired ({broken.why}); "
                             "marked for review")
        fact.anchors = list(dict.fromkeys(anchors))
        if unrepaired and (fact.review_after is None or fact.review_after > today):
            fact.review_after = today
        after = fact.render()
        if after != before:
            repairs.append(Repair(fact, before, after, notes))
    return repairs


def apply(project: Project, repairs: list[Repair]) -> None:
    from ..record.write import save

    for repair in repairs:
        save(project, repair.fact)
