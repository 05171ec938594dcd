#!/usr/bin/env python3
"""Two Stele versions' hook, A/B in one run: each round calls `stele hook EVENT --harness claude` once
per side (the order alternating), each call a fresh process with a new session id, on each side's own
copy of a record; CPU (user + system of the hook and its reaped children) is what a loaded machine
disturbs least, so that is the figure to compare.

    .venv/bin/python bench/hook_ab.py --runs 30 base=/tmp/base-stele:/tmp/recA new=.venv/bin/stele:/tmp/recB
    .venv/bin/python bench/hook_ab.py --event session-start --floor base=...:... new=...:...

A side is NAME=COMMAND:RECORD. For an older commit with the same interpreter (start-up the same):
`git archive COMMIT src | tar -x -C /tmp/base`, then a script `/tmp/base-stele` of
`#!/path/to/.venv/bin/python`, `import sys; sys.path.insert(0, "/tmp/base/src")`, `from stele.cli.entry
import main; sys.exit(main())`, and its bytecode compiled once (`python -m compileall -q /tmp/base/src`).
Each record is a copy of bench/out/rec-FACTS (hook_floor.py makes it), brought up to date by the side's
version first. Prompts are the record's own titles (hook_floor.py's choice); `--floor` adds the floor
of hook_floor.py to each round. Printed: wall and CPU p50 per side, and whether the two sides gave the
same answer every round.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from hook_floor import GAP_MS, payload, record_titles, timed  # noqa: E402
from hooks_bench import child_env, context_of, p50_line  # noqa: E402
from recall_bench import FLOOR  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sides", nargs=2, help="NAME=COMMAND:RECORD")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--event", choices=("prompt", "session-start", "pre-edit"), default="prompt")
    ap.add_argument("--floor", action="store_true", help="time hook_floor.py's floor in each round too")
    args = ap.parse_args()
    sides = []
    for spec in args.sides:
        name, _, rest = spec.partition("=")
        command, _, record = rest.rpartition(":")
        sides.append((name, command, Path(record)))
    env = {**child_env(), "STELE_RESIDENT": "0"}
    prompts = record_titles(sides[0][2])
    files = ["src/app.py"]
    rows: dict[str, list[tuple[float, float]]] = {name: [] for name, _, _ in sides}
    floors: list[tuple[float, float]] = []
    same = True
    print(f"{args.event}, {args.runs} rounds; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    for n in range(args.runs):
        prompt = prompts[n % len(prompts)]
        if args.floor:
            floors.append(timed([sys.executable, "-c", FLOOR, str(sides[0][2] / ".stele/index/text"), prompt],
                                sides[0][2], env)[:2])
        answers = {}
        for name, command, record in (sides if n % 2 == 0 else sides[::-1]):
            time.sleep(GAP_MS / 1000)
            wall, cpu, _rss, out = timed([command, "hook", args.event, "--harness", "claude"], record, env,
                                         payload(record, args.event, n, prompt, files))
            rows[name].append((wall, cpu))
            answers[name] = context_of(out)
        same &= len(set(answers.values())) == 1
    for name, got in [*rows.items(), *([("floor", floors)] if floors else [])]:
        print(p50_line(name, got))
    print(f"same answers: {same}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
