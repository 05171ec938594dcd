"""Which facts become rules, and how they are grouped into files.

A fact is exported when it is a rule to respect where its code is changed: a current decision,
architecture, instruction, constraint, goal, risk, lesson or priority (the kinds of category weight 2
and 3 that are context records) that the delivery rules let through today (`delivery.withheld`:
not expired, retired, superseded, overdue for review or `delivery: manual`), with at least one
anchor. Notes, gaps, FYIs, opportunities, components and diagrams stay with recall: a file a harness
loads unasked should hold what a change must respect, not the whole map. A fact `stele doctor` flags
as steering an agent (`FLAG_CHECKS`) is never exported: a rule file is committed and loaded as the
project's own instruction, so it is left out and named instead.

Facts are grouped by their set of anchored paths (a symbol anchor counts as its file): the harnesses
load a file when one of its paths matches, so facts with the same paths are loaded together anyway,
and one file per place in the code keeps the folders small where one file per fact would not (the
Harbor demo: 16 exported facts, 14 files). A fact whose anchors change moves to another file.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from ..anchors.paths import normalize, split
from ..delivery import anchored_order, withheld
from ..kinds import KINDS, NOT_CONTEXT_RECORDS
from ..neutralize import suspects
from ..record.model import Fact

RULE_KINDS = frozenset(k.name for k in KINDS.values() if k.weight >= 2 and k.name not in NOT_CONTEXT_RECORDS)
# what `stele doctor` reports as steering an agent: such a fact is never compiled into a rule file
FLAG_CHECKS = ("dangerous-content", "instruction-like", "hidden-character", "escape-sequence")


@dataclass
class Group:
    """Facts anchored to exactly these paths (sorted, unique), in the order anchored facts are listed."""
    paths: tuple[str, ...]
    facts: list[Fact] = field(default_factory=list)


@dataclass(frozen=True)
class Left:
    """A fact that qualified but was not exported, and why (said by the command and in the report)."""
    fact: str
    why: str


def anchor_paths(fact: Fact) -> tuple[str, ...]:
    """The paths and globs of a fact's anchors, a symbol anchor as its file, sorted and unique."""
    found = {normalize(split(a)[0]) for a in fact.anchors}
    return tuple(sorted(p for p in found if p not in ("", "/", ".")))


def qualifies(fact: Fact, on: dt.date) -> bool:
    return (fact.kind in RULE_KINDS and fact.status == "current" and withheld(fact, on) is None
            and bool(anchor_paths(fact)))


def flag(fact: Fact) -> str | None:
    """The first doctor check that flags the fact's text as steering an agent, or None."""
    for text in (fact.title, fact.body, fact.summary or ""):
        found = [s.check for s in suspects(text, kind=fact.kind) if s.check in FLAG_CHECKS]
        if found:
            return found[0]
    return None


def groups(facts: list[Fact], on: dt.date) -> tuple[list[Group], list[Left]]:
    """The exported facts grouped by anchored paths (groups sorted by paths), and the facts left out."""
    by_paths: dict[tuple[str, ...], Group] = {}
    left = []
    for fact in sorted(facts, key=anchored_order):
        if not qualifies(fact, on):
            continue
        check = flag(fact)
        if check:
            left.append(Left(fact.id, f"flagged by `stele doctor` ({check}): never compiled into a rule file"))
            continue
        paths = anchor_paths(fact)
        by_paths.setdefault(paths, Group(paths)).facts.append(fact)
    return [by_paths[k] for k in sorted(by_paths)], left
