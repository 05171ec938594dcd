"""`stele doctor`: every check of the committed record, as findings with a file and a line.

Errors make `doctor` exit 1; warnings exit 0 unless `--strict`. Each check has a stable name (the
`check` of a finding, the `--json` key, the docs' heading) so CI output can be filtered and tests can
assert that every check both fires and stays quiet. The checks live in small modules by what they
need: the record alone (`checks`), the working tree and git history (`anchorcheck`), a base revision
(`basecheck`).
"""
from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass, field

from ..project import Project

# check name -> severity; the order is the order of the docs
CHECKS: dict[str, str] = {
    "schema": "error",
    "duplicate-id": "error",
    "dangling-link": "error",
    "supersession-cycle": "error",
    "broken-anchor": "error",
    "always-budget": "error",
    "secret": "error",
    "contradiction": "error",
    "knowledge-edited": "error",
    "co-change": "error",
    "store-config": "error",
    "expired": "warning",
    "review-overdue": "warning",
    "unverified": "warning",
    "oversized": "warning",
    "near-duplicate": "warning",
    "store": "warning",
}


@dataclass(frozen=True)
class Finding:
    check: str
    path: str
    line: int
    message: str
    fact: str | None = None

    @property
    def severity(self) -> str:
        return CHECKS[self.check]

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.severity}: {self.message} [{self.check}]"

    def as_dict(self) -> dict:
        return {**asdict(self), "severity": self.severity}


@dataclass
class Report:
    findings: list[Finding] = field(default_factory=list)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "warning"]

    def exit_code(self, strict: bool) -> int:
        return 1 if self.errors or (strict and self.warnings) else 0

    def as_dict(self) -> dict:
        return {"version": 1, "errors": len(self.errors), "warnings": len(self.warnings),
                "findings": [f.as_dict() for f in self.findings]}


def run(project: Project, *, base: str | None = None, gate: bool = False,
        today: dt.date | None = None) -> Report:
    """Every check; `base` adds the checks against a base revision, `gate` the co-change gate."""
    from ..errors import SteleError, UsageError
    from ..lifecycle import today as today_
    from ..record import load
    from ..resolve import WorkTree
    from . import anchorcheck, basecheck, checks, storecheck

    if gate and not base:
        raise UsageError("--gate needs --base REF: the change to gate is the one since REF")
    if not project.memory_dir.is_dir():
        raise SteleError(f"no {project.rel(project.memory_dir)}/ here: run `stele init` first (or set "
                         "memory_dir in .stele/config.yaml)")
    on = today or today_()
    record = load(project)
    findings = [Finding(p.check, p.path, p.line, p.message) for p in record.problems]
    findings += checks.run_all(record, on)
    findings += anchorcheck.check(record, WorkTree(project.root))
    findings += storecheck.check(project)
    if base:
        findings += basecheck.check(record, base, gate)
    order = list(CHECKS)
    findings.sort(key=lambda f: (CHECKS[f.check] != "error", f.path, f.line, order.index(f.check), f.message))
    return Report(findings)
