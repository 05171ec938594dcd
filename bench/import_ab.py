#!/usr/bin/env python3
"""Two Stele versions' imports on the hook path, A/B: each round runs `python -X importtime -m stele hook
EVENT --harness claude` once per side (the order alternating), a fresh process each, on each side's own
copy of a record (as bench/hook_ab.py does), and prints per side the median over the rounds of the sum
of every module's self time, then the top modules by median self time (with their cumulative time).

    .venv/bin/python bench/import_ab.py --runs 21 base=/tmp/base/src:/tmp/recA new=src:/tmp/recB

A side is NAME=SRC:RECORD: SRC is the `src` folder put first on PYTHONPATH (an older commit's from
`git archive COMMIT src | tar -x -C /tmp/base`), so both sides run this interpreter. Import times are
wall times inside the process: on a loaded machine read the medians side by side, not alone.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from hook_floor import payload, record_titles  # noqa: E402
from hooks_bench import child_env  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sides", nargs=2, help="NAME=SRC:RECORD")
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--event", choices=("prompt", "session-start", "pre-edit"), default="prompt")
    args = ap.parse_args()
    sides = []
    for spec in args.sides:
        name, _, rest = spec.partition("=")
        src, _, record = rest.rpartition(":")
        sides.append((name, str(Path(src).resolve()), Path(record)))
    prompts = record_titles(sides[0][2])
    found: dict[str, tuple[dict[str, list[int]], dict[str, list[int]], list[int]]] = {
        name: ({}, {}, []) for name, _, _ in sides}
    for n in range(args.runs):
        for name, src, record in (sides if n % 2 == 0 else sides[::-1]):
            env = {**child_env(), "STELE_RESIDENT": "0", "PYTHONPATH": src}
            done = subprocess.run([sys.executable, "-X", "importtime", "-m", "stele", "hook", args.event,
                                   "--harness", "claude"], cwd=record, env=env, capture_output=True, text=True,
                                  input=payload(record, args.event, n, prompts[n % len(prompts)], ["src/app.py"]))
            own, cumulative, totals = found[name]
            total = 0
            for line in done.stderr.splitlines():
                if not line.startswith("import time:") or "self [us]" in line:
                    continue
                self_us, cum_us, module = line[len("import time:"):].split("|")
                own.setdefault(module.strip(), []).append(int(self_us))
                cumulative.setdefault(module.strip(), []).append(int(cum_us))
                total += int(self_us)
            totals.append(total)
    for name, (own, cumulative, totals) in found.items():
        print(f"{name}: {args.runs} processes; sum of self import time, median {statistics.median(totals) / 1000:.1f} ms")
        rows = sorted(((statistics.median(v), statistics.median(cumulative[m]), m) for m, v in own.items()),
                      reverse=True)
        for self_us, cum_us, module in rows[:args.top]:
            print(f"  {self_us / 1000:6.2f} ms self  {cum_us / 1000:6.2f} ms cumulative  {module}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
