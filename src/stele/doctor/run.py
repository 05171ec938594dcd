"""`stele doctor`'s one entry point: every check over the record, sorted errors first.

The checks run with the cyclic garbage collector paused: a large record is a million small objects
(facts, parsed frontmatter, word sets) that live until the report is made, so every collection walks
them all and frees nothing (on the 10,000-fact bench, 1.3 s of 10 s of CPU). Reference counting still
frees everything else, and the collector is back on when `run` returns.
"""
from __future__ import annotations

import datetime as dt
import gc
from collections.abc import Iterator
from contextlib import contextmanager

from ..project import Project
from .findings import CHECKS, Finding, Report


def run(project: Project, *, base: str | None = None, gate: bool = False,
        today: dt.date | None = None, check_code: bool = False) -> Report:
    """Every check; `base` adds the checks against a base revision, `gate` the co-change gate,
    `check_code` the facts' `check:` entries over the code (over the change since `base`, if given)."""
    from ..delivery import today as today_
    from ..errors import SteleError, UsageError

    if gate and not base:
        raise UsageError("--gate needs --base REF: the change to gate is the one since REF")
    if not project.memory_dir.is_dir():
        raise SteleError(f"no {project.rel(project.memory_dir)}/ here: run `stele init` first (or set "
                         "memory_dir in .stele/config.yaml)")
    on = today or today_()
    with _collector_paused():
        return _run(project, base, gate, on, check_code)


@contextmanager
def _collector_paused() -> Iterator[None]:
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _run(project: Project, base: str | None, gate: bool, on: dt.date, check_code: bool = False) -> Report:
    from ..anchors.resolve import WorkTree
    from ..record.load import load
    from . import anchorcheck, basecheck, checkcode, checks, driftcheck, exportcheck, storecheck

    record = load(project)
    findings = [Finding(p.check, p.path, p.line, p.message) for p in record.problems]
    findings += checks.run_all(record, on)
    findings += anchorcheck.check(record, WorkTree(project.root))
    findings += driftcheck.check(record)
    findings += storecheck.check(project)
    findings += exportcheck.check(project, record, on)
    if base:
        findings += basecheck.check(record, base, gate)
    if check_code:
        findings += checkcode.check(record, base)
    order = list(CHECKS)
    findings.sort(key=lambda f: (f.severity != "error", f.path, f.line, order.index(f.check), f.message))
    titles = {f.fact: record.facts[f.fact].title for f in findings if f.check == "code-check" and f.fact}
    return Report(findings, titles)
