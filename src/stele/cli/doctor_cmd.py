"""`stele doctor`: check the record (and, with --base, the change to it); `--fix` for safe repairs."""
from __future__ import annotations

import os
import sys
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from .. import atomic
from ..render import term
from ..render.jsonout import emit_json
from ..textcut import counted
from .app import JsonOpt, app, project

if TYPE_CHECKING:
    from ..doctor.findings import Report

Opt = typer.Option
GITHUB_ENV = "GITHUB_ACTIONS"
SUMMARY_ENV = "GITHUB_STEP_SUMMARY"


class DoctorFormat(str, Enum):
    auto = "auto"
    text = "text"
    json = "json"
    github = "github"
    sarif = "sarif"


@app.command()
def doctor(
    base: Annotated[str | None, Opt("--base", metavar="REF", help="Also check the change since REF "
                                       "(merge base): current knowledge must be superseded, not edited.")]
    = None,
    gate: Annotated[bool, Opt("--gate", help="With --base: fail when code anchored by a risk or constraint "
                              "changed and the fact was neither edited, re-verified nor acknowledged.")]
    = False,
    check_code: Annotated[bool, Opt("--check-code", help="Also run the facts' check: entries over the code: "
                                    "the lines added since --base REF, else every anchored file as it is.")]
    = False,
    strict: Annotated[bool, Opt("--strict", help="Warnings fail too (exit 1).")] = False,
    fix: Annotated[bool, Opt("--fix", help="Repair what is certain (renamed anchors), showing the diff "
                             "first.")] = False,
    dry_run: Annotated[bool, Opt("--dry-run", help="With --fix: show the diff, write nothing.")] = False,
    yes: Annotated[bool, Opt("--yes", "-y", help="With --fix: do not ask before writing.")] = False,
    fmt: Annotated[DoctorFormat, Opt("--format", help="auto is github under GitHub Actions, else text; "
                                     "sarif is SARIF 2.1.0 for code scanning.")]
    = DoctorFormat.auto,
    sarif_output: Annotated[Path | None, Opt("--sarif-output", metavar="PATH", help="Also write the "
                                             "findings to PATH as SARIF 2.1.0, whatever --format prints.")]
    = None,
    json_: JsonOpt = False,
) -> int:
    """Check the project memory: schema, ids, links, anchors, budgets, secrets, staleness."""
    from ..doctor.run import run as run_doctor
    from ..render import findings as out

    p = project()
    if fix:
        _fix(p, dry_run, yes)
        if dry_run:
            return 0
    report = run_doctor(p, base=base, gate=gate, check_code=check_code)
    if sarif_output is not None:
        _write_sarif(sarif_output, report)
    if json_ or fmt == DoctorFormat.json:
        emit_json(report.as_dict())
    elif fmt == DoctorFormat.sarif:
        from ..render.sarif import sarif

        term.write(sarif(report))
    elif fmt == DoctorFormat.github or (fmt == DoctorFormat.auto and os.environ.get(GITHUB_ENV) == "true"):
        term.write(out.github(report))
        summary_path = os.environ.get(SUMMARY_ENV)
        if summary_path:
            atomic.append(Path(summary_path), out.summary(report) + "\n")
    else:
        term.line(out.text(report).removesuffix("\n"))  # one print: 10,000 findings a line each cost 0.5 s
    return report.exit_code(strict)


def _write_sarif(path: Path, report: Report) -> None:
    from ..errors import SteleError
    from ..render.sarif import sarif

    try:
        atomic.write(path, sarif(report), durable=False)
    except OSError as e:
        why = f"{e.filename}: {e.strerror}" if e.filename and e.strerror else str(e)
        raise SteleError(f"--sarif-output {path}: cannot write it ({why}); "
                         "give a path in a folder you can write to") from e


def _fix(p, dry_run: bool, yes: bool) -> None:
    from ..delivery import today
    from ..doctor import fix

    repairs = fix.plan(p, today())
    if not repairs:
        term.note("stele doctor --fix: nothing to repair")
        return
    for repair in repairs:
        term.write(repair.diff())
        for note in repair.notes:
            term.note(note)
    if dry_run:
        return
    ask = not yes and sys.stdin.isatty()
    if ask and not typer.confirm("Write this change?" if len(repairs) == 1
                                else f"Write these {len(repairs)} changes?", default=True):
        term.note("nothing was written")
        return
    fix.apply(p, repairs)
    term.note(f"repaired {counted(len(repairs), 'fact file')}")
