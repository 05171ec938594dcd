#!/usr/bin/env python3
"""Score Stele on the realistic evaluation sets in `eval/sets/` (docs/eval.md, "The realistic sets").

    python eval/run_sets.py                         # every set, both halves
    python eval/run_sets.py go-sdk --half tune -v   # one set, one half, failures explained
    python eval/run_sets.py --gate                  # exit 1 when a half does worse than its baseline (CI)
    python eval/run_sets.py --record                # write the figures as the new baseline
    python eval/run_sets.py --keep /tmp/sets        # keep the repositories to poke at

Each set is a record a new user wrote about a real public repository (`SOURCE.md` names it and its
commit) with prompts written before any tuning, split into `tune.yaml` and `heldout.yaml`. The runner
lays out a fresh git repository per set: the repository's paths from `tree.txt` as empty files (so
anchors resolve by path; no third-party code is kept here), `record/` as `docs/memory/`, then runs
`stele eval --json` on each half with the `stele` next to this Python (or `--stele`). On-topic is
every case but `offtopic`; the mean window counts on-topic cases, as `stele eval` does.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SETS = Path(__file__).resolve().parent / "sets"
TARGET = {"on": 90.0, "off": 97.0, "window": 6.0}  # what issue 26 asks of the held-out halves
# What `--gate` (and so .ci/run) holds each half to: its own figures when they were last recorded
# (`--record`, committed in baseline.json), less SLACK cases on each side and WINDOW_SLACK entries of
# mean window. A gate per half rather than one floor for all: a set written by a new user starts where
# Stele stands on it (two sets were added under any common floor), and a change that loses a case
# another way than it wins one still fails. A half with no recorded figures fails until it has some.
BASELINE = Path(__file__).resolve().parent / "baseline.json"
SLACK = 1
WINDOW_SLACK = 0.5
HALVES = ("tune", "heldout")


def run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)


def lay_out(src: Path, dest: Path, stele: str) -> None:
    """A git repository holding the set's tree (empty files) and its record."""
    dest.mkdir(parents=True)
    tree = src / "tree.txt"
    for line in (tree.read_text(encoding="utf-8").splitlines() if tree.is_file() else []):
        rel = line.strip()
        if not rel or rel.startswith("#") or ".." in Path(rel).parts or rel.startswith("/"):
            continue
        path = dest / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
    shutil.copytree(src / "record", dest / "docs" / "memory", dirs_exist_ok=True)
    git = ["git", "-c", "user.name=eval", "-c", "user.email=eval@example.invalid"]
    for cmd in (["git", "init", "-q"], [stele, "init"], ["git", "add", "-A"], git + ["commit", "-q", "-m", "record"]):
        r = run(cmd, dest)
        if r.returncode:
            sys.exit(f"{' '.join(cmd)} failed in {dest}:\n{r.stdout}{r.stderr}")


def score(root: Path, cases: Path, stele: str, verbose: bool) -> dict:
    env = {**os.environ, "STELE_RESIDENT": "0", "NO_COLOR": "1"}
    r = run([stele, "eval", str(cases), "--json"], root, env)
    if r.returncode not in (0, 1):
        sys.exit(f"stele eval {cases} failed:\n{r.stdout}{r.stderr}")
    report = json.loads(r.stdout)
    on = [c for c in report["cases"] if c["type"] != "offtopic"]
    off = [c for c in report["cases"] if c["type"] == "offtopic"]
    out = {"on": (sum(c["ok"] for c in on), len(on)), "off": (sum(c["ok"] for c in off), len(off)),
           "window": report["mean_window"], "failed": [c for c in report["cases"] if not c["ok"]]}
    if verbose:
        for c in out["failed"]:
            print(f"    FAIL {c['id']:<14} {c['type']:<10} {'; '.join(c['fails'])[:150]}")
            for line in c["why"][:4]:
                print(f"         {line[:150]}")
    return out


def pct(pair: tuple[int, int]) -> float:
    return 100.0 * pair[0] / pair[1] if pair[1] else 100.0


def under_baseline(base: dict | None, r: dict) -> str:
    """Why a half's figures fall under its baseline, or ''."""
    if base is None:
        return "no recorded baseline: run `eval/run_sets.py SET --record` and commit baseline.json"
    out = [f"{side}-topic {r[side][0]} < {base[side]} - {SLACK}" for side in ("on", "off")
           if r[side][0] < base[side] - SLACK]
    if r["window"] > base["window"] + WINDOW_SLACK:
        out.append(f"mean window {r['window']:.2f} > {base['window']} + {WINDOW_SLACK:g}")
    return "; ".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sets", nargs="*", help="set names (default: every folder in eval/sets)")
    ap.add_argument("--half", choices=HALVES, action="append", help="tune, heldout, or both (default)")
    ap.add_argument("--stele", default=str(Path(sys.executable).parent / "stele"))
    ap.add_argument("--keep", type=Path, help="build the repositories here and keep them")
    ap.add_argument("--gate", action="store_true", help="exit 1 when a half does worse than baseline.json (CI)")
    ap.add_argument("--record", action="store_true", help="write the figures of the halves run into baseline.json")
    ap.add_argument("-v", "--verbose", action="store_true", help="list failed cases with `why`")
    args = ap.parse_args()
    names = args.sets or sorted(p.name for p in SETS.iterdir() if (p / "record").is_dir())
    halves = args.half or list(HALVES)
    work = args.keep or Path(tempfile.mkdtemp(prefix="stele-sets-"))
    os.environ.setdefault("STELE_TODAY", "2026-12-01")
    bad = []
    base = json.loads(BASELINE.read_text(encoding="utf-8")) if BASELINE.is_file() else {}
    measured: dict[str, dict] = {}
    for name in names:
        root = work / name
        if not (root / ".git").is_dir():
            shutil.rmtree(root, ignore_errors=True)
            lay_out(SETS / name, root, args.stele)
        for half in halves:
            cases = SETS / name / f"{half}.yaml"
            print(f"{name} {half}:", flush=True)
            r = score(root, cases, args.stele, args.verbose)
            line = (f"  on-topic {r['on'][0]}/{r['on'][1]} ({pct(r['on']):.0f}%), off-topic {r['off'][0]}/{r['off'][1]} "
                    f"({pct(r['off']):.0f}%), mean window {r['window']:.1f}")
            print(line, flush=True)
            measured[f"{name}/{half}"] = {"on": r["on"][0], "off": r["off"][0], "window": round(r["window"], 2)}
            why = under_baseline(base.get(f"{name}/{half}"), r)
            if why:
                bad.append(f"{name} {half}: {why}")
            if half == "heldout" and (pct(r["on"]) < TARGET["on"] or pct(r["off"]) < TARGET["off"]
                                      or r["window"] > TARGET["window"]):
                print(f"  (under the target: on-topic >= {TARGET['on']:g}%, off-topic >= {TARGET['off']:g}%, "
                      f"mean window <= {TARGET['window']:g})")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    if args.record:
        BASELINE.write_text(json.dumps({**base, **measured}, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"recorded {len(measured)} halves in {BASELINE.name}")
    elif args.gate and bad:
        print(f"worse than the recorded baseline (by more than {SLACK} case or {WINDOW_SLACK:g} of mean window):",
              *bad, sep="\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
