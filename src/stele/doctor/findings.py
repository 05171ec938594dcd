"""What `stele doctor` reports: each check's name and severity, a finding, and the report.

A finding names a file and a line, so CI annotations and a person's editor can jump to it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

# check name -> severity; the order is the order of the docs
CHECKS: dict[str, str] = {
    "schema": "error",
    "duplicate-id": "error",
    "dangling-link": "error",
    "supersession-cycle": "error",
    "half-superseded": "error",
    "broken-anchor": "error",
    "always-budget": "error",
    "secret": "error",
    "hidden-character": "error",
    "escape-sequence": "error",
    "dangerous-content": "error",
    "contradiction": "error",
    "knowledge-edited": "error",
    "unreviewed-knowledge": "error",
    "co-change": "error",
    "store-config": "error",
    "stale-export": "error",
    "code-check": "error",
    "expired": "warning",
    "review-overdue": "warning",
    "needs-review": "warning",
    "unverified": "warning",
    "oversized": "warning",
    "near-duplicate": "warning",
    "instruction-like": "warning",
    "long-line": "warning",
    "interrupted-write": "warning",
    "word-anchor": "warning",
    "drift": "warning",
    "embedding-model": "warning",
    "bad-check": "warning",
    "store": "warning",
    "drafts": "note",
}

# check name -> what it finds, in one line: the rule descriptions of `--format sarif` (docs/doctor.md
# has the full table, with what to do)
SUMMARIES: dict[str, str] = {
    "schema": "A fact file's frontmatter is invalid, or a file under the memory folder is not a fact.",
    "duplicate-id": "Two fact files use one id.",
    "dangling-link": "A link names an id no fact has.",
    "supersession-cycle": "Supersedes links form a cycle.",
    "half-superseded": "A live fact supersedes one that is still live: a supersession cut short.",
    "broken-anchor": "An anchor of a live fact no longer resolves to a file, folder, glob or symbol.",
    "always-budget": "A delivery: always record does not fit the snapshot budget.",
    "secret": "Committed memory holds a credential.",
    "hidden-character": "A file holds characters a reviewer cannot see and an agent reads.",
    "escape-sequence": "A file holds a terminal escape sequence.",
    "dangerous-content": "Memory holds download-and-run, an exfiltrating link, HTML or script, encoded text or homoglyphs.",
    "contradiction": "Two current facts are linked by contradicts.",
    "knowledge-edited": "A current knowledge document was edited in place instead of superseded.",
    "unreviewed-knowledge": "A reviewed or current document has no review of its present content.",
    "co-change": "Code anchored by a risk or constraint changed and the fact was not kept up.",
    "store-config": "The team session store's configuration is invalid.",
    "stale-export": "A rule file made by `stele export rules` is out of date with the record.",
    "code-check": "With --check-code: code anchored by a fact breaks its check (forbid, require, ast or command).",
    "expired": "A fact's expires date has passed.",
    "review-overdue": "A fact's review_after date has passed.",
    "needs-review": "A fact is marked for review (an anchor that could not be repaired).",
    "unverified": "A fact has not been verified for longer than doctor.unverified_days.",
    "oversized": "A record is too large for a snapshot to carry whole.",
    "near-duplicate": "Two live facts of one kind repeat each other.",
    "instruction-like": "Memory text is addressed to the agent rather than about the project.",
    "long-line": "A line is longer than doctor.long_line characters.",
    "interrupted-write": "A multi-file change was interrupted, or a killed writer left a temporary file.",
    "word-anchor": "A symbol anchor resolves only as a word in a file Stele has no definition rule for.",
    "drift": "The code a live fact is anchored to changed in commits since the fact was verified.",
    "embedding-model": "The configured embedding model cannot be loaded: recall is full-text only.",
    "bad-check": "A fact's check: is malformed or could not run (bad pattern, out of time, the checks extra missing).",
    "store": "The team session store is unreachable or holds damaged objects.",
    "drafts": "Drafts (an import's ADRs without a status, documents) wait for review; a note, never a failure.",
}


@dataclass(frozen=True)
class Finding:
    check: str
    path: str
    line: int
    message: str
    fact: str | None = None
    level: str | None = None  # overrides the check's severity (a code check: its fact's `enforce`)

    @property
    def severity(self) -> str:
        return self.level or CHECKS[self.check]

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.severity}: {self.message} [{self.check}]"

    def as_dict(self) -> dict:
        # by hand, not dataclasses.asdict (its deep copy of five plain fields costs 10,000 findings
        # a quarter of a second)
        return {"check": self.check, "path": self.path, "line": self.line, "message": self.message,
                "fact": self.fact, "level": self.level, "severity": self.severity}


@dataclass
class Report:
    findings: list[Finding] = field(default_factory=list)
    titles: dict[str, str] = field(default_factory=dict)  # fact id -> title, for the facts a code check cites

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
