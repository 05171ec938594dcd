"""Run the end-to-end suite again and again in CI, inside a time budget: `python -m tests.e2e.repeat`.

The harnesses run hooks at the same moment (Copilot CLI starts its prompt hook beside the session
start), so one green run proves less than it seems: an ordering that comes up in 1 run of 5 passes
most CI runs. `.ci/run` calls this after `make test` (the suite's first run) for the remaining runs,
each of which asserts what reached the model's requests, and stops at the first failure. Before each
run it checks that one more (as long as the longest so far) still ends inside the budget counted from
the start of `.ci/run`; when it would not, it stops and says how many runs fit, so a slow machine
shortens the proof instead of passing the CI limit.

Environment: `STELE_E2E_RUNS` (runs in all, `make test`'s included; default 5), `STELE_CI_STARTED`
(unix time `.ci/run` began; default now), `STELE_CI_BUDGET_S` (default 1800, inside CI's 90 minutes
with the relevance gate after it). Measured: one run of the suite (44 tests, `-n auto` on 2 cores)
costs 237 CPU seconds, 3-4 minutes on an idle machine; 1060 s at a load average of 20 (22% of the
CPU), where the budget cuts the proof short and says so.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time

RUNS = 5
BUDGET_S = 1800


def plan(runs: int, started: float, budget: float, durations: list[float], now: float) -> bool:
    """Is there time for another run: the runs so far fewer than `runs`, and one as long as the
    longest so far ending inside the budget."""
    if len(durations) >= runs:
        return False
    longest = max(durations, default=0.0)
    return now + longest <= started + budget


def main() -> int:
    runs = int(os.environ.get("STELE_E2E_RUNS") or RUNS)
    started = float(os.environ.get("STELE_CI_STARTED") or time.time())
    budget = float(os.environ.get("STELE_CI_BUDGET_S") or BUDGET_S)
    durations: list[float] = [0.0]  # make test's run: its length is unknown, the first repeat measures one
    cmd = [sys.executable, "-m", "pytest", "tests/e2e", "-n", "auto", "-q", "-p", "no:cacheprovider"]
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100"}
    while plan(runs, started, budget, durations, time.time()):
        t0 = time.time()
        done = subprocess.run(cmd, env=env, check=False)
        durations.append(time.time() - t0)
        n = len(durations)
        print(f"e2e run {n} of {runs}: {'passed' if done.returncode == 0 else 'FAILED'} in {durations[-1]:.0f} s",
              flush=True)
        if done.returncode != 0:
            return done.returncode
    if len(durations) < runs:
        print(f"e2e: {len(durations)} of {runs} runs fit the {budget:.0f} s budget "
              f"(each about {max(durations):.0f} s); the rest were not run", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
