"""`stele task claim` as agents run it: fresh processes racing for one task, round after round.

Every round starts N `stele task claim TASK --json` processes at once (the console script, through
the real entry point). Exactly one must exit 0; every other must exit 1 with one line naming the
winner and when it took the task (`held by AGENT ... since T`). The round's time is from the first
start to the last answer; the winner's snapshot is timed apart (it is built only after the claim is
decided, and only by the winner), from the `elapsed_ms` of its JSON. The winner then releases.

Before the race, `--solo` uncontended claims are timed the same way: the process's wall time minus
its snapshot is the claim; the snapshot is reported separately.

    .venv/bin/python bench/claims_cli.py --racers 16 --rounds 200          # the issue-15 target run
    .venv/bin/python bench/claims_cli.py --racers 16 --rounds 5 --json     # what the test suite runs

Exit status 1 when any round breaks the rules.
"""
from __future__ import annotations

import argparse
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
from pathlib import Path

HERE = Path(__file__).resolve().parent
GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid"}
LOST = re.compile(r"^stele: (?P<task>\S+) is held by (?P<agent>\S+) \(.*\) since (?P<since>\S+), lease until "
                  r"\S+ \(token (?P<token>\d+)\)$")


def stele() -> list[str]:
    """The console script next to this interpreter (what a harness runs), else `python -m stele`."""
    script = Path(sys.executable).with_name("stele")
    return [str(script)] if script.exists() else [sys.executable, "-m", "stele"]


def setup(base: Path, facts: int) -> tuple[Path, str]:
    """A repository with a generated record of `facts` facts (0: an empty one) and one open task."""
    from stele.project import Project
    from stele.record.scaffold import init
    from stele.tasks import board

    root = base / "repo"
    if facts:
        subprocess.run([sys.executable, str(HERE / "gen_record.py"), str(facts), str(root)], check=True,
                       capture_output=True)
    else:
        root.mkdir()
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    if not (root / ".stele" / "config.yaml").exists():
        init(Project(root))
    task = board.new_task(Project(root), "Contended task", body="Raced by every agent at once.").fact.id
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "record"], cwd=root, check=True, env=env)
    subprocess.run(stele() + ["rebuild"], cwd=root, check=True, capture_output=True)  # the winner's index
    return root, task


def start(root: Path, *args: str) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STELE_")}
    return subprocess.Popen(stele() + list(args), cwd=root, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def children_cpu_ms() -> float:
    """User + system CPU of every child reaped so far (`communicate` reaps them)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (used.ru_utime + used.ru_stime) * 1000


def solo(root: Path, task: str, runs: int) -> dict:
    """Uncontended claims: claim, note the times, release."""
    claim_ms, snapshot_ms, process_ms, cpu_ms = [], [], [], []
    for n in range(runs):
        t0, cpu0 = time.perf_counter(), children_cpu_ms()
        proc = start(root, "task", "claim", task, "--agent", "solo", "--json")
        out, err = proc.communicate(timeout=120)
        wall = (time.perf_counter() - t0) * 1000
        cpu_ms.append(children_cpu_ms() - cpu0)
        if proc.returncode != 0:
            raise SystemExit(f"solo claim {n} failed: {err.strip()}")
        timing = json.loads(out)["elapsed_ms"]
        process_ms.append(wall)
        snapshot_ms.append(timing["snapshot_ms"])
        claim_ms.append(wall - timing["snapshot_ms"])
        subprocess.run(stele() + ["task", "release", task, "--agent", "solo"], cwd=root, check=True,
                       capture_output=True)
    return {"claim_ms_p50": round(statistics.median(claim_ms)), "claim_ms_max": round(max(claim_ms)),
            "snapshot_ms_p50": round(statistics.median(snapshot_ms)),
            "process_ms_p50": round(statistics.median(process_ms)),
            "process_cpu_ms_p50": round(statistics.median(cpu_ms))}


def finish(proc: subprocess.Popen) -> tuple[int, str, str, float]:
    """Exit status, output and the CPU (user + system, its git calls included) of one process: read
    both pipes to the end (stderr is one line), then reap it with wait4 for its own resource usage."""
    out = proc.stdout.read()  # type: ignore[union-attr]
    err = proc.stderr.read()  # type: ignore[union-attr]
    _, status, used = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, out, err, (used.ru_utime + used.ru_stime) * 1000


def race(root: Path, task: str, racers: int, rounds: int) -> tuple[list[str], list[dict]]:
    broken, rows = [], []
    for r in range(rounds):
        t0, cpu0 = time.perf_counter(), children_cpu_ms()
        procs = [start(root, "task", "claim", task, "--agent", f"agent-{i:02d}", "--json") for i in range(racers)]
        answers, cpu = [], []
        for i, proc in enumerate(procs):
            code, out, err, used = finish(proc)
            answers.append((i, code, out, err, (time.perf_counter() - t0) * 1000))
            cpu.append(used)
        round_cpu = children_cpu_ms() - cpu0  # the 16 processes and their git calls, the snapshot included
        winners = [a for a in answers if a[1] == 0]
        losers = [a for a in answers if a[1] != 0]
        if len(winners) != 1:
            broken.append(f"round {r}: {len(winners)} winners; exits {[a[1] for a in answers]}; "
                          f"first error: {next((a[3].strip() for a in losers), '')[:200]}")
            _release_all(root, task, racers)
            continue
        won = json.loads(winners[0][2])
        agent, since, token = won["claim"]["agent"], won["claim"]["since"], won["claim"]["token"]
        for i, code, _, err, _ in losers:
            m = LOST.match(err.strip())
            if code != 1 or m is None or (m["agent"], m["since"], int(m["token"])) != (agent, since, token):
                broken.append(f"round {r}: loser agent-{i:02d} (exit {code}) was told {err.strip()[:200]!r}; "
                              f"the winner is {agent} since {since} (token {token})")
                break
        # every loser has been answered when the last of them exits; the winner goes on to its snapshot
        answered = max((a[4] for a in losers), default=0.0)
        rows.append({"answered_ms": answered, "winner_ms": winners[0][4],
                     "winner_claim_ms": won["elapsed_ms"]["claim_ms"],
                     "snapshot_ms": won["elapsed_ms"]["snapshot_ms"],
                     "round_ms": max(answered, winners[0][4] - won["elapsed_ms"]["snapshot_ms"]),
                     "round_cpu_ms": round_cpu,
                     "loser_cpu_ms": statistics.median(c for a, c in zip(answers, cpu, strict=True) if a[1] != 0),
                     "winner_cpu_ms": next(c for a, c in zip(answers, cpu, strict=True) if a[1] == 0)})
        released = subprocess.run(stele() + ["task", "release", task, "--agent", agent], cwd=root,
                                  capture_output=True, text=True)
        if released.returncode != 0:
            broken.append(f"round {r}: the winner could not release: {released.stderr.strip()}")
    return broken, rows


def _release_all(root: Path, task: str, racers: int) -> None:
    for i in range(racers):
        subprocess.run(stele() + ["task", "release", task, "--agent", f"agent-{i:02d}"], cwd=root,
                       capture_output=True)


def summary(rows: list[dict], key: str) -> dict:
    values = sorted(r[key] for r in rows) or [0.0]
    return {"p50": round(statistics.median(values)), "p95": round(values[max(0, int(len(values) * 0.95) - 1)]),
            "max": round(values[-1])}


def run(racers: int, rounds: int, solo_runs: int, facts: int) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="stele-claims-cli-"))
    try:
        root, task = setup(tmp, facts)
        load_before = os.getloadavg()[0]
        alone = solo(root, task, solo_runs) if solo_runs else {}
        broken, rows = race(root, task, racers, rounds)
        load_after = os.getloadavg()[0]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # git may still be writing a pack in the background
    return {"racers": racers, "rounds": rounds, "facts": facts, "ok_rounds": rounds - len(broken),
            "broken": broken[:10], "solo": alone,
            "round_ms": summary(rows, "round_ms"), "losers_answered_ms": summary(rows, "answered_ms"),
            "winner_claim_ms": summary(rows, "winner_claim_ms"), "snapshot_ms": summary(rows, "snapshot_ms"),
            "round_cpu_ms": summary(rows, "round_cpu_ms"), "loser_cpu_ms": summary(rows, "loser_cpu_ms"),
            "winner_cpu_ms": summary(rows, "winner_cpu_ms"),
            "rounds_over_3s": sum(1 for r in rows if r["round_ms"] > 3000),
            "load_average": [round(load_before, 1), round(load_after, 1)], "cpus": os.cpu_count()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--racers", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--solo", type=int, default=10, help="uncontended claims timed before the race")
    ap.add_argument("--facts", type=int, default=80, help="size of the generated record (0: empty)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    result = run(args.racers, args.rounds, args.solo, args.facts)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"{result['racers']} racers x {result['rounds']} rounds on a {result['facts']}-fact record: "
              f"{result['ok_rounds']}/{result['rounds']} rounds with exactly one winner and every loser told "
              f"who and since when")
        print("round (to every claim decided), ms: p50 {p50}, p95 {p95}, max {max}".format(**result["round_ms"])
              + f"; rounds over 3 s: {result['rounds_over_3s']}")
        print("last loser answered, ms: p50 {p50}, p95 {p95}, max {max}".format(**result["losers_answered_ms"]))
        print("winner's snapshot (apart), ms: p50 {p50}, p95 {p95}, max {max}".format(**result["snapshot_ms"]))
        print("CPU of a round (every process and its git calls, snapshot included), ms: p50 {p50}, p95 {p95}, "
              "max {max}".format(**result["round_cpu_ms"])
              + f", i.e. p50 {result['round_cpu_ms']['p50'] / max(1, result['racers']):.0f} ms a process")
        print("CPU of one loser (the round's median), ms: p50 {p50}, p95 {p95}, max {max}".format(
            **result["loser_cpu_ms"]) + "; of the winner, its snapshot included: p50 {p50}".format(
            **result["winner_cpu_ms"]))
        if result["solo"]:
            s = result["solo"]
            print(f"uncontended claim, fresh process: p50 {s['claim_ms_p50']} ms (max {s['claim_ms_max']}) "
                  f"plus its snapshot p50 {s['snapshot_ms_p50']} ms; CPU of the process p50 "
                  f"{s['process_cpu_ms_p50']} ms")
        la = result["load_average"]
        print(f"load average {la[0]} at the start, {la[1]} at the end, on {result['cpus']} CPUs")
        for line in result["broken"]:
            print("BROKEN", line)
    return 0 if not result["broken"] else 1


if __name__ == "__main__":
    sys.exit(main())
