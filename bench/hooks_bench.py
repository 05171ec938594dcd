"""Benchmark: `stele hook EVENT` as a harness runs it, one fresh process per call, on a large record.

    python bench/hooks_bench.py [--facts 10000] [--runs 30] [--keep DIR]

Builds a synthetic record of `--facts` facts in a throwaway git repository (or reuses `--keep DIR`),
builds the index once, then times each hook event `--runs` times, each in a new `stele` process with a
new session id (so nothing is skipped as already shown), and prints p50 / p90 / max wall time and the median CPU time per event.
Results also go to bench/out/hooks.json. Timing is machine-dependent: compare runs on one machine.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
STELE = [sys.executable, "-m", "stele"]
WORDS = ("auth limiter cache queue billing checkout retry token session index model hook anchor graph walk "
         "invoice payment webhook migration schema tenant export import search render deploy rollback "
         "timeout budget backoff lease claim commit branch review merge release config secret").split()
KINDS = ("decision", "risk", "lesson", "note", "constraint", "instruction", "task", "fyi", "architecture")
PROMPTS = [
    "Why does the rate limiter run before the auth middleware, and can I move it?",
    "How should retries back off when the payment webhook times out?",
    "What did we decide about tenant exports and the schema migration?",
    "Is there a known problem with cache invalidation after a rollback?",
]


def build_record(root: Path, n: int, seed: int = 7) -> None:
    """`n` facts of mixed kinds with links, anchors and a few always-delivered rules."""
    from stele.kinds import KINDS as ALL

    rng = random.Random(seed)
    ids: list[str] = []
    for i in range(n):
        kind = rng.choice(KINDS)
        fid = f"{ALL[kind].prefix}-{i:05d}"
        title = " ".join(rng.choices(WORDS, k=rng.randint(4, 9))).capitalize()
        body = " ".join(rng.choices(WORDS, k=rng.randint(30, 120))) + "."
        lines = [f"id: {fid}", f"kind: {kind}", f"title: {title}"]
        if kind == "task":
            lines.append("status: " + rng.choice(("open", "done", "in-progress", "done", "done")))
        if kind in ("instruction", "constraint") and rng.random() < 0.02:
            lines.append("delivery: always")
        if rng.random() < 0.3:
            lines.append(f"anchors:\n  - src/{rng.choice(WORDS)}/{rng.choice(WORDS)}.py")
        if ids and rng.random() < 0.5:
            rel = rng.choice(("relates-to", "caused-by", "blocks", "part-of"))
            lines.append(f"links:\n  {rel}: [{rng.choice(ids)}]")
        path = root / "docs" / "memory" / ALL[kind].folder / f"{fid}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("---\n" + "\n".join(lines) + f"\n---\n{body}\n", encoding="utf-8")
        ids.append(fid)


def setup(root: Path, n: int) -> None:
    root.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run([*STELE, "init"], cwd=root, check=True, capture_output=True)
    build_record(root, n)


def payloads(root: Path, run: int) -> dict[str, dict]:
    base = {"session_id": f"bench-{run}-{time.time_ns()}", "transcript_path": "/tmp/t.jsonl", "cwd": str(root),
            "permission_mode": "default"}
    edit = {"tool_name": "Edit", "tool_input": {"file_path": str(root / "src/auth/cache.py"), "old_string": "a",
                                                "new_string": "b"}}
    return {
        "session-start": {**base, "hook_event_name": "SessionStart", "source": "startup"},
        "prompt": {**base, "hook_event_name": "UserPromptSubmit", "prompt": PROMPTS[run % len(PROMPTS)]},
        "pre-edit": {**base, "hook_event_name": "PreToolUse", **edit},
        "post-edit": {**base, "hook_event_name": "PostToolUse", **edit, "tool_response": {}},
        "stop": {**base, "hook_event_name": "Stop", "stop_hook_active": False},
    }


def child_env() -> dict[str, str]:
    """The environment of a real install: bytecode caches written and used (PYTHONDONTWRITEBYTECODE,
    common in sandboxes, would make every hook process recompile Stele from source)."""
    import compileall

    import stele

    compileall.compile_dir(str(Path(stele.__file__).parent), quiet=1)
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


ENV: dict[str, str] = {}


def time_call(root: Path, event: str, payload: dict) -> tuple[float, float, int]:
    """(wall ms, CPU ms of the child: user + system, output characters) of one hook process.
    CPU time is reported too because wall time on a shared, loaded machine mostly measures the load."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([*STELE, "hook", event, "--harness", "claude"], input=json.dumps(payload), cwd=root,
                          capture_output=True, text=True, env=ENV or None)
    elapsed = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    if done.returncode != 0 or done.stderr:
        raise SystemExit(f"stele hook {event} failed: {done.stderr.strip()}")
    return elapsed, cpu, len(done.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--facts", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--keep", type=Path, help="build (or reuse) the repository here")
    args = ap.parse_args()
    tmp = None if args.keep else Path(tempfile.mkdtemp(prefix="stele-hooks-bench-"))
    root = args.keep or tmp / "repo"
    try:
        if not (root / ".stele").is_dir():
            t0 = time.perf_counter()
            setup(root, args.facts)
            print(f"record: {args.facts} facts written in {time.perf_counter() - t0:.1f} s")
        t0 = time.perf_counter()
        warm = subprocess.run([*STELE, "rebuild"], cwd=root, capture_output=True)
        print(f"index build (stele rebuild): {time.perf_counter() - t0:.1f} s (exit {warm.returncode})")
        ENV.update(child_env())
        results: dict[str, dict] = {}
        for event in ("session-start", "prompt", "pre-edit", "post-edit", "stop"):
            times, cpus, sizes = [], [], []
            for run in range(args.runs):
                ms, cpu, size = time_call(root, event, payloads(root, run)[event])
                times.append(ms)
                cpus.append(cpu)
                sizes.append(size)
            times.sort()
            results[event] = {"p50_ms": round(statistics.median(times), 1),
                              "p90_ms": round(times[int(0.9 * (len(times) - 1))], 1),
                              "max_ms": round(times[-1], 1), "cpu_p50_ms": round(statistics.median(cpus), 1),
                              "mean_output_chars": round(statistics.mean(sizes))}
            r = results[event]
            print(f"{event:<14} wall p50 {r['p50_ms']:>7.1f} ms  p90 {r['p90_ms']:>7.1f}  max {r['max_ms']:>7.1f}"
                  f"  | cpu p50 {r['cpu_p50_ms']:>6.1f} ms  | output {r['mean_output_chars']} chars")
        out = HERE / "out"
        out.mkdir(exist_ok=True)
        summary = {"facts": args.facts, "runs": args.runs, "python": sys.version.split()[0], "cpus": os.cpu_count(),
                   "load_avg_1m": round(os.getloadavg()[0], 1), "events": results}
        print(f"load average (1 min): {summary['load_avg_1m']} on {os.cpu_count()} CPUs")
        (out / "hooks.json").write_text(json.dumps(summary, indent=2) + "\n")
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
