"""Exported rule files out of date with the record (`stale-export`).

Only for the harnesses this repository exports to (a generated file of theirs is here): a
repository that never ran `stele export rules` is never asked to. The question is the export's own
(`export.plan`), so doctor, `stele export rules --check` and the pre-commit sync cannot disagree.
"""
from __future__ import annotations

import datetime as dt

from ..export.plan import exported, plan
from ..project import Project
from ..record.load import Record
from .findings import Finding

WHAT = {"created": "missing", "updated": "differs from what the record gives",
        "removed": "no fact needs it any more"}


def check(project: Project, record: Record, on: dt.date) -> list[Finding]:
    harnesses = exported(project)
    if not harnesses:
        return []
    stale = plan(project, list(record.facts.values()), harnesses, on).stale()
    return [Finding("stale-export", f.rel, 1, f"{WHAT[f.action]}: the exported rules are out of date with the "
                    "record; run `stele export rules` (or `stele install --rules` to keep them in sync at "
                    "each commit)") for f in stale]
