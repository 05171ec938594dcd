"""`stele doctor` on a large record: wall and CPU time per fresh process, and a digest of the findings.

Each run is timed twice, interleaved: without the parse cache (`STELE_PARSE_CACHE=0`: what a fresh
clone, such as CI's, does) and with the cache the previous run left (a second run in a working copy).

The record is `gen_record.py`'s (facts of every kind with edges, anchors, lifecycle), committed, with
source files for a share of its anchors so that both resolving and broken anchors are checked. The
digest (sha256 of the sorted findings) is how "same findings" is checked across versions: run this
script at two commits on the same seed and compare the digests.

    .venv/bin/python bench/doctor_bench.py --facts 10000 --runs 5
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid"}


def stele() -> list[str]:
    script = Path(sys.executable).with_name("stele")
    return [str(script)] if script.exists() else [sys.executable, "-m", "stele"]


def setup(base: Path, facts: int) -> Path:
    root = base / "repo"
    subprocess.run([sys.executable, str(HERE / "gen_record.py"), str(facts), str(root)], check=True,
                   capture_output=True)
    # every third anchored source file exists, with the symbols anchored in it
    symbols: dict[str, set[str]] = {}
    for path in (root / "docs" / "memory").rglob("*.md"):
        for m in re.finditer(r"^  - (\S+?)(?:::(\S+))?$", path.read_text(encoding="utf-8"), re.M):
            file, symbol = m.group(1), m.group(2)
            if "*" not in file and file.endswith(".py"):
                symbols.setdefault(file, set()).update([symbol] if symbol else [])
    for n, (file, names) in enumerate(sorted(symbols.items())):
        if n % 3:
            continue
        target = root / file
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("".join(f"def {s.split('.')[-1]}():\n    return {i}\n\n" for i, s in
                                  enumerate(sorted(names))) or "X = 1\n", encoding="utf-8")
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "sources"], cwd=root, check=True, env=env)
    return root


def timed(root: Path, cached: bool) -> tuple[float, float, dict]:
    """One fresh `stele doctor --json`: without the parse cache (a fresh clone, as in CI), or with
    the cache the run before it left (a second run in a working copy)."""
    env = {**os.environ, "STELE_TODAY": "2026-11-29"}
    if not cached:
        env["STELE_PARSE_CACHE"] = "0"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(stele() + ["doctor", "--json"], cwd=root, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode not in (0, 1):
        raise SystemExit(f"stele doctor failed: {out.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, json.loads(out.stdout)


def digest(report: dict) -> str:
    rows = sorted(json.dumps(f, sort_keys=True) for f in report["findings"])
    return hashlib.sha256("\n".join(rows).encode()).hexdigest()[:16]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--facts", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--keep", type=Path, help="keep the generated repository here (reused if it exists)")
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="stele-doctor-"))
    try:
        root = args.keep if args.keep and args.keep.exists() else setup(args.keep.parent if args.keep else tmp,
                                                                          args.facts)
        if args.keep and root != args.keep:
            shutil.move(str(root), str(args.keep))
            root = args.keep
        walls: dict[bool, list[float]] = {False: [], True: []}
        cpus: dict[bool, list[float]] = {False: [], True: []}
        digests = set()
        timed(root, True)  # leaves the parse cache of this record
        for _ in range(args.runs):
            for cached in (False, True):  # interleaved: a change of load hits both alike
                wall, cpu, report = timed(root, cached)
                walls[cached].append(wall)
                cpus[cached].append(cpu)
                digests.add(digest(report))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    checks = Counter(f["check"] for f in report["findings"])
    print(f"stele doctor on {args.facts} facts, {args.runs} fresh processes each (load average "
          f"{os.getloadavg()[0]:.2f}):")
    for cached, label in ((False, "no parse cache (a fresh clone, CI)"), (True, "parse cache warm")):
        print(f"  {label}: wall p50 {statistics.median(walls[cached]):.2f} s (min {min(walls[cached]):.2f}), "
              f"CPU p50 {statistics.median(cpus[cached]):.2f} s")
    print(f"findings: {report['errors']} errors, {report['warnings']} warnings "
          f"({', '.join(f'{k} {v}' for k, v in sorted(checks.items()))}); digest {'/'.join(sorted(digests))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
