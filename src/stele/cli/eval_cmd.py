"""`stele eval`: score recall on this repository's record (`CASES.yaml`), write a starter case file
(`--init`), or measure the recall gap of past sessions (`--recall-gap`). Thin over `retrieve.evaluate`
and `retrieve.recallgap`."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from ..render.jsonout import emit_json
from .app import FormatOpt, JsonOpt, app, project, wants_json

Opt = typer.Option


@app.command("eval")
def eval_(
    cases: Annotated[Optional[Path], typer.Argument(help="The case file (docs/eval.md), e.g. "
                                                    "docs/memory/eval.yaml.")] = None,
    min_pct: Annotated[Optional[float], Opt("--min", help="Exit 1 when fewer than this percent of the "
                                            "cases pass (a CI gate).")] = None,
    only: Annotated[Optional[str], Opt("--only", help="Only the cases whose id or type starts with "
                                       "this.")] = None,
    verbose: Annotated[bool, Opt("--verbose", "-v", help="List passing cases too.")] = False,
    init: Annotated[bool, Opt("--init", help="Write docs/memory/eval.yaml: starter cases drawn from the "
                              "record.")] = False,
    force: Annotated[bool, Opt("--force", help="With --init: replace an existing starter file.")] = False,
    recall_gap: Annotated[bool, Opt("--recall-gap", help="From the session log: edits to anchored code "
                                    "whose facts never reached the agent.")] = False,
    since: Annotated[Optional[str], Opt("--since", help="With --recall-gap: sessions active since this "
                                        "date (YYYY-MM-DD) or git revision.")] = None,
    fmt: FormatOpt = "text",
    json_: JsonOpt = False,
) -> int:
    """Measure what the memory does for this project: score recall against a case file, or the
    recall gap of past sessions."""
    from ..errors import UsageError

    as_json = wants_json(fmt, json_)
    modes = sum([init, recall_gap, cases is not None])
    if modes != 1:
        raise UsageError("give a case file, --init, or --recall-gap (one of them): "
                         "e.g. stele eval docs/memory/eval.yaml")
    if since is not None and not recall_gap:
        raise UsageError("--since only applies to --recall-gap")
    if force and not init:
        raise UsageError("--force only applies to --init")
    if min_pct is not None and not 0 <= min_pct <= 100:
        raise UsageError(f"--min {min_pct:g} is not a percentage: give 0 to 100")
    p = project()
    if init:
        from ..retrieve.evaluate import load_cases, write_starter

        path = write_starter(p, force)
        count = len(load_cases(path).cases)
        if as_json:
            emit_json({"path": p.rel(path), "cases": count})
        else:
            print(f"wrote {p.rel(path)} ({count} cases); run `stele eval {p.rel(path)}` and add your own")
        return 0
    if recall_gap:
        from ..render.eval_text import gap_text
        from ..retrieve.recallgap import recall_gap as measure

        gap = measure(p, since)
        if as_json:
            emit_json(gap.as_dict())
        else:
            sys.stdout.write(gap_text(gap))
        return 0
    from ..retrieve.evaluate import load_cases, run

    assert cases is not None
    loaded = load_cases(cases if cases.is_absolute() else Path.cwd() / cases, p.root)
    report = run(p, loaded, only)
    if as_json:
        emit_json(report.as_dict())
    else:
        from ..render.eval_text import report_text

        name = cases.parent.name if cases.name == "queries.yaml" else cases.name  # a set's folder names it
        sys.stdout.write(report_text(report, name, verbose))
    if min_pct is not None and report.percent < min_pct:
        print(f"stele eval: {report.percent:.0f}% passed, under --min {min_pct:g}", file=sys.stderr)
        return 1
    return 0
