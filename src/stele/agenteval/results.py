"""What `stele eval --agent` concluded, and where it is kept: `.stele/eval/agent/RUN/` holds
`result.json` (every run, every check, the summary), `report.md` (the short account) and `runs/`
(each run's harness output, redacted as every other write path is). `stele serve` lists them.

The summary per task and overall: the pass rate of each arm with its 95% Wilson interval, the
difference with minus without with Newcombe's interval and a paired bootstrap interval over the pairs
of runs (same task, same run number), tokens in and out and wall time per arm, and
the facts Stele delivered in the `with` runs. Everything in it is a function of the runs alone, so the
same runs give the same numbers (wall time aside).
"""
from __future__ import annotations

import datetime as dt
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from ..project import Project
from . import stats
from .runner import Outcome, RunResult

FORMAT = 1
_RUN = re.compile(r"^[0-9]{8}T[0-9]{6}Z-[a-z]+(-[0-9]+)?$")


def folder(project: Project) -> Path:
    return project.local("eval") / "agent"


def _arm(runs: list[RunResult]) -> dict[str, Any]:
    passed = sum(r.passed for r in runs)
    lo, hi = stats.wilson(passed, len(runs))
    n = max(len(runs), 1)
    return {"passed": passed, "total": len(runs), "rate": round(passed / n, 4) if runs else None,
            "interval": [round(lo, 4), round(hi, 4)],
            "tokens_in": sum(r.tokens_in for r in runs), "tokens_out": sum(r.tokens_out for r in runs),
            "mean_tokens_in": round(sum(r.tokens_in for r in runs) / n, 1),
            "mean_tokens_out": round(sum(r.tokens_out for r in runs) / n, 1),
            "seconds": round(sum(r.seconds for r in runs), 1), "mean_seconds": round(sum(r.seconds for r in runs) / n, 1)}


def _paired(w: list[RunResult], wo: list[RunResult]) -> dict[str, Any]:
    """The runs of both arms that share a task and run number, and the bootstrap interval of their
    mean difference (stats.paired_bootstrap): how many pairs, and in how many only one arm passed."""
    without = {(r.task, r.run): r.passed for r in wo}
    diffs = [int(r.passed) - int(without[(r.task, r.run)]) for r in w if (r.task, r.run) in without]
    lo, hi = stats.paired_bootstrap(diffs)
    return {"pairs": len(diffs), "with_only": diffs.count(1), "without_only": diffs.count(-1),
            "value": round(sum(diffs) / len(diffs), 4) if diffs else None, "interval": [round(lo, 4), round(hi, 4)]}


def _block(runs: list[RunResult], arms: list[str]) -> dict[str, Any]:
    by = {a: [r for r in runs if r.arm == a] for a in arms}
    out: dict[str, Any] = {"arms": {a: _arm(rs) for a, rs in by.items()}}
    w, wo = by.get("with", []), by.get("without", [])
    if w and wo:
        pw, pwo = sum(r.passed for r in w), sum(r.passed for r in wo)
        lo, hi = stats.newcombe(pw, len(w), pwo, len(wo))
        out["difference"] = {"value": round(pw / len(w) - pwo / len(wo), 4), "interval": [round(lo, 4), round(hi, 4)],
                             "paired": _paired(w, wo)}
    if w:
        seen = Counter(i for r in w for d in r.injected for i in d["ids"])
        out["injected"] = dict(sorted(seen.items(), key=lambda kv: (-kv[1], kv[0])))
    return out


def summarise(result: Outcome, task_ids: list[str], arms: list[str], suite: str) -> dict[str, Any]:
    tasks = {t: _block([r for r in result.results if r.task == t], arms) for t in task_ids}
    return {"format": FORMAT, "suite": suite, "harness": result.harness, "commit": result.commit,
            "started": dt.datetime.fromtimestamp(result.started, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "seconds": round(result.seconds, 1), "stopped": result.stopped or None, "arms": arms,
            "overall": _block(result.results, arms), "tasks": tasks,
            "runs": [r.as_dict() for r in result.results]}


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def _interval(iv: list[float], signed: bool = False) -> str:
    f = "{:+.0f}" if signed else "{:.0f}"
    return f"[{f.format(100 * iv[0])}, {f.format(100 * iv[1])}]"


def _line(name: str, block: dict[str, Any]) -> str:
    cells = []
    for a in block["arms"].values():
        cells.append(f"{a['passed']}/{a['total']} {_pct(a['rate'])} {_interval(a['interval'])}")
    diff = block.get("difference")
    d = f"{100 * diff['value']:+.0f} pts {_interval(diff['interval'], True)}" if diff else "-"
    if not diff:
        return f"| {name} | " + " | ".join(cells) + f" | {d} |"
    p = diff["paired"]
    paired = f"{_interval(p['interval'], True)} ({p['with_only']} / {p['without_only']} of {p['pairs']})"
    return f"| {name} | " + " | ".join(cells) + f" | {d} | {paired} |"


def markdown(summary: dict[str, Any]) -> str:
    arms = summary["arms"]
    heads = ["task", *arms] + (["difference", "paired"] if "difference" in summary["overall"] else ["difference"])
    lines = [f"# stele eval --agent: {summary['suite']} in {summary['harness']}", "",
             f"Commit {summary['commit'][:12]}, started {summary['started']}, {summary['seconds']:.0f} s."
             + (f" Stopped early: {summary['stopped']}." if summary["stopped"] else ""), "",
             "Pass rate per arm with its 95% Wilson interval; the difference is with minus without, in "
             "percentage points, with Newcombe's 95% interval (arms as independent samples); paired: the 95% "
             "bootstrap interval over the pairs (same task, same run), and the pairs only `with` / only "
             "`without` passed. An interval that spans 0 has not shown a difference.", "",
             "| " + " | ".join(heads) + " |", "|---" * len(heads) + "|"]
    for name, block in summary["tasks"].items():
        lines.append(_line(name, block))
    lines.append(_line("**overall**", summary["overall"]))
    lines += ["", "| arm | tokens in | tokens out | mean tokens in/out per run | wall time | mean per run |",
              "|---|---|---|---|---|---|"]
    for arm, a in summary["overall"]["arms"].items():
        lines.append(f"| {arm} | {a['tokens_in']} | {a['tokens_out']} | {a['mean_tokens_in']:g} / "
                     f"{a['mean_tokens_out']:g} | {a['seconds']:g} s | {a['mean_seconds']:g} s |")
    injected = summary["overall"].get("injected")
    if injected is not None:
        shown = ", ".join(f"{k} ({v})" for k, v in list(injected.items())[:20]) or "nothing"
        lines += ["", f"Stele delivered in the `with` runs (fact, runs it reached): {shown}."]
    failed = [r for r in summary["runs"] if not r["passed"]]
    if failed:
        lines += ["", "Failed runs:", ""]
        for r in failed[:40]:
            why = "; ".join(f"{c['check']}" + (f" ({c['detail']})" if c["detail"] else "")
                            for c in r["checks"] if not c["ok"])
            lines.append(f"- {r['task']} {r['arm']} #{r['run']}: {why}")
    return "\n".join(lines) + "\n"


def write(project: Project, summary: dict[str, Any], result: Outcome) -> Path:
    """The run's folder under `.stele/eval/agent/`, named by its start time and harness."""
    from .. import atomic
    from ..redact import redact

    stamp = dt.datetime.fromtimestamp(result.started, dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    base = folder(project)
    name, n = f"{stamp}-{result.harness}", 1
    while (base / name).exists():
        n += 1
        name = f"{stamp}-{result.harness}-{n}"
    run_dir = base / name
    patterns = tuple(project.config["redaction.patterns"] or ())
    for r in result.results:
        atomic.write(run_dir / "runs" / f"{r.task}.{r.arm}.{r.run}.jsonl", redact(r.transcript, patterns).text)
    summary = {**summary, "run": name}
    atomic.write(run_dir / "result.json", redact(json.dumps(summary, indent=1) + "\n", patterns).text)
    atomic.write(run_dir / "report.md", redact(markdown(summary), patterns).text)
    return run_dir


def listing(project: Project) -> list[dict[str, Any]]:
    """Every stored run's headline, newest first (for `stele serve`)."""
    out = []
    base = folder(project)
    for d in sorted(base.iterdir(), reverse=True) if base.is_dir() else []:
        data = read(project, d.name)
        if data is None:
            continue
        overall = data.get("overall", {})
        out.append({"run": d.name, "suite": data.get("suite"), "harness": data.get("harness"),
                    "started": data.get("started"), "stopped": data.get("stopped"),
                    "arms": overall.get("arms"), "difference": overall.get("difference")})
    return out


def read(project: Project, run: str) -> dict[str, Any] | None:
    if not _RUN.match(run):
        return None
    path = folder(project) / run / "result.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if isinstance(data, dict):
        data["report"] = (folder(project) / run / "report.md").read_text(encoding="utf-8") \
            if (folder(project) / run / "report.md").is_file() else ""
        return data
    return None
