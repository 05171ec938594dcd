"""`stele context doctor`: the records that make snapshots fail, shrink or repeat themselves.

It is the snapshot-facing part of `stele doctor` and shares its checks and findings (`doctor.checks`):
expired and review-overdue records (silently no longer delivered), oversized records (they crowd out
everything else) and near-duplicates. The budget check is its own: it runs the real assembly, so it
names every `always` record that does not fit exactly as a claim would, where `stele doctor`'s
`always-budget` estimates from the sum of sizes.
"""
from __future__ import annotations

import datetime as dt

from ..doctor import CHECKS, Finding, Report
from ..doctor.checks import near_duplicates, oversized, staleness
from ..record import Record
from .assemble import BudgetError, select_records
from .model import Budgets

STALENESS = ("expired", "review-overdue")  # not `unverified`: an old but true rule is still delivered


def check(record: Record, budgets: Budgets, on: dt.date, oversized_bytes: int, near: float) -> Report:
    findings = always_budget(record, budgets, on)
    findings += [f for f in staleness(record, on, unverified_days=1 << 30) if f.check in STALENESS]
    findings += oversized(record, oversized_bytes) + near_duplicates(record, near)
    order = list(CHECKS)
    findings.sort(key=lambda f: (f.severity != "error", order.index(f.check), f.fact or "", f.path))
    return Report(findings)


def always_budget(record: Record, budgets: Budgets, on: dt.date) -> list[Finding]:
    try:
        select_records(record.facts, [], [], budgets, on)
    except BudgetError as e:
        found = []
        for fid, why in e.misfits:
            fact = record.facts[fid]
            line = fact.doc.line_of("delivery") if fact.doc else 1
            message = (f"{fid} is an `always` record that does not fit the snapshot ({why}): every context "
                       "and claim fails until it is shortened or made `delivery: ranked`")
            found.append(Finding("always-budget", fact.path, line, message, fid))
        return found
    return []
