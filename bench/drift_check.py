#!/usr/bin/env python3
"""What the freshness labels cost a hook (anchors/drift.py, retrieve/fresh.py), in-process CPU time.

    .venv/bin/python bench/drift_check.py              # 20 anchored facts (a full recall window)
    .venv/bin/python bench/drift_check.py --facts 200

A fresh git repository with one Python module per fact (40 functions each), a fact anchored to one
function in each with its fingerprint recorded, the index built. Then `fresh.check` over every fact,
as the prompt and pre-edit hooks call it, in these states (CPU p50 of --runs calls, and the wall time; each "cold"
call first deletes `.stele/index/drift.json`):

- fresh, cold: no anchored code changed, no cache (a file read, a SHA-1 and a parse per file)
- fresh, warm: the same with the fingerprints cached by blob id (a file read and a SHA-1 per file)
- drifted, cold: half of the functions changed in two commits since; git asked for each (after a
  commit, the first hook pays this once)
- drifted, warm: the same answered from the cache (every later hook until HEAD moves)
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STELE = str(Path(sys.executable).parent / "stele")


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def module(n: int, variant: int = 0) -> str:
    out = []
    for f in range(40):
        extra = f"    total += {variant}\n" if f == 7 and variant else ""
        out.append(f"def fn_{n}_{f}(items):\n    total = 0\n    for x in items:\n        total += x * {f}\n"
                   f"{extra}    return total\n\n\n")
    return "".join(out)


def setup(root: Path, facts: int) -> list[str]:
    from stele.anchors.fingerprint import of_symbol

    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@x"}
    os.environ.update(env)
    git(root, "init", "-q", "-b", "main")
    subprocess.run([STELE, "init"], cwd=root, check=True, capture_output=True)
    (root / "src").mkdir()
    ids = []
    for n in range(facts):
        text = module(n)
        (root / f"src/m{n}.py").write_text(text)
        fid = f"DEC-{n:04d}"
        ids.append(fid)
        anchor = f"src/m{n}.py::fn_{n}_7"
        folder = root / "docs/memory/decisions"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{fid}.md").write_text(
            f"---\nid: {fid}\nkind: decision\ntitle: Totals of module {n} weigh each item\nstatus: current\n"
            f"anchors:\n  - {anchor}\ncreated: 2026-11-01\nverified: 2026-11-20\nfingerprints:\n"
            f"  {anchor}: {of_symbol(text, f'fn_{n}_7', f'src/m{n}.py')}\n---\nEach item counts {n} times.\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "code and record")
    subprocess.run([STELE, "rebuild"], cwd=root, check=True, capture_output=True)
    return ids


def drift_half(root: Path, facts: int) -> None:
    for variant in (1, 2):
        for n in range(0, facts, 2):
            (root / f"src/m{n}.py").write_text(module(n, variant))
        git(root, "commit", "-q", "-am", f"change {variant}")


def measure(root: Path, ids: list[str], runs: int, cold: bool) -> tuple[float, float, int]:
    from stele.delivery import today
    from stele.index.build import open_catalog
    from stele.project import Project
    from stele.retrieve.fresh import check

    project = Project(root)
    times, walls, drifted = [], [], 0
    for _ in range(runs):
        if cold:
            (root / ".stele/index/drift.json").unlink(missing_ok=True)
        catalog = open_catalog(project)
        t0, w0 = time.process_time(), time.perf_counter()
        found = check(project, catalog, ids, today())
        times.append((time.process_time() - t0) * 1000)
        walls.append((time.perf_counter() - w0) * 1000)
        catalog.close()
        drifted = sum(1 for f in found.values() if f.drift is not None)
    return statistics.median(times), statistics.median(walls), drifted


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--facts", type=int, default=20)
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ids = setup(root, args.facts)
        rows = [("fresh, cold", *measure(root, ids, args.runs, True)),
                ("fresh, warm", *measure(root, ids, args.runs, False))]
        drift_half(root, args.facts)
        rows += [("drifted, cold", *measure(root, ids, args.runs, True)),
                 ("drifted, warm", *measure(root, ids, args.runs, False))]
    print(f"{args.facts} anchored facts, fresh.check p50 of {args.runs} calls (load {os.getloadavg()[0]:.1f}); "
          "CPU is this process's (git's own CPU is in the wall time)")
    for name, ms, wall, drifted in rows:
        print(f"  {name:<14} CPU {ms:7.1f} ms   wall {wall:7.1f} ms   ({drifted} drifted)")


if __name__ == "__main__":
    main()
