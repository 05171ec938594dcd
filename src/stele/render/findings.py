"""Doctor findings as plain text, as GitHub workflow commands, and as a Markdown job summary.

GitHub shows at most 10 error and 10 warning annotations per step, so only the first ten of each become
annotations; the summary lists every finding. Workflow-command escaping follows actions/toolkit:
`%`, CR and LF in the message; additionally `:` and `,` in properties.
"""
from __future__ import annotations

from collections.abc import Iterable

from ..doctor.findings import Finding, Report
from ..textcut import counted

ANNOTATIONS_PER_STEP = 10
SUMMARY_MAX_BYTES = 1024 * 1024 - 4096  # GitHub rejects a step summary over 1 MiB; keep a margin


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(f: Finding) -> str:
    props = f"file={escape_property(f.path)},line={f.line},title={escape_property(f'stele {f.check}')}"
    return f"::{f.severity} {props}::{escape_data(f.message)}"


def text(report: Report) -> str:
    lines = [str(f) for f in report.findings]
    lines.append(_tally(report))
    return "\n".join(lines) + "\n"


def _tally(report: Report) -> str:
    e, w = len(report.errors), len(report.warnings)
    if not e and not w:
        return "stele doctor: no problems"
    return f"stele doctor: {counted(e, 'error')}, {counted(w, 'warning')}"


def github(report: Report) -> str:
    """Annotations for the first ten errors and warnings, then a notice pointing at the summary."""
    out = []
    for group in (report.errors, report.warnings):
        out += [annotation(f) for f in group[:ANNOTATIONS_PER_STEP]]
    hidden = sum(max(0, len(group) - ANNOTATIONS_PER_STEP) for group in (report.errors, report.warnings))
    if hidden:
        out.append(f"::notice title=stele doctor::{hidden} more {'finding is' if hidden == 1 else 'findings are'} "
                   "listed in the job summary")
    out.append(_tally(report))
    return "\n".join(out) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def summary(report: Report, title: str = "stele doctor") -> str:
    """A GitHub-flavoured Markdown summary of every finding, under the 1 MiB step-summary limit."""
    head = [f"## {title}", "", _tally(report) + ".", ""]
    if not report.findings:
        return "\n".join(head)
    rows = ["| | check | where | message |", "|---|---|---|---|"]
    icons = {"error": "❌", "warning": "⚠️", "note": "💬"}
    rows += [f"| {icons.get(f.severity, '⚠️')} | `{f.check}` | `{_cell(f.path)}:{f.line}` | "
             f"{_cell(f.message)} |" for f in report.findings]
    return _fit(head, rows)


def _fit(head: list[str], rows: Iterable[str]) -> str:
    out, size = list(head), sum(len(x.encode()) + 1 for x in head)
    rows = list(rows)
    for i, row in enumerate(rows):
        size += len(row.encode()) + 1
        if size > SUMMARY_MAX_BYTES:
            out += ["", f"_{counted(len(rows) - i, 'more row')} cut to stay under GitHub's 1 MiB summary limit; "
                        "run `stele doctor --format json` for all of them._"]
            break
        out.append(row)
    return "\n".join(out) + "\n"
