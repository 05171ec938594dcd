#!/usr/bin/env python3
"""A record with no index recovers through its hooks alone (issue 15 point 3), in one command.

    .venv/bin/python bench/index_recovery.py                 # 10k facts, one prompt hook every 2 s
    .venv/bin/python bench/index_recovery.py --facts 50000 --every 2 --limit 300

Copies the generated record bench/out/rec-FACTS (made and indexed once by `bench/hook_floor.py` or
`bench/recall_bench.py` if missing) to a scratch folder, deletes its `.stele/index`, then starts
`stele hook prompt --harness claude` (a fresh process, a new session id, as Claude Code runs it) every
`--every` seconds until the index is whole: every fact file indexed and every fact embedded, checked
between hooks without touching the index (the session lines the hooks themselves log keep arriving).
Prints each hook's wall time and what it answered from, the longest hook, how long until the index was
whole, and then one `stele recall --json` of a fact's title (mode and time).
Targets: no hook over 3 s; whole within 90 s; recall in hybrid mode at once. The hooks' resident server
is stopped and the background builder waited for before the scratch copy is removed.
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
from hooks_bench import child_env  # noqa: E402
from recall_bench import PROMPTS  # noqa: E402

STELE = str(Path(sys.executable).parent / "stele")
WHOLE = """
import sys
from pathlib import Path
from stele.index import build
from stele.index.sources import scan
from stele.project import Project
p = Project(Path(sys.argv[1]))
facts = [x for x in scan(p).paths if x.startswith("docs/")]
try:
    cat = build.open_catalog(p)
except Exception:
    print("behind"); sys.exit()
indexed = {row[0] for row in cat.db.execute("SELECT path FROM files")}
unembedded = cat.db.execute("SELECT count(*) FROM items WHERE source = 'committed' AND vec_row IS NULL")
whole = (set(facts) <= indexed and cat.meta("model_id") and unembedded.fetchone()[0] == 0
         and cat.meta("vectors_done") == "1")
print("whole" if whole else "behind")
"""


STOP = """
import sys, time
from stele.cli.resident import client as resident
if resident.request(sys.argv[1], "stop") is not None:
    end = time.monotonic() + 20
    while resident.request(sys.argv[1], "status") is not None and time.monotonic() < end:
        time.sleep(0.1)
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--facts", type=int, default=10000)
    ap.add_argument("--every", type=float, default=2.0, help="seconds between hook starts")
    ap.add_argument("--limit", type=float, default=180.0, help="give up after this many seconds")
    args = ap.parse_args()
    source = HERE / "out" / f"rec-{args.facts}"
    env = child_env()
    env.pop("STELE_BACKGROUND", None)
    if not source.exists():
        subprocess.run([sys.executable, str(HERE / "gen_record.py"), str(args.facts), str(source)], check=True)
        subprocess.run([STELE, "init"], cwd=source, env=env, check=True, capture_output=True)
    tmp = Path(tempfile.mkdtemp(prefix="stele-recovery-"))
    repo = tmp / "repo"
    try:
        shutil.copytree(source, repo, ignore=shutil.ignore_patterns("index"), symlinks=True)
        print(f"record: {args.facts} facts, no .stele/index; load average {os.getloadavg()[0]:.1f} on "
              f"{os.cpu_count()} CPUs; a prompt hook every {args.every:g} s")
        t0 = time.monotonic()
        walls: list[float] = []
        cpus: list[float] = []
        whole_at = None
        n = 0
        while time.monotonic() - t0 < args.limit:
            slot = t0 + n * args.every
            time.sleep(max(0.0, slot - time.monotonic()))
            payload = {"session_id": f"recovery-{n}-{time.time_ns()}", "transcript_path": "/t", "cwd": str(repo),
                       "hook_event_name": "UserPromptSubmit", "prompt": PROMPTS[n % len(PROMPTS)]}
            start, cpu0 = time.monotonic(), _children_cpu()
            done = subprocess.run([STELE, "hook", "prompt", "--harness", "claude"], input=json.dumps(payload),
                                  cwd=repo, env=env, capture_output=True, text=True)
            wall = time.monotonic() - start
            walls.append(wall)
            cpus.append(_children_cpu() - cpu0)
            said = (done.stderr.strip().splitlines() or [""])[0][:100]
            shown = len(json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]) if done.stdout else 0
            print(f"  t={start - t0:6.1f} s  hook {wall:5.2f} s (CPU {cpus[-1]:4.2f} s)  context {shown:5d} chars  "
                  f"{said}")
            n += 1
            state = subprocess.run([sys.executable, "-c", WHOLE, str(repo)], capture_output=True, text=True,
                                   env=env).stdout.strip()
            if state == "whole":
                whole_at = time.monotonic() - t0
                break
        print(f"hooks: {len(walls)}, longest {max(walls):.2f} s (target <= 3 s), median {statistics.median(walls):.2f} "
              f"s; CPU (user + system) longest {max(cpus):.2f} s, median {statistics.median(cpus):.2f} s; load "
              f"average now {os.getloadavg()[0]:.1f}")
        print("index whole after " + (f"{whole_at:.1f} s of hooks alone (target <= 90 s)" if whole_at
                                      else f"more than {args.limit:g} s: NOT whole"))
        # a prompt made of one fact's title, so that the answer shows which search ran (the generated
        # record's random words reach no relevance floor for PROMPTS: `no_match` says nothing)
        prompt = _a_title(repo)
        t = time.monotonic()
        r = subprocess.run([STELE, "recall", "--json", prompt], cwd=repo, env=env, capture_output=True,
                           text=True)
        data = json.loads(r.stdout)
        print(f"stele recall {prompt[:50]!r}...: mode {data['mode']}, {len(data['entries'])} entries, "
              f"{(time.monotonic() - t) * 1000:.0f} ms wall (partial: {data['partial']})")
    finally:
        # the hooks' resident server, left running, would write the index back into a removed copy
        # (and then live on there): stop it, let the builder finish, then remove the copy
        subprocess.run([sys.executable, "-c", STOP, os.path.realpath(repo)], env=env, capture_output=True)
        for _ in range(3):  # a refresh forked by the server just before it stopped may still write
            _wait_for_builder(repo)
            shutil.rmtree(tmp, ignore_errors=True)
            if not tmp.exists():
                break
            time.sleep(1.0)
    return 0


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _a_title(repo: Path) -> str:
    for path in sorted((repo / "docs/memory/decisions").glob("*.md")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("title: "):
                return line[len("title: "):].strip('"').replace("`", "")
    return PROMPTS[1]


def _wait_for_builder(repo: Path, limit: float = 300.0) -> None:
    """The background builder holds build.lock while it works: wait until it lets go."""
    import fcntl

    lock = repo / ".stele/index/build.lock"
    if not lock.exists():
        return
    fd = os.open(lock, os.O_RDWR)
    try:
        end = time.monotonic() + limit
        while time.monotonic() < end:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except OSError:
                time.sleep(0.5)
    finally:
        os.close(fd)


if __name__ == "__main__":
    raise SystemExit(main())
