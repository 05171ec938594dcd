"""`stele eval`: score recall on this repository's record (`CASES.yaml`), write a starter case file
(`--init`), measure the recall gap of past sessions (`--recall-gap`), or what the memory changes in what
an agent does (`--agent`, in `cli/eval_agent.py`). Thin over `retrieve.evaluate`, `retrieve.recallgap`
and `agenteval`."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ..render.jsonout import emit_json
from .app import Format, FormatOpt, JsonOpt, app, project, wants_json

Opt = typer.Option


@app.command("eval")
def eval_(
    cases: Annotated[Path | None, typer.Argument(help="The case file (docs/eval.md), e.g. "
                                                    "docs/memory/eval.yaml.")] = None,
    min_pct: Annotated[float | None, Opt("--min", help="Exit 1 when fewer than this percent of the "
                                            "cases pass (a CI gate).")] = None,
    only: Annotated[str | None, Opt("--only", help="Only the cases whose id or type starts with "
                                       "this.")] = None,
    verbose: Annotated[bool, Opt("--verbose", "-v", help="List passing cases too.")] = False,
    init: Annotated[bool, Opt("--init", help="Write docs/memory/eval.yaml: starter cases drawn from the "
                              "record.")] = False,
    force: Annotated[bool, Opt("--force", help="With --init: replace an existing starter file.")] = False,
    recall_gap: Annotated[bool, Opt("--recall-gap", help="From the session log: edits to anchored code "
                                    "whose facts never reached the agent.")] = False,
    since: Annotated[str | None, Opt("--since", help="With --recall-gap: sessions active since this "
                                        "date (YYYY-MM-DD) or git revision.")] = None,
    agent: Annotated[bool, Opt("--agent", help="Run a task suite (the argument) in a real harness, with and "
                               "without Stele's hooks, and compare what the agent did (docs/eval.md).")] = False,
    harness: Annotated[str | None, Opt("--harness", help="With --agent: claude, codex, gemini or copilot.")] = None,
    runs: Annotated[int, Opt("--runs", help="With --agent: runs per task and arm.")] = 3,
    arms: Annotated[str, Opt("--arms", help="With --agent: with, without, or both (with,without).")] = "with,without",
    harness_bin: Annotated[str | None, Opt("--harness-bin", help="With --agent: the harness's executable "
                                           "(default: found on PATH).")] = None,
    harness_arg: Annotated[list[str] | None, Opt("--harness-arg", help="With --agent: one more flag for the "
                                                 "harness (repeat), e.g. --harness-arg=--model=X.")] = None,
    max_tokens: Annotated[int | None, Opt("--max-tokens", help="With --agent: stop the suite once this many "
                                          "tokens (in + out) are spent.")] = None,
    max_runs: Annotated[int | None, Opt("--max-runs", help="With --agent: stop the suite after this many "
                                        "harness runs.")] = None,
    timeout: Annotated[int | None, Opt("--timeout", help="With --agent: seconds a task's run may take "
                                       "(over the suite's `timeout:`).")] = None,
    max_tasks: Annotated[int | None, Opt("--max-tasks", help="With --agent --init: at most this many tasks "
                                         "(the control task included).")] = None,
    fmt: FormatOpt = Format.text,
    json_: JsonOpt = False,
) -> int:
    """Measure what the memory does for this project: score recall against a case file, or the
    recall gap of past sessions."""
    from ..errors import UsageError, say

    as_json = wants_json(fmt, json_)
    if agent:
        return _agent(cases, init, force, harness, runs, arms, harness_bin, harness_arg or [], max_tokens,
                      max_runs, timeout, max_tasks, as_json, recall_gap or since is not None or min_pct is not None
                      or only is not None)
    if harness is not None or max_tasks is not None:
        raise UsageError("--harness and --max-tasks go with --agent: `stele eval --agent SUITE --harness claude`")
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
        say(f"stele eval: {report.percent:.0f}% passed, under --min {min_pct:g}")
        return 1
    return 0


def _agent(suite: Path | None, init: bool, force: bool, harness: str | None, runs: int, arms: str,
           harness_bin: str | None, harness_args: list[str], max_tokens: int | None, max_runs: int | None,
           timeout: int | None, max_tasks: int | None, as_json: bool, other: bool) -> int:
    from ..errors import UsageError
    from . import eval_agent

    if other:
        raise UsageError("--recall-gap, --since, --min and --only do not go with --agent")
    if force and not init:
        raise UsageError("--force only applies to --init")
    if init:
        if suite is not None or harness is not None:
            raise UsageError("--agent --init drafts a suite from the record: give no suite file or harness")
        if max_tasks is not None and max_tasks < 1:
            raise UsageError(f"--max-tasks {max_tasks}: give at least 1 (the control task)")
        return eval_agent.init(project(), force, max_tasks, as_json)
    if suite is None or harness is None:
        raise UsageError("give a suite and a harness: stele eval --agent docs/memory/agent-eval.yaml --harness claude")
    if max_tasks is not None:
        raise UsageError("--max-tasks only applies to --agent --init")
    for flag, value in (("--max-tokens", max_tokens), ("--max-runs", max_runs), ("--timeout", timeout)):
        if value is not None and value < 1:
            raise UsageError(f"{flag} {value}: give a positive number")
    from ..agenteval.runner import Options

    opts = Options(harness, runs, tuple(a.strip() for a in arms.split(",") if a.strip()), harness_bin,
                   list(harness_args), max_tokens, max_runs, timeout)
    return eval_agent.run(project(), suite, opts, as_json)
