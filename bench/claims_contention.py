"""Claim contention: N processes claim one task at the same instant, round after round.

Every round must have exactly one winner, and every loser must be told who won (the winner's agent
and fencing token). The winner releases before the next round, so the fencing token must also grow
by exactly one per round. Processes are spread over several worktrees of one clone (claims live in the
git common dir), or with --remote over several clones of one bare remote (the remote decides).

    .venv/bin/python bench/claims_contention.py                      # 16 processes x 1000 rounds
    .venv/bin/python bench/claims_contention.py --rounds 50 --json
    .venv/bin/python bench/claims_contention.py --remote --clones 2 --workers 8 --rounds 100

Exit status 1 when any round breaks the rules. The test suite runs this script with few rounds.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import multiprocessing as mp
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid"}


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env).stdout


def setup(base: Path, places: int, remote: bool) -> tuple[list[Path], str, str | None]:
    """A repository with one task; returns the roots the workers use, the task id and the remote."""
    from stele.project import Project
    from stele.record.scaffold import init
    from stele.tasks import board

    main = base / "main"
    main.mkdir()
    git(main, "init", "-q", "-b", "main")
    init(Project(main))
    task = board.new_task(Project(main), "Contended task").fact.id
    git(main, "add", "-A")
    git(main, "commit", "-q", "-m", "record")
    if not remote:
        roots = [main]
        for n in range(1, places):
            git(main, "worktree", "add", "-q", "-b", f"wt{n}", str(base / f"wt{n}"))
            roots.append(base / f"wt{n}")
        return roots, task, None
    bare = base / "remote.git"
    git(base, "init", "-q", "--bare", str(bare))
    git(main, "push", "-q", str(bare), "main")
    roots = []
    for n in range(places):
        git(base, "clone", "-q", str(bare), str(base / f"clone{n}"))
        roots.append(base / f"clone{n}")
    return roots, task, "origin"


def worker(i: int, root: str, task: str, rounds: int, remote: str | None, barrier, results) -> None:
    from stele.project import Project
    from stele.tasks import claims

    project = Project(Path(root))
    me = claims.Identity(f"agent-{i:02d}", f"bench-{i:02d}", "bench-host")
    lease = dt.timedelta(hours=1)
    for r in range(rounds):
        barrier.wait()  # everyone starts claiming at the same instant
        start = time.perf_counter()
        try:
            won = claims.claim(project, task, me, lease, remote=remote).claim
            outcome = ("won", won.holder.agent, won.token)
        except claims.ClaimHeld as e:
            outcome = ("lost", e.claim.holder.agent, e.claim.token)
        except Exception as e:
            outcome = ("error", f"{type(e).__name__}: {e}", 0)
        elapsed = time.perf_counter() - start
        barrier.wait()  # every claim is decided before the winner lets go
        problem = ""
        if outcome[0] == "won":  # the others wait for this at the next round's first barrier
            try:
                claims.release(project, task, me, remote=remote)
            except Exception as e:
                problem = f"release failed: {type(e).__name__}: {e}"
        results.put((r, i, *outcome, elapsed, problem))


def check(rounds: int, workers: int, got: list[tuple]) -> list[str]:
    """Every rule a round must keep; returns one line per broken round."""
    broken = []
    by_round: dict[int, list[tuple]] = {}
    for row in got:
        by_round.setdefault(row[0], []).append(row)
    for r in range(rounds):
        rows = by_round.get(r, [])
        winners = [x for x in rows if x[2] == "won"]
        losers = [x for x in rows if x[2] == "lost"]
        errors = [x[3] for x in rows if x[2] == "error"] + [x[6] for x in rows if x[6]]
        if len(rows) != workers or errors:
            broken.append(f"round {r}: {len(rows)} answers, errors: {errors[:2]}")
        elif len(winners) != 1:
            broken.append(f"round {r}: {len(winners)} winners")
        elif winners[0][4] != r + 1:
            broken.append(f"round {r}: winner's token {winners[0][4]}, expected {r + 1}")
        elif any((x[3], x[4]) != (winners[0][3], winners[0][4]) for x in losers):
            wrong = next(x for x in losers if (x[3], x[4]) != (winners[0][3], winners[0][4]))
            broken.append(f"round {r}: a loser was told {wrong[3]} (token {wrong[4]}), the winner is "
                          f"{winners[0][3]} (token {winners[0][4]})")
    return broken


def run(rounds: int, workers: int, places: int, remote: bool) -> dict:
    # ignore_cleanup_errors: git may have started `gc --auto` in the background, still writing packs
    with tempfile.TemporaryDirectory(prefix="stele-claims-", ignore_cleanup_errors=True) as tmp:
        roots, task, remote_name = setup(Path(tmp), places, remote)
        ctx = mp.get_context("fork")
        barrier, results = ctx.Barrier(workers, timeout=120), ctx.Queue()
        procs = [ctx.Process(target=worker, args=(i, str(roots[i % len(roots)]), task, rounds, remote_name,
                                                   barrier, results)) for i in range(workers)]
        start = time.perf_counter()
        for p in procs:
            p.start()
        got = []
        try:
            for _ in range(rounds * workers):
                got.append(results.get(timeout=180))
        except queue.Empty:  # a worker died or hung: what arrived is judged, the rest counts as broken
            pass
        elapsed = time.perf_counter() - start
        for p in procs:
            p.join(timeout=10)
            if p.is_alive():
                p.terminate()
                p.join()
    latencies = sorted(x[5] * 1000 for x in got) or [0.0]
    broken = check(rounds, workers, got)
    return {
        "rounds": rounds, "workers": workers, "places": len(roots), "mode": "remote" if remote else "local",
        "ok_rounds": rounds - len(broken), "broken": broken[:10],
        "elapsed_s": round(elapsed, 2), "rounds_per_s": round(rounds / elapsed, 1),
        "claim_ms": {"p50": round(statistics.median(latencies), 1),
                     "p95": round(latencies[max(0, int(len(latencies) * 0.95) - 1)], 1),
                     "max": round(latencies[-1], 1)},
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=1000)
    ap.add_argument("--workers", type=int, default=16)
    ap.add_argument("--worktrees", type=int, default=4, help="local mode: worktrees the workers spread over")
    ap.add_argument("--remote", action="store_true", help="claim through a bare remote from several clones")
    ap.add_argument("--clones", type=int, default=2, help="remote mode: clones the workers spread over")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    result = run(args.rounds, args.workers, args.clones if args.remote else args.worktrees, args.remote)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        places = "clones" if args.remote else "worktrees"
        print(f"{result['mode']}: {result['workers']} processes over {result['places']} {places}, "
              f"{result['rounds']} rounds in {result['elapsed_s']} s ({result['rounds_per_s']} rounds/s)")
        print(f"rounds with exactly one winner and every loser told the winner: {result['ok_rounds']}"
              f"/{result['rounds']}")
        print("claim latency ms: p50 {p50}, p95 {p95}, max {max}".format(**result["claim_ms"]))
        for line in result["broken"]:
            print("BROKEN", line)
    return 0 if not result["broken"] else 1


if __name__ == "__main__":
    sys.exit(main())
