"""Named checks on one run, with the faults still open listed by name.

A turn of a real harness costs seconds, so each test runs one turn and checks everything it should
show. Every check that fails is reported together (one failing check never hides the next). A check
listed in `KNOWN` as an open fault of issue 14 is expected to fail: if it fails the test is an xfail
naming the fault, and if it passes the test fails and says to take it off the list, so the list is
always exactly the faults the real binaries still show.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pytest

# (harness, check) -> the fault, while it is open
KNOWN: dict[tuple[str, str], str] = {}  # none: every check passes in the four binaries


@dataclass
class Checks:
    harness: str
    run_description: str
    results: list[tuple[str, bool, str]] = field(default_factory=list)

    def check(self, name: str, ok: bool, detail: str = "") -> bool:
        self.results.append((name, bool(ok), detail))
        return bool(ok)

    def verdict(self) -> None:
        failed = [(n, d) for n, ok, d in self.results if not ok]
        unexpected = [(n, d) for n, d in failed if (self.harness, n) not in KNOWN]
        fixed = [n for n, ok, _ in self.results if ok and (self.harness, n) in KNOWN]
        lines = []
        if unexpected:
            lines += [f"{self.harness}: {n} failed: {d}" for n, d in unexpected]
        if fixed:
            lines += [f"{self.harness}: {n} passes now: take it off checks.KNOWN" for n in fixed]
        if lines:
            pytest.fail("\n".join(lines) + "\n\n" + self.run_description, pytrace=False)
        if failed:
            pytest.xfail("; ".join(f"{n}: {KNOWN[(self.harness, n)]}" for n, _ in failed))
