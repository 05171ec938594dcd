"""What `stele doctor` reports: each check's name and severity, a finding, and the report.

A finding names a file and a line, so CI annotations and a person's editor can jump to it.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

# check name -> severity; the order is the order of the docs
CHECKS: dict[str, str] = {
    "schema": "error",
    "duplicate-id": "error",
    "dangling-link": "error",
    "supersession-cycle": "error",
    "broken-anchor": "error",
    "always-budget": "error",
    "secret": "error",
    "hidden-character": "error",
    "escape-sequence": "error",
    "contradiction": "error",
    "knowledge-edited": "error",
    "co-change": "error",
    "store-config": "error",
    "expired": "warning",
    "review-overdue": "warning",
    "unverified": "warning",
    "oversized": "warning",
    "near-duplicate": "warning",
    "instruction-like": "warning",
    "long-line": "warning",
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
