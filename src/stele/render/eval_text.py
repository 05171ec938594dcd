"""`stele eval` as text: every failed case with its reasons, the pass rate per type, one summary line.

Plain text (a CI log reads it); the last line is the summary, the same shape as the maintainers'
runner prints, so a log can be compared with theirs line for line.
"""
from __future__ import annotations

from ..retrieve.evaluate import Report
from ..retrieve.recallgap import Gap


def report_text(report: Report, name: str, verbose: bool = False) -> str:
    lines = []
    for r in report.cases:
        if verbose or not r.ok:
            lines.append(f"{'PASS' if r.ok else 'FAIL'} {r.case.id:<14} {'; '.join(r.fails)}".rstrip())
            lines += [f"     why: {w}" for w in r.why]
    lines.append("")
    for kind, counts in report.by_type().items():
        lines.append(f"  {kind:<11} {counts['passed']:>3}/{counts['total']}")
    lines.append(f"eval {name}: passed {report.passed}/{len(report.cases)} ({report.percent:.0f}%), "
                 f"mean window {report.mean_window:.1f}, {report.elapsed_ms} ms")
    return "\n".join(lines) + "\n"


def gap_text(gap: Gap) -> str:
    lines = [f"- {m.session}: edited {m.path} without being told {', '.join(m.facts)}" for m in gap.missed]
    since = f" since {gap.since}" if gap.since else ""
    lines.append(f"recall gap{since}: {len(gap.missed)} of {gap.anchored_edits} edits to anchored code "
                 f"({100 * gap.gap:.0f}%) never saw their facts; {gap.edits} edits in {gap.sessions} sessions")
    return "\n".join(lines) + "\n"
