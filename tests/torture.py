"""Kill -9 at random points in the record's write paths, then check the record held.

Shared by the short run in the test suite (`tests/record/test_torture.py`, marked slow) and the long
run in `bench/torture.py`. Each trial starts one real `stele` process (`remember`, `edit --add-tag`,
`supersede` or `note`), kills it with SIGKILL after a random delay (before, during or after its
write), and checks:
- no torn fact file: every file under docs/memory loads without a problem;
- nothing for `git add docs/memory` to stage but facts (no temporary files);
- no acknowledged write lost: a process that exited 0 before the kill left its change;
- no stuck lock: the next command runs (each is given a deadline), and a final write finishes any
  interrupted supersession (doctor then reports no half-superseded fact);
- the WAL: every acknowledged note is there, and a skipped line is only ever a killed writer's.
"""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
OPS = ("remember", "edit", "supersede", "note")


@dataclass
class Tally:
    trials: int = 0
    killed: int = 0
    acknowledged: int = 0
    torn_facts: int = 0
    stray_files: int = 0
    lost: int = 0
    stuck: int = 0
    wal_skipped: int = 0
    problems: list[str] = field(default_factory=list)

    def ok(self) -> bool:
        return not (self.torn_facts or self.stray_files or self.lost or self.stuck)


def _env() -> dict:
    env = dict(os.environ, PYTHONPATH=str(SRC), NO_COLOR="1", COLUMNS="100")
    env.pop("STELE_SESSION", None)
    return env


def stele(root: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "stele", *args], cwd=root, env=_env(), capture_output=True,
                          text=True, timeout=timeout)


def setup(root: Path) -> str:
    root.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    assert stele(root, "init").returncode == 0
    done = stele(root, "remember", "The torture target decision.", "--kind", "decision", "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["id"]


def trial(root: Path, target: str, n: int, rng: random.Random, tally: Tally, max_delay: float) -> None:
    from stele.project import Project
    from stele.record import edit
    from stele.record.load import load

    project = Project(root)
    op = OPS[n % len(OPS)]
    old = new = ""
    if op == "supersede":
        old = edit.remember(project, f"Old decision number {n} for the torture run.", kind="decision").fact.id
        new = edit.remember(project, f"New decision number {n} replaces the old one here.",
                            kind="decision").fact.id
    args = {"remember": ["remember", f"Torture fact {n}: {rng.random()}", "--kind", "note", "--json"],
            "edit": ["edit", target, "--add-tag", f"t{n}"],
            "supersede": ["supersede", old, "--by", new],
            "note": ["note", f"torture note {n}", "--session", "torture"]}[op]
    proc = subprocess.Popen([sys.executable, "-m", "stele", *args], cwd=root, env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(rng.uniform(0.0, max_delay))
    acked = proc.poll() == 0
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
        tally.killed += 1
    out, _ = proc.communicate(timeout=60)
    tally.trials += 1
    tally.acknowledged += acked

    record = load(project)
    torn = [str(p) for p in record.problems]
    if torn:
        tally.torn_facts += len(torn)
        tally.problems += torn
    stray = [p for p in subprocess.run(["git", "status", "--porcelain", "--untracked-files=all", "docs/memory"],
                                       cwd=root, capture_output=True, text=True).stdout.split()
             if p.endswith(".tmp")]
    if stray:
        tally.stray_files += len(stray)
        tally.problems += stray
    if acked:
        lost = {
            "remember": lambda: json.loads(out)["id"] not in record.facts,
            "edit": lambda: f"t{n}" not in record.facts[target].tags,
            "supersede": lambda: record.facts[old].status != "superseded",
            "note": lambda: not any(e.text == f"torture note {n}" for e in _wal(project)),
        }[op]()
        if lost:
            tally.lost += 1
            tally.problems.append(f"trial {n}: acknowledged {op} lost")


def _wal(project) -> list:
    from stele.session import wal

    return list(wal.read_all(project, wal.ReadReport(), session="torture"))


def finish(root: Path, target: str, tally: Tally) -> None:
    """The lock is not stuck, an interrupted supersession is finished, the WAL reads."""
    from stele.doctor.run import run as doctor
    from stele.project import Project
    from stele.session import wal

    started = time.monotonic()
    try:
        done = stele(root, "edit", target, "--add-tag", "final", timeout=30)
        if done.returncode != 0:
            tally.stuck += 1
            tally.problems.append(f"final edit failed: {done.stderr.strip()}")
    except subprocess.TimeoutExpired:
        tally.stuck += 1
        tally.problems.append("final edit timed out: a lock is stuck")
    if time.monotonic() - started > 20:
        tally.stuck += 1
    half = [f.message for f in doctor(Project(root)).findings if f.check in ("half-superseded", "schema")]
    tally.torn_facts += len(half)
    tally.problems += half
    report = wal.ReadReport()
    list(wal.read_all(Project(root), report, session="torture"))
    tally.wal_skipped = len(report.skipped)


def run(root: Path, trials: int, seed: int = 7, spread: float = 1.3) -> Tally:
    """`spread`: kill delays are drawn up to this many times one command's measured run time, so some
    kills land before the write, some in it, and some after the command finished."""
    rng = random.Random(seed)
    target = setup(root)
    started = time.monotonic()
    assert stele(root, "edit", target, "--add-tag", "calibrate").returncode == 0
    max_delay = spread * (time.monotonic() - started)
    tally = Tally()
    for n in range(trials):
        trial(root, target, n, rng, tally, max_delay)
    finish(root, target, tally)
    return tally
