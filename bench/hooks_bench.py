"""Benchmark: `stele hook EVENT` as a harness runs it, one fresh process per call, on a large record.

    python bench/hooks_bench.py [--facts 10000] [--runs 30] [--keep DIR]

Builds the retrieval bench's synthetic record (`bench/gen_record.py`) of `--facts` facts in a throwaway
git repository (or reuses `--keep DIR`), builds the index once, then times each hook event `--runs`
times, each in a new `stele` process with a new session id (so nothing is skipped as already shown),
and prints p50 / p90 / max wall time and the median CPU time per event.
Results also go to bench/out/hooks.json. Timing is machine-dependent: compare runs on one machine.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from recall_bench import PROMPTS  # noqa: E402  (the retrieval bench's prompts, for comparable figures)

STELE = [str(Path(sys.executable).parent / "stele")]  # the console script a harness runs


def setup(root: Path, n: int) -> None:
    """The retrieval bench's synthetic record (bench/gen_record.py), initialised for Stele."""
    subprocess.run([sys.executable, str(HERE / "gen_record.py"), str(n), str(root)], check=True)
    subprocess.run([*STELE, "init"], cwd=root, check=True, capture_output=True)


def anchored_files(root: Path, limit: int = 10) -> list[str]:
    """Files that facts are anchored to (plain paths or symbols, not globs), for the edit hooks."""
    found: list[str] = []
    for path in sorted((root / "docs" / "memory").rglob("*.md")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("  - src/") and "*" not in line:
                found.append(line[4:].split("::")[0])
        if len(set(found)) >= limit:
            break
    return list(dict.fromkeys(found))[:limit]


def payloads(root: Path, run: int, files: list[str]) -> dict[str, dict]:
    base = {"session_id": f"bench-{run}-{time.time_ns()}", "transcript_path": "/tmp/t.jsonl",
            "cwd": str(root), "permission_mode": "default"}
    edit = {"tool_name": "Edit", "tool_input": {"file_path": str(root / files[run % len(files)]),
                                                "old_string": "a", "new_string": "b"}}
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
    env = dict(os.environ, STELE_TODAY="2026-11-29")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def context_of(out: str) -> str:
    """The context a Claude-format hook answer carries ("" for none)."""
    return json.loads(out or "{}").get("hookSpecificOutput", {}).get("additionalContext", "")


def p50_line(name: str, rows: list[tuple[float, float]], width: int = 10) -> str:
    """One side's wall and CPU p50 over its (wall ms, CPU ms) calls, as the A/B benches print them."""
    return (f"{name:<{width}} wall p50 {statistics.median(r[0] for r in rows):6.1f} ms  "
            f"cpu p50 {statistics.median(r[1] for r in rows):6.1f} ms  ({len(rows)} calls)")


# Child-script lines that time the freshness scan apart (the resident server's inotify watch replaces
# it): `scanned` collects its CPU ms per call. The script must have imported time and stele.index.build.
TIMED_SCAN = """
real_scan, scanned = build.scan, []
def timed_scan(project):
    c = time.process_time()
    try:
        return real_scan(project)
    finally:
        scanned.append((time.process_time() - c) * 1000)
build.scan = timed_scan
"""

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
            setup(root, args.facts)
        t0 = time.perf_counter()
        warm = subprocess.run([*STELE, "rebuild"], cwd=root, capture_output=True)
        print(f"index build (stele rebuild): {time.perf_counter() - t0:.1f} s (exit {warm.returncode})")
        ENV.update(child_env())
        results: dict[str, dict] = {}
        files = anchored_files(root)
        for event in ("session-start", "prompt", "pre-edit", "post-edit", "stop", "prompt after an edit"):
            times, cpus, sizes = [], [], []
            for run in range(args.runs):
                calls = payloads(root, run, files)
                if event == "prompt after an edit":  # the edit's log line must not cost the next prompt
                    time_call(root, "post-edit", calls["post-edit"])
                    ms, cpu, size = time_call(root, "prompt", calls["prompt"])
                else:
                    ms, cpu, size = time_call(root, event, calls[event])
                times.append(ms)
                cpus.append(cpu)
                sizes.append(size)
            times.sort()
            results[event] = {"p50_ms": round(statistics.median(times), 1),
                              "p90_ms": round(times[int(0.9 * (len(times) - 1))], 1),
                              "max_ms": round(times[-1], 1), "cpu_p50_ms": round(statistics.median(cpus), 1),
                              "mean_output_chars": round(statistics.mean(sizes))}
            r = results[event]
            print(f"{event:<20} wall p50 {r['p50_ms']:>7.1f} ms  p90 {r['p90_ms']:>7.1f}  "
                  f"max {r['max_ms']:>7.1f}  | cpu p50 {r['cpu_p50_ms']:>6.1f} ms  "
                  f"| output {r['mean_output_chars']} chars")
        out = HERE / "out"
        out.mkdir(exist_ok=True)
        summary = {"facts": args.facts, "runs": args.runs, "python": sys.version.split()[0],
                   "cpus": os.cpu_count(), "load_avg_1m": round(os.getloadavg()[0], 1), "events": results}
        print(f"load average (1 min): {summary['load_avg_1m']} on {os.cpu_count()} CPUs")
        (out / "hooks.json").write_text(json.dumps(summary, indent=2) + "\n")
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
