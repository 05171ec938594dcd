"""`stele context doctor`: the records that make snapshots fail, shrink or repeat themselves.

It is the snapshot-facing part of `stele doctor` and runs the same checks (`doctor.checks`): the
`always` budget (the real assembly, so it names every `always` record that does not fit exactly as a
claim would), expired and review-overdue records (silently no longer delivered), oversized records
(they crowd out everything else) and near-duplicates.
"""
from __future__ import annotations

import datetime as dt

from ..record.load import Record
from ..snapshot.model import Budgets
from .checks import always_budget, near_duplicates, oversized, staleness
from .findings import CHECKS, Report

STALENESS = ("expired", "review-overdue")  # not `unverified`: an old but true rule is still delivered


def check(record: Record, budgets: Budgets, on: dt.date, oversized_bytes: int, near: float) -> Report:
    findings = always_budget(record, budgets, on)
    findings += [f for f in staleness(record, on, unverified_days=1 << 30) if f.check in STALENESS]
    findings += oversized(record, oversized_bytes, budgets, on) + near_duplicates(record, near)
    order = list(CHECKS)
    findings.sort(key=lambda f: (f.severity != "error", order.index(f.check), f.fact or "", f.path))
    return Report(findings)
