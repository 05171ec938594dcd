#!/usr/bin/env python3
"""The early freshness scan (`index/early.py`) A/B, in one run: `stele hook prompt --harness claude`
with the scan forked at the start, against the same hook with the fork switched off, rounds
interleaved (the order alternates), each call a fresh process with a new session id.

    .venv/bin/python bench/early_scan.py                      # bench/out/rec-10000, 20 rounds
    .venv/bin/python bench/early_scan.py --facts 50000 --runs 10

Both sides run the same driver (`python -c`: the console script's `main`), one with
`cli.entry._scan_early` replaced by a no-op, so interpreter start and imports are the same and the
product carries no switch for it. Printed: wall p50 and CPU p50 (user + system of the hook and its
reaped children: the early scan's child is counted) per side, and whether every answer was the same.
The record is hook_floor.py's (bench/out/rec-FACTS, generated and indexed when missing).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from hook_floor import GAP_MS, STELE, payload, record_titles, sort_prompts, timed  # noqa: E402
from hooks_bench import child_env, context_of, p50_line  # noqa: E402

DRIVER = "import sys; from stele.cli import entry; {patch}sys.exit(entry.main(sys.argv[1:]))"
SIDES = {"early scan": DRIVER.format(patch=""),
         "no early scan": DRIVER.format(patch="entry._scan_early = lambda hook: None; ")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--facts", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--repo", type=Path, help="default: bench/out/rec-FACTS (generated when missing)")
    args = ap.parse_args()
    repo = args.repo or HERE / "out" / f"rec-{args.facts}"
    env = {**child_env(), "STELE_RESIDENT": "0"}
    if not repo.exists():
        subprocess.run([sys.executable, str(HERE / "gen_record.py"), str(args.facts), str(repo)], check=True)
        subprocess.run([STELE, "init"], cwd=repo, env=env, check=True, capture_output=True)
    subprocess.run([sys.executable, "-c", "from stele.index import build; from stele.project import find; "
                    "build.finish(find())"], cwd=repo, env=env, check=True, capture_output=True)
    fts, _ = sort_prompts(repo, record_titles(repo))
    if not fts:
        raise SystemExit("no prompt that full text answers")
    print(f"record: {repo} ({args.facts} facts), {len(fts)} full-text prompts; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    rows: dict[str, list[tuple[float, float]]] = {name: [] for name in SIDES}
    same = True
    for n in range(args.runs):
        answers = []
        for name in (list(SIDES) if n % 2 == 0 else list(SIDES)[::-1]):
            time.sleep(GAP_MS / 1000)
            wall, cpu, _rss, out = timed([sys.executable, "-c", SIDES[name], "hook", "prompt", "--harness", "claude"],
                                         repo, env, payload(repo, "prompt", n, fts[n % len(fts)], []))
            rows[name].append((wall, cpu))
            answers.append(context_of(out))
        same &= answers[0] == answers[1]
    for name, got in rows.items():
        print(p50_line(name, got, 15))
    print(f"same answers: {same}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
