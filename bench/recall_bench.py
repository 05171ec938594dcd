#!/usr/bin/env python3
"""Benchmark the index and `stele recall` on a synthetic record, in one run.

    python bench/recall_bench.py --facts 10000            # generates bench/out/rec-10000 once, then measures
    python bench/recall_bench.py --facts 1000 --runs 30

Reports, each measured in fresh processes (what a hook or an agent pays):
- full rebuild time (`stele rebuild`) and its peak RSS;
- `stele recall --json PROMPT` wall time p50/p95 over varied prompts, and its peak RSS;
- the floor beside it: a bare script that imports tantivy, opens the same text index and runs one query;
- the incremental refresh after editing one fact: `stele recall` in a fresh process right after the edit
  (refresh included), and the refresh alone as the index reports it.
The machine's load average is printed too: the numbers mean little on a busy machine.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
STELE = [str(Path(sys.executable).parent / "stele")]  # the console script users run
FLOOR = """
import sys, tantivy
idx = tantivy.Index.open(sys.argv[1])
idx.register_tokenizer("stele_code", tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.regex(r"\\w+"))
                       .filter(tantivy.Filter.lowercase()).build())
q = idx.parse_query_lenient(sys.argv[2], ["title", "body"])[0]
s = idx.searcher()
print([s.doc(a)["id"][0] for _, a in s.search(q, 10).hits])
"""
PROMPTS = [
    "why do payment retries back off with jitter after a provider outage?",
    "the checkout form crashed with TS2769: No overload matches this call",
    "how long is stock held for a reservation when the customer abandons the cart?",
    "customers were billed twice for the same order during the sale",
    "what is still blocking the webhook idempotency work before release?",
    "psycopg2.errors.UniqueViolation: duplicate key value violates unique constraint processed_events_pkey",
    "which rate limit applies to partner api keys at peak traffic?",
    "rotate the session token after login and on privilege change",
    "migration locked the orders table because of a volatile default",
    "where is the runbook for a redis failover and who owns it?",
]


def timed(cmd: list[str], cwd: Path, env: dict) -> tuple[float, subprocess.CompletedProcess]:
    """Wall seconds and the result of one child process."""
    t0 = time.perf_counter()
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    return time.perf_counter() - t0, r


def _child_rss() -> int:
    """The largest peak RSS (KiB) of any child so far."""
    import resource

    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(p * (len(values) - 1)))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--facts", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=20, help="recall runs (prompts cycle)")
    ap.add_argument("--repo", type=Path, help="default: bench/out/rec-FACTS (generated when missing)")
    args = ap.parse_args()
    repo = args.repo or HERE / "out" / f"rec-{args.facts}"
    env = dict(os.environ, NO_COLOR="1", STELE_TODAY="2026-11-29")
    if not repo.exists():
        subprocess.run([sys.executable, str(HERE / "gen_record.py"), str(args.facts), str(repo)], check=True)
        subprocess.run(STELE + ["init"], cwd=repo, env=env, check=True, capture_output=True)
    print(f"record: {repo} ({args.facts} facts); load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")

    # Peak RSS of children is cumulative (the largest so far), so measure the small process first.
    walls: list[float] = []
    timed(STELE + ["recall", "--json", PROMPTS[0]], repo, env)  # make sure the index is fresh
    for n in range(args.runs):
        wall, r = timed(STELE + ["recall", "--json", PROMPTS[n % len(PROMPTS)]], repo, env)
        if r.returncode:
            sys.exit(f"recall failed: {r.stderr}")
        walls.append(wall * 1000)
    recall_rss = _child_rss()
    modes = json.loads(r.stdout)["mode"]
    floors = []
    for n in range(args.runs):
        wall, r = timed([sys.executable, "-c", FLOOR, str(repo / ".stele/index/text"), PROMPTS[n % len(PROMPTS)]],
                           repo, env)
        if r.returncode:
            sys.exit(f"floor script failed: {r.stderr}")
        floors.append(wall * 1000)

    fact = sorted((repo / "docs/memory/decisions").glob("*.md"))[0]
    original = fact.read_text()
    try:
        fact.write_text(original.replace("\n---\n", "\n---\nEdited for the benchmark. ", 1))
        edit_wall, r = timed(STELE + ["recall", "--json", PROMPTS[1]], repo, env)
        fact.write_text(original.replace("\n---\n", "\n---\nEdited again. ", 1))
        code = ("import time,sys; from pathlib import Path; from stele.project import Project; "
                "from stele.index import build; p=Project(Path('.')); "
                "import stele.index.text, stele.index.vectors, numpy, tantivy; "
                "t=time.perf_counter(); build.open_index(p).close(); print(time.perf_counter()-t)")
        _, r = timed([sys.executable, "-c", code], repo, env)
        refresh_alone = float(r.stdout.strip()) * 1000
    finally:
        fact.write_text(original)
        timed(STELE + ["recall", "--json", PROMPTS[0]], repo, env)

    rebuild_wall, r = timed(STELE + ["rebuild", "--json"], repo, env)
    if r.returncode:
        sys.exit(f"rebuild failed: {r.stderr}")
    rebuild_rss = _child_rss()

    print(f"stele recall, fresh process:   p50 {statistics.median(walls):6.0f} ms   p95 {pct(walls, .95):6.0f} ms"
          f"   ({args.runs} runs, mode {modes})")
    print(f"floor (tantivy open + query):  p50 {statistics.median(floors):6.0f} ms   p95 {pct(floors, .95):6.0f} ms")
    print(f"recall right after one edit:   {edit_wall * 1000:6.0f} ms (fresh process, refresh included)")
    print(f"refresh after one edit alone:  {refresh_alone:6.0f} ms (imports excluded)")
    print(f"full rebuild:                  {rebuild_wall:6.1f} s  ({json.loads(r.stdout)['items']} items)")
    print(f"peak RSS: recall {recall_rss / 1024:.0f} MiB, rebuild {rebuild_rss / 1024:.0f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
