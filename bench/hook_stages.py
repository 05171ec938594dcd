#!/usr/bin/env python3
"""Where a prompt hook's own-process CPU goes, by stage: each round a fresh process runs `stele hook
prompt --harness claude` (a new session, one of the record's titles) with the stages below wrapped in
`time.process_time` (inclusive: a stage counts the stages it calls), and the medians are printed.

    .venv/bin/python bench/hook_stages.py                         # bench/out/rec-10000, 9 rounds
    .venv/bin/python bench/hook_stages.py --repo /tmp/recA --runs 15
    PYTHONPATH=/tmp/base/src .venv/bin/python bench/hook_stages.py --repo /tmp/recB   # another version

The modules are imported before the hook runs (so `imports` is their import, and no stage pays one), and
the early scan is forked just before the hook, so its child runs beside the stages, not the imports: the
figures are the parent's CPU, for comparing stages and versions, not a hook's total (hook_floor.py and
hook_ab.py give that). Wrapped by module attribute: a stage a module imported by name before the wrap
is not seen through that name.
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
from hook_floor import payload, record_titles  # noqa: E402
from hooks_bench import child_env  # noqa: E402

STAGES = [("stele.hooks.prompt", "handle"), ("stele.hooks.session_start", "for_prompt"),
          ("stele.retrieve.recall", "recall"), ("stele.index.build", "open_index"), ("stele.index.build", "_stale"),
          ("stele.retrieve.recall", "gather"), ("stele.retrieve.seeds", "hybrid"),
          ("stele.index.text", "TextIndex.search"), ("stele.index.text", "TextIndex.holders"),
          ("stele.retrieve.seeds", "Coverage.load"), ("stele.retrieve.recall", "confirmed"),
          ("stele.retrieve.seeds", "vector_hits"), ("stele.index.nearest", "nearest"), ("stele.index.vectors", "top_k"),
          ("stele.retrieve.unrecorded", "judged"), ("stele.retrieve.walk", "walk"), ("stele.hooks.run", "_remember_shown")]

CHILD = """
import gc, importlib, io, json, sys, time
gc.set_threshold(100_000)  # as the console script does (cli/entry.py)
t0 = time.process_time()
from stele.cli import entry
spent = {}
def wrap(module, name):
    owner = importlib.import_module(module)
    *path, last = name.split(".")
    for part in path:
        owner = getattr(owner, part)
    f = getattr(owner, last)
    def timed(*a, **k):
        t = time.process_time()
        try:
            return f(*a, **k)
        finally:
            spent[name] = spent.get(name, 0.0) + time.process_time() - t
    setattr(owner, last, timed)
for module, name in json.loads(sys.argv[1]):
    wrap(module, name)
spent["imports"] = time.process_time() - t0
out, sys.stdout = sys.stdout, io.StringIO()
t = time.process_time()
entry._scan_early(hook=True)
entry.here(["hook", "prompt", "--harness", "claude"])
spent["the hook, after the imports"] = time.process_time() - t
sys.stdout = out
print(json.dumps({k: round(v * 1000, 3) for k, v in spent.items()}))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", type=Path, default=HERE / "out" / "rec-10000")
    ap.add_argument("--runs", type=int, default=9)
    args = ap.parse_args()
    env = {**child_env(), "STELE_RESIDENT": "0"}
    prompts = record_titles(args.repo)
    rows = []
    for n in range(args.runs):
        done = subprocess.run([sys.executable, "-c", CHILD, json.dumps(STAGES)], cwd=args.repo, env=env, check=True,
                              input=payload(args.repo, "prompt", n, prompts[n % len(prompts)], []),
                              capture_output=True, text=True)
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
    print(f"{args.repo}, {args.runs} fresh processes; load average {os.getloadavg()[0]:.1f}; CPU ms, medians")
    names = sorted({k for r in rows for k in r}, key=lambda k: -statistics.median(r.get(k, 0.0) for r in rows))
    for name in names:
        print(f"{statistics.median(r.get(name, 0.0) for r in rows):8.2f}  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
