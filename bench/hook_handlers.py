#!/usr/bin/env python3
"""What the session-start and pre-edit hooks cost once Python and Stele are loaded (issue 19), in one run.

    .venv/bin/python bench/hook_handlers.py --facts 50000 --runs 10
    .venv/bin/python bench/hook_handlers.py --facts 50000 --profile session-start   # one cProfile

A fork server (a resident process with stele and tantivy imported, one child per hook call) takes
away the interpreter's start and the imports; what is left is the handler's own work, which this
measures. Each round is a fresh process that answers the event once with another session id (so
every lazy import is done and the OS caches are warm, as in a server's child), then again, timed:
CPU (process_time: every thread) and wall around `stele.hooks.dispatch.main`, the part of that CPU
spent in the freshness scan (`sources.scan`, which the server's inotify watch is to replace), and the
process's peak RSS after both. `bench/hook_floor.py` gives the same events in fresh processes, imports included.
The record is bench/out/rec-FACTS (generated and indexed by hook_floor.py or gen_record.py).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from hook_floor import payload  # noqa: E402
from hooks_bench import TIMED_SCAN, anchored_files, child_env  # noqa: E402

CHILD = """
import io, json, resource, sys, time
from stele.hooks import dispatch
from stele.index import build
event, warm, timed, profile = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"
""" + TIMED_SCAN + """
def answer(text):
    sys.stdin, out, sys.stdout = io.StringIO(text), sys.stdout, io.StringIO()
    try:
        dispatch.main([event, "--harness", "claude"])
        return sys.stdout.getvalue()
    finally:
        sys.stdout = out
answer(warm)
if profile:
    import cProfile, pstats
    pr = cProfile.Profile(time.process_time)
    pr.enable()
    said = answer(timed)
    pr.disable()
    pstats.Stats(pr, stream=sys.stderr).sort_stats("cumulative").print_stats(40)
    print(json.dumps([0, 0, 0, len(said), 0]))
    raise SystemExit
scanned.clear()
t, c = time.perf_counter(), time.process_time()
said = answer(timed)
wall, cpu = (time.perf_counter() - t) * 1000, (time.process_time() - c) * 1000
print(json.dumps([wall, cpu, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, len(said), sum(scanned)]))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--facts", type=int, default=50000)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--repo", type=Path, help="default: bench/out/rec-FACTS")
    ap.add_argument("--profile", choices=("session-start", "pre-edit"), help="print one cProfile (CPU time)")
    args = ap.parse_args()
    repo = args.repo or HERE / "out" / f"rec-{args.facts}"
    if not (repo / ".stele/index/catalog.sqlite").exists():
        raise SystemExit(f"{repo} has no index: run bench/hook_floor.py --facts {args.facts} first")
    env = child_env()
    files = anchored_files(repo)
    events = [args.profile] if args.profile else ["session-start", "pre-edit"]
    rows: dict[str, list[list[float]]] = {e: [] for e in events}
    print(f"record: {repo}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    for n in range(1 if args.profile else args.runs):
        for event in events:
            warm, timed = payload(repo, event, 2 * n, "", files), payload(repo, event, 2 * n + 1, "", files)
            r = subprocess.run([sys.executable, "-c", CHILD, event, warm, timed, "1" if args.profile else "0"],
                               cwd=repo, env=env, capture_output=True, text=True)
            if r.returncode or not r.stdout.strip():
                raise SystemExit(f"{event} failed: {r.stderr[-800:]}")
            if args.profile:
                print(r.stderr)
            rows[event].append(json.loads(r.stdout.splitlines()[-1]))
    if args.profile:
        return 0
    for event, got in rows.items():
        print(f"{event:<14} in-process: wall p50 {statistics.median(g[0] for g in got):6.1f} ms, "
              f"CPU p50 {statistics.median(g[1] for g in got):6.1f} ms (without the freshness scan "
              f"{statistics.median(g[1] - g[4] for g in got):6.1f}), peak RSS {max(g[2] for g in got) / 1024:5.1f} "
              f"MiB, answer {statistics.median(g[3] for g in got):.0f} chars ({len(got)} rounds)")
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
