"""`stele doctor --fix`: the safe repairs, planned first and shown as a diff, then written.

Safe means certain: an anchor follows a git rename, a Python symbol is re-found by its name (the
only definition with that name, in the same file or its renamed file), or the code is re-found by
its content (the one definition or file whose fingerprint is the one the fact recorded). Nothing
else is guessed, and the diff is the proposal: `--dry-run` shows it and writes nothing, and a person
at a terminal is asked before anything is written.

A fact is never deleted, retired or taken out of delivery by `--fix`. An anchor that cannot be
repaired stays as written and the fact is marked `needs_review` with the reason: doctor lists it,
recall and snapshots label it, and `stele verify` clears it. (Setting `review_after` to today, as
`--fix` once did, made the fact, and every risk reached through it, stop being injected the next
day: a side effect nobody asked for.)
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


def review_note(anchor: str, why: str, on: dt.date) -> str:
    return f"anchor {anchor} no longer resolves ({why}); `stele doctor --fix` could not repair it ({on})"


def plan(project: Project, today: dt.date) -> list[Repair]:
    from ..record.write import pinned

    record = load(project)
    by_fact: dict[str, list] = {}
    for fact, i, broken in broken_anchors(record, WorkTree(project.root)):
        by_fact.setdefault(fact.id, []).append((fact, i, broken))
    repairs = []
    for items in by_fact.values():
        fact = items[0][0]
        before = fact.render()
        anchors, notes, reasons = list(fact.anchors), [], []
        for _, i, broken in items:
            if broken.repair:
                anchors[i] = broken.repair
                if broken.anchor in fact.fingerprints:  # the same code: its fingerprint goes with it
                    fact.fingerprints.setdefault(broken.repair, fact.fingerprints[broken.anchor])
                notes.append(f"{fact.id}: {broken.anchor} -> {broken.repair} ({broken.why})")
            else:
                reasons.append((broken.anchor, broken.why))
                notes.append(f"{fact.id}: {broken.anchor} cannot be repaired ({broken.why}); marked as "
                             "needing review")
        fact.anchors = list(dict.fromkeys(anchors))
        marks = [f"anchor {a} no longer resolves" for a, _ in reasons]
        if reasons and not all(m in (fact.needs_review or "") for m in marks):
            fact.needs_review = "; ".join(review_note(a, why, today) for a, why in reasons)
        fact.fingerprints = pinned(project, fact, repin=False)  # as `save` will write them
        after = fact.render()
        if after != before:
            repairs.append(Repair(fact, before, after, notes))
    return repairs


def apply(project: Project, repairs: list[Repair]) -> None:
    from ..record.write import save

    for repair in repairs:
        save(project, repair.fact)
