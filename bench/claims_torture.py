"""`kill -9` at random points of `stele task claim`, and what must hold after every kill.

Each trial starts `stele task claim TASK --json` (and, every third trial, a `stele task release` of a
claim it won) in its own process group and kills the whole group (git children included, so a kill
can land inside `git update-ref` or `git hash-object`) after a random delay spread over the
command's own run time. After each kill:

- the claim is readable: the ref points at a record that parses, and the claim history
  (`git log refs/stele/claims/TASK`) has strictly growing fencing tokens, newest first;
- nothing acknowledged is lost: a claim that printed its JSON before the kill is in that history;
- no lock is stuck: a checker claims the task (forcing a release first when it is held) and must
  be answered within STALE_LOCK_SECONDS plus a margin, with no `.lock` left behind;
- nothing is torn: every stored snapshot parses, every session log line but a last one parses,
  and no temporary file is left under docs/memory/ or .stele/snapshots/.

    .venv/bin/python bench/claims_torture.py --trials 200            # the long run
    .venv/bin/python bench/claims_torture.py --trials 8 --json       # what the test suite runs

Exit status 1 when any trial breaks a rule.
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from claims_cli import GIT_ENV, stele  # noqa: E402  (a sibling script, not a package)

SESSION = "torture-session"


def setup(base: Path) -> tuple[Path, str]:
    from stele.project import Project
    from stele.record.scaffold import init
    from stele.tasks import board

    root = base / "repo"
    root.mkdir()
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    init(Project(root))
    task = board.new_task(Project(root), "Tortured task").fact.id
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "record"], cwd=root, check=True, env=env)
    return root, task


def launch(root: Path, *args: str) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STELE_")}
    env["STELE_SESSION"] = SESSION
    return subprocess.Popen(stele() + list(args), cwd=root, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def kill_after(proc: subprocess.Popen, delay: float) -> tuple[bool, str, str]:
    """(finished before the kill, stdout, stderr)."""
    try:
        out, err = proc.communicate(timeout=delay)
        return True, out, err
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = proc.communicate()
        return False, out, err


def history(root: Path, task: str) -> list[tuple[str, dict | None]]:
    out = subprocess.run(["git", "log", "--format=%H%x00%B%x01", f"refs/stele/claims/{task}", "--"], cwd=root,
                         capture_output=True, text=True)
    if out.returncode != 0:
        return []  # never claimed yet
    found = []
    for chunk in out.stdout.split("\x01"):
        sha, _, body = chunk.strip("\n").partition("\x00")
        if not sha:
            continue
        try:
            found.append((sha, json.loads(body.strip().splitlines()[-1])))
        except (ValueError, IndexError):
            found.append((sha, None))
    return found


def check(root: Path, task: str, acknowledged: list[str], checker: int, kills: int) -> list[str]:
    problems = []
    past = history(root, task)
    if any(data is None for _, data in past):
        problems.append("a claim record in the history does not parse")
    tokens = [data["token"] for _, data in past if data]
    for newer, older in itertools.pairwise(tokens):  # newest first; a renewal or release keeps its token
        if newer < older:
            problems.append(f"fencing tokens go backwards in the history: {tokens[:6]}")
            break
    shas = {sha for sha, _ in past}
    lost = [sha for sha in acknowledged if sha not in shas]
    if lost:
        problems.append(f"acknowledged claims lost from the history: {lost[:3]}")

    # no stuck lock: a checker must get an answer, and then the task, within the stale-lock window
    from stele.gitrepo import STALE_LOCK_SECONDS

    t0 = time.monotonic()
    me = f"checker-{checker}"
    subprocess.run(stele() + ["task", "release", task, "--force", "--agent", me], cwd=root, capture_output=True,
                   timeout=60)
    got = subprocess.run(stele() + ["task", "claim", task, "--agent", me, "--json"], cwd=root,
                         capture_output=True, text=True, timeout=60)
    waited = time.monotonic() - t0
    if got.returncode != 0:
        problems.append(f"the checker could not claim after the kill: {got.stderr.strip()[:200]}")
    elif waited > STALE_LOCK_SECONDS + 20:
        problems.append(f"the checker waited {waited:.1f} s for the task")
    else:
        subprocess.run(stele() + ["task", "release", task, "--agent", me], cwd=root, capture_output=True,
                       timeout=60)
    common = root / ".git"
    stuck = list((common / "refs").rglob("*.lock"))
    if stuck:
        problems.append(f"lock files left: {[str(p.relative_to(root)) for p in stuck]}")

    for path in (root / ".stele" / "snapshots").glob("*"):
        if path.suffix != ".json":
            problems.append(f"a temporary file was left: {path.relative_to(root)}")
            continue
        try:
            json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            problems.append(f"a torn snapshot: {path.relative_to(root)}")
    for path in (root / "docs" / "memory").rglob("*"):
        if path.is_file() and not path.name.endswith(".md"):
            problems.append(f"a temporary file was left: {path.relative_to(root)}")
    for log in (root / ".stele" / "wal").glob("*.jsonl"):
        # a kill may cut the line being appended (readers skip it; the next append ends it with a newline
        # and starts on a fresh line): at most one torn line per kill, never a torn line of a write that
        # was acknowledged
        torn = 0
        for line in log.read_text(encoding="utf-8", errors="replace").split("\n"):
            try:
                if line:
                    json.loads(line)
            except ValueError:
                torn += 1
        if torn > kills:
            problems.append(f"{torn} torn session lines in {log.name} after {kills} kills")
    return problems


def warm_up(root: Path, task: str) -> float:
    """One whole claim and release (the first builds the index): how long a claim takes here, now."""
    for _ in range(2):
        t0 = time.perf_counter()
        subprocess.run(stele() + ["task", "claim", task, "--agent", "warm-up"], cwd=root, capture_output=True,
                       check=True)
        took = time.perf_counter() - t0
        subprocess.run(stele() + ["task", "release", task, "--agent", "warm-up"], cwd=root, capture_output=True,
                       check=True)
    return took


def run(trials: int, seed: int, max_delay: float | None) -> dict:
    rng = random.Random(seed)
    tmp = Path(tempfile.mkdtemp(prefix="stele-claims-torture-"))
    broken, killed, finished, acknowledged, locks_left = [], 0, 0, [], 0
    t_start = time.perf_counter()
    try:
        root, task = setup(tmp)
        max_delay = max_delay or 1.3 * warm_up(root, task)  # kills spread over a claim's whole run
        for n in range(trials):
            agent = f"victim-{n % 4}"
            done, out, _ = kill_after(launch(root, "task", "claim", task, "--agent", agent, "--json"),
                                      rng.uniform(0, max_delay))
            if done and out:
                finished += 1
                acknowledged.append(json.loads(out)["claim"]["sha"])
                if n % 3 == 0:  # kill a release too
                    done, _, _ = kill_after(launch(root, "task", "release", task, "--agent", agent),
                                            rng.uniform(0, max_delay / 2))
            killed += not done
            locks_left += any((root / ".git" / "refs").rglob("*.lock"))  # the checker must get past these
            broken += [f"trial {n}: {p}" for p in check(root, task, acknowledged, n, killed)]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {"trials": trials, "killed": killed, "finished": finished, "locks_left_by_a_kill": locks_left,
            "ok_trials": trials - len({b.split(":")[0] for b in broken}), "broken": broken[:10],
            "max_delay_s": round(max_delay or 0, 2), "seconds": round(time.perf_counter() - t_start, 1)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--seed", type=int, default=15)
    ap.add_argument("--max-delay", type=float, default=None,
                    help="kill within this many seconds of the start (default: 1.3 x a claim's time here)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    result = run(args.trials, args.seed, args.max_delay)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"{result['trials']} trials in {result['seconds']} s (kills within {result['max_delay_s']} s): {result['killed']} processes killed mid-way, "
              f"{result['finished']} claims finished first, "
              f"{result['locks_left_by_a_kill']} kills left a ref lock; "
              f"{result['ok_trials']}/{result['trials']} kept every rule")
        for line in result["broken"]:
            print("BROKEN", line)
    return 0 if not result["broken"] else 1


if __name__ == "__main__":
    sys.exit(main())
