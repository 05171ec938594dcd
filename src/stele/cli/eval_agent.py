"""`stele eval --agent`: the CLI side. Reads the flags, calls `agenteval` (which runs the suite and
writes the results), prints the report. Writes nothing itself."""
from __future__ import annotations

import sys
from pathlib import Path

from ..render.jsonout import emit_json


def init(p, force: bool, max_tasks: int | None, as_json: bool) -> int:
    from ..agenteval.starter import write_starter
    from ..agenteval.suite import load
    from ..textcut import counted

    path = write_starter(p, force, max_tasks)
    count = len(load(path).tasks)
    if as_json:
        emit_json({"path": p.rel(path), "tasks": count})
    else:
        print(f"wrote {p.rel(path)} ({counted(count, 'task')}); run `stele eval --agent {p.rel(path)} --harness claude` "
              "(docs/eval.md says what it costs)")
    return 0


def run(p, suite_path: Path, opts, as_json: bool) -> int:
    from ..agenteval import results, runner
    from ..agenteval.suite import load
    from ..errors import say

    runner.preflight(opts)
    suite = load(suite_path if suite_path.is_absolute() else Path.cwd() / suite_path)
    total = len(suite.tasks) * len(opts.arms) * opts.runs

    def progress(r: runner.RunResult) -> None:
        fails = [c.name for c in r.checks if not c.ok]
        say(f"stele eval --agent: {r.task} {r.arm} #{r.run}: {'pass' if r.passed else 'FAIL ' + '; '.join(fails)}"
            f" ({r.seconds:.0f} s, {r.tokens_in + r.tokens_out} tokens)")

    say(f"stele eval --agent: {total} runs of {opts.harness} ({len(suite.tasks)} tasks x {opts.runs} runs x "
        f"{len(opts.arms)} arms), each in a throwaway clone")
    outcome = runner.run_suite(p, suite, opts, progress)
    name = suite_path.name
    summary = results.summarise(outcome, [t.id for t in suite.tasks], list(opts.arms), name)
    where = results.write(p, summary, outcome)
    if as_json:
        emit_json({**summary, "run": where.name, "path": p.rel(where)})
    else:
        sys.stdout.write(results.markdown(summary))
        print(f"\nresults: {p.rel(where)}/ (result.json, report.md, runs/)")
    return 0
