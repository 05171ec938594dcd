"""`stele export rules` as one library call: load the record, plan, write (or only check), report."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..project import Project
from .plan import FileState, Plan, apply, choose, exported, plan


@dataclass
class Result:
    harnesses: list[str]
    files: list[FileState] = field(default_factory=list)  # changed (or, with check, out of date)
    notes: list[str] = field(default_factory=list)
    checked: bool = False


def current_plan(project: Project, harnesses: list[str], *, writing: bool) -> Plan:
    """The plan for the record as it is; for writing, a record that loads without errors (a fact file
    that does not parse would otherwise take its rules out until it is fixed)."""
    from ..delivery import today
    from ..record.load import load

    record = load(project)
    if writing:
        record.require_valid()
    return plan(project, list(record.facts.values()), harnesses, today())


def export_rules(project: Project, harnesses: list[str] | None = None, *, sync: bool = False,
                 check: bool = False, stage: bool = False) -> Result:
    """Bring the rule files of `harnesses` (all four when None; with `sync`, those already exported
    here, none when there are none) in line with the record. `check` writes nothing and returns what
    is out of date; `stage` also `git add`s what changed (the pre-commit hook)."""
    chosen = exported(project) if sync else choose(harnesses)
    if not chosen:
        return Result([], checked=check)
    the_plan = current_plan(project, chosen, writing=not check)
    files = the_plan.stale() if check else apply(project, the_plan, stage=stage)
    return Result(chosen, files, the_plan.notes, check)
