"""Stele's hook times as the real harnesses observe them, on the scripted turn of tests/e2e.

    python bench/harness_hooks.py [--runs 3] [claude gemini copilot]

Each harness reports its own hook timings somewhere, and that is what is read (not a timer of ours):
Claude Code's stream-json `hook_started`/`hook_response` events (the time between the two lines as
they arrive), Gemini CLI's local telemetry (`gemini_cli.hook_call` `duration_ms`), Copilot CLI's
session events (`hook.start`/`hook.end` timestamps in `events.jsonl`). Codex 0.171.0 reports no hook
timing in `codex exec --json`, its logs or its rollout files, so it is left out. Medians per event.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.e2e import drivers  # noqa: E402


def claude(run, work) -> list[tuple[str, float]]:
    started, out = {}, []
    for event, at in zip((e for e in run.events), run.line_times[: len(run.events)]):
        if event.get("subtype") == "hook_started":
            started[event.get("hook_id")] = (event.get("hook_name", "").split(":")[0], at)
        elif event.get("subtype") == "hook_response" and event.get("hook_id") in started:
            name, t0 = started.pop(event["hook_id"])
            out.append((name, (at - t0) * 1000))
    return out


def gemini(run, work) -> list[tuple[str, float]]:
    text = (work / "telemetry.log").read_text(encoding="utf-8", errors="replace")
    out = []
    for m in re.finditer(r'"hook_event_name":\s*"(\w+)"', text):
        near = text[max(0, m.start() - 400): m.start() + 600]
        d = re.search(r'"duration_ms":\s*([\d.]+)', near)
        if d:
            out.append((m.group(1), float(d.group(1))))
    return out


def copilot(run, work) -> list[tuple[str, float]]:
    starts, out = {}, []
    for path in (work / "home-copilot" / ".copilot" / "session-state").glob("*/events.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            e = json.loads(line)
            if e.get("type") not in ("hook.start", "hook.end"):
                continue
            at = datetime.fromisoformat(e["timestamp"].replace("Z", "+00:00")).timestamp()
            key = e["data"]["hookInvocationId"]
            if e["type"] == "hook.start":
                starts[key] = (e["data"]["hookType"], at)
            elif key in starts:
                name, t0 = starts.pop(key)
                out.append((name, (at - t0) * 1000))
    return out


READERS = {"claude": claude, "gemini": gemini, "copilot": copilot}


def telemetry_on(work: Path):
    original = drivers.Gemini.configure

    def configure(self, home, root, server, env):
        cmd = original(self, home, root, server, env)
        settings = home / ".gemini" / "settings.json"
        data = json.loads(settings.read_text())
        data["telemetry"] = {"enabled": True, "target": "local", "outfile": str(work / "telemetry.log")}
        settings.write_text(json.dumps(data))
        return cmd

    drivers.Gemini.configure = configure


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("harness", nargs="*", default=list(READERS))
    args = ap.parse_args()
    times: dict[tuple[str, str], list[float]] = defaultdict(list)
    template = Path(tempfile.mkdtemp(prefix="stele-bench-demo-")) / "harbor"
    subprocess.run([str(Path(sys.executable).parent / "stele"), "demo", "--keep", str(template)], check=True,
                   capture_output=True)
    for name in args.harness:
        for _ in range(args.runs):
            work = Path(tempfile.mkdtemp(prefix=f"stele-bench-{name}-"))
            try:
                shutil.copytree(template, work / "repo", symlinks=True)
                telemetry_on(work)
                run = drivers.run_turn(name, work / "repo", work)
                for event, ms in READERS[name](run, work):
                    times[(name, event)].append(ms)
            finally:
                shutil.rmtree(work, ignore_errors=True)
    print("| harness | event | runs | median ms |\n|---|---|---|---|")
    for (name, event), values in sorted(times.items()):
        print(f"| {name} | {event} | {len(values)} | {statistics.median(values):.0f} |")
    shutil.rmtree(template.parent, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
