#!/usr/bin/env python3
"""Benchmark the index and `stele recall` on a synthetic record, in one run.

    python bench/recall_bench.py --facts 10000            # generates bench/out/rec-10000 once, then measures
    python bench/recall_bench.py --facts 1000 --runs 30

Reports, each measured in fresh processes (what a hook or an agent pays):
- full rebuild time (`stele rebuild`) and its peak RSS;
- `stele recall --json PROMPT` wall time p50/p95 over varied prompts, and its peak RSS;
- the same recall as a library call in a bare script (what the hook path pays: no typer);
- the floor beside it: a bare script that imports tantivy, opens the same text index and runs one query;
- the incremental refresh after editing one fact: `stele recall` in a fresh process right after the edit
  (refresh included), and the refresh alone as the index reports it.
Wall times are printed beside CPU time (user + system), which a busy machine disturbs less; the load
average is printed too.
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
LIBRARY = """
import json, sys
from stele.project import find
from stele.retrieve.recall import recall
sys.stdout.write(json.dumps(recall(find(), sys.argv[1]).as_dict()))
"""
FLOOR = """
import sys, tantivy
idx = tantivy.Index.open(sys.argv[1])
idx.register_tokenizer("stele_terms", tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.regex(r"\\w+"))
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


CPU: list[float] = []  # CPU seconds (user + system) of each child, in order
RSS: list[int] = []    # peak RSS (KiB) of each child, in order


def timed(cmd: list[str], cwd: Path, env: dict) -> tuple[float, subprocess.CompletedProcess]:
    """Wall seconds and the result of one child process; its CPU time and peak RSS, which `os.wait4`
    reports per child, are appended to CPU and RSS."""
    import tempfile

    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        r = subprocess.CompletedProcess(cmd, p.returncode, out.read(), err.read())
    CPU.append(usage.ru_utime + usage.ru_stime)
    RSS.append(usage.ru_maxrss)
    return wall, r


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
    print(f"record: {repo} ({args.facts} facts); "
          f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")

    walls: list[float] = []
    cpus: list[float] = []
    timed(STELE + ["recall", "--json", PROMPTS[0]], repo, env)  # make sure the index is fresh
    for n in range(args.runs):
        wall, r = timed(STELE + ["recall", "--json", PROMPTS[n % len(PROMPTS)]], repo, env)
        if r.returncode:
            sys.exit(f"recall failed: {r.stderr}")
        walls.append(wall * 1000)
        cpus.append(CPU[-1] * 1000)
    recall_rss = max(RSS[-args.runs:])
    modes = json.loads(r.stdout)["mode"]
    library = []
    for n in range(args.runs):
        wall, r = timed([sys.executable, "-c", LIBRARY, PROMPTS[n % len(PROMPTS)]], repo, env)
        if r.returncode:
            sys.exit(f"library recall failed: {r.stderr}")
        library.append(wall * 1000)
    floors, floor_cpus = [], []
    for n in range(args.runs):
        floor = [sys.executable, "-c", FLOOR, str(repo / ".stele/index/text"), PROMPTS[n % len(PROMPTS)]]
        wall, r = timed(floor, repo, env)
        if r.returncode:
            sys.exit(f"floor script failed: {r.stderr}")
        floors.append(wall * 1000)
        floor_cpus.append(CPU[-1] * 1000)

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
    rebuild_rss = RSS[-1]

    print(f"stele recall, fresh process:   p50 {statistics.median(walls):6.0f} ms   "
          f"p95 {pct(walls, .95):6.0f} ms"
          f"   CPU p50 {statistics.median(cpus):4.0f} ms   ({args.runs} runs, mode {modes})")
    print(f"recall() without the CLI:      p50 {statistics.median(library):6.0f} ms   "
          f"p95 {pct(library, .95):6.0f} ms   (the library call `stele hook prompt` makes)")
    print(f"floor (tantivy open + query):  p50 {statistics.median(floors):6.0f} ms   "
          f"p95 {pct(floors, .95):6.0f} ms"
          f"   CPU p50 {statistics.median(floor_cpus):4.0f} ms")
    print(f"recall right after one edit:   {edit_wall * 1000:6.0f} ms (fresh process, refresh included)")
    print(f"refresh after one edit alone:  {refresh_alone:6.0f} ms (imports excluded)")
    print(f"full rebuild:                  {rebuild_wall:6.1f} s  ({json.loads(r.stdout)['items']} items)")
    print(f"peak RSS: recall {recall_rss / 1024:.0f} MiB, rebuild {rebuild_rss / 1024:.0f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
