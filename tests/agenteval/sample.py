"""A stored `stele eval --agent` run built from made-up runs (no harness), for the tests of what reads
the results folder (`stele serve`)."""
from __future__ import annotations

from pathlib import Path

from stele.agenteval import results
from stele.agenteval.outcome import Check
from stele.agenteval.runner import Outcome, RunResult
from stele.project import Project


def stored_run(project: Project) -> str:
    runs = [RunResult("con-6e8b", arm, n, arm == "with", [Check("cites CON-6E8B", arm == "with")], 10, 10, 1, 2.0,
                      0, injected=[{"hook": "session-start", "ids": ["CON-6E8B"]}] if arm == "with" else [])
            for n in (1, 2, 3) for arm in ("with", "without")]
    outcome = Outcome("claude", "0" * 40, 1764633600.0, runs, seconds=12.0)
    summary = results.summarise(outcome, ["con-6e8b"], ["with", "without"], "agent-eval.yaml")
    return Path(results.write(project, summary, outcome)).name
