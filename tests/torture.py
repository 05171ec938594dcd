"""Kill -9 at random points in the record's write paths, then check the record held.

Shared by the short run in the test suite (`tests/record/test_torture.py`, marked slow) and the long
run in `bench/torture.py`. Each trial starts one real `stele` process (`remember`, `edit --add-tag`,
`supersede`, `note`, `rebuild` or `task claim`) in its own process group and kills the group (git
children included) with SIGKILL after a random delay, and checks:
- no torn fact file: every file under docs/memory loads without a problem;
- nothing for `git add docs/memory` to stage but facts (no temporary files);
- no acknowledged write lost: a process that exited 0 before the kill left its change (a claim that
  printed its JSON is the task's claim record; a finished rebuild leaves an index that answers);
- no stuck lock: the next command runs (each is given a deadline): after every killed rebuild a read
  answers, after every killed claim the claim record parses, and at the end a final write finishes any
  interrupted supersession (doctor then reports no half-superseded fact), a rebuild runs to its end and
  a checker claims every claimed task (no `.lock` left under the claim refs);
- the WAL: every acknowledged note is there, and a skipped line is only ever a killed writer's.

Where a kill landed: each operation's run time is measured once, and a kill's delay is drawn from
`start` to `spread` times it. A killed process whose change is on disk anyway (the fact, the tag, the
edge, the note, the claim; for a rebuild, anything written under .stele/index) was killed inside the
operation, after (or, for a rebuild, during) its write and before it answered;
`landed` counts those per operation, so a run can show its kills were not all before the work began.
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
OPS = ("remember", "edit", "supersede", "note", "rebuild", "claim")


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
    # per operation: trials, killed, killed with the change already on disk (inside the operation)
    ops: dict[str, dict[str, int]] = field(default_factory=dict)
    run_times: dict[str, float] = field(default_factory=dict)
    claimed: list[str] = field(default_factory=list)
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


def _args(project, op: str, target: str, n: int, rng: random.Random) -> tuple[list[str], dict]:
    """The command line of one trial of `op`, and what it will change (for the checks)."""
    from stele.record import edit
    from stele.tasks import board

    if op == "supersede":
        old = edit.remember(project, f"Old decision number {n} for the torture run.", kind="decision").fact.id
        new = edit.remember(project, f"New decision number {n} replaces the old one here.",
                            kind="decision").fact.id
        return ["supersede", old, "--by", new], {"old": old, "new": new}
    if op == "claim":
        task = board.new_task(project, f"Torture task number {n}").fact.id
        return ["task", "claim", task, "--agent", f"victim-{n}", "--json"], {"task": task}
    return {"remember": ["remember", f"Torture fact {n}: {rng.random()}", "--kind", "note", "--json"],
            "edit": ["edit", target, "--add-tag", f"t{n}"],
            "note": ["note", f"torture note {n}", "--session", "torture"],
            "rebuild": ["rebuild"]}[op], {}


def _launch(root: Path, args: list[str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "stele", *args], cwd=root, env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def _changed(project, record, op: str, target: str, n: int, out: str, what: dict) -> bool:
    """Is the trial's change on disk (whether or not the process lived to say so)?"""
    from stele.tasks import claims

    if op == "remember":
        if out.strip():
            return json.loads(out)["id"] in record.facts
        return any(f.title.startswith(f"Torture fact {n}:") for f in record.facts.values())
    if op == "edit":
        return f"t{n}" in record.facts[target].tags
    if op == "supersede":
        return record.facts[what["old"]].status == "superseded"
    if op == "note":
        return any(e.text == f"torture note {n}" for e in _wal(project))
    if op == "claim":
        got = claims.read(project, what["task"])
        return got is not None and got.holder.agent == f"victim-{n}"
    return _index_stamp(project.root) != what["index"]  # a rebuild: it had written to the index


def _index_stamp(root: Path) -> int:
    """The newest modification under .stele/index (a rebuild that wrote anything moves it)."""
    found = [p.stat().st_mtime_ns for p in (root / ".stele" / "index").rglob("*") if p.is_file()]
    return max(found, default=0)


def trial(root: Path, target: str, n: int, rng: random.Random, tally: Tally, start: float,
          spread: float) -> None:
    from stele.project import Project
    from stele.record.load import load

    project = Project(root)
    op = OPS[n % len(OPS)]
    args, what = _args(project, op, target, n, rng)
    what["index"] = _index_stamp(root)
    proc = _launch(root, args)
    time.sleep(rng.uniform(start, spread) * tally.run_times[op])
    acked = proc.poll() == 0
    killed = proc.poll() is None
    if killed:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        tally.killed += 1
    out, _ = proc.communicate(timeout=60)
    tally.trials += 1
    tally.acknowledged += acked
    counts = tally.ops.setdefault(op, {"trials": 0, "killed": 0, "landed": 0, "acknowledged": 0})
    counts["trials"] += 1
    counts["killed"] += killed
    counts["acknowledged"] += acked

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
    try:
        changed = _changed(project, record, op, target, n, out if acked else "", what)
    except ValueError as e:  # a claim record that does not parse
        tally.torn_facts += 1
        tally.problems.append(f"trial {n}: {op}: {e}")
        return
    counts["landed"] += killed and changed
    if acked and op != "rebuild" and not changed:
        tally.lost += 1
        tally.problems.append(f"trial {n}: acknowledged {op} lost")
    if op == "rebuild":  # killed or not, a read answers next (from the index, or by finishing it)
        try:
            read = stele(root, "search", "torture target decision", "--json", timeout=60)
            if read.returncode != 0 or target not in read.stdout:
                tally.stuck += 1
                tally.problems.append(f"trial {n}: search after a rebuild: {read.stderr.strip()[:200]}")
        except subprocess.TimeoutExpired:
            tally.stuck += 1
            tally.problems.append(f"trial {n}: search after a killed rebuild timed out")
    if op == "claim":
        tally.claimed.append(what["task"])  # each is claimed once more, by a checker, in finish


def _wal(project) -> list:
    from stele.session import wal

    return list(wal.read_all(project, wal.ReadReport(), session="torture"))


def finish(root: Path, target: str, tally: Tally) -> None:
    """The lock is not stuck, an interrupted supersession is finished, a rebuild runs to its end, every
    claimed task can be claimed by someone else, the WAL reads."""
    from stele.doctor.run import run as doctor
    from stele.project import Project
    from stele.session import wal

    def must(what: str, *args: str, deadline: float = 30, ok=(0,)) -> None:
        started = time.monotonic()
        try:
            done = stele(root, *args, timeout=deadline)
            if done.returncode not in ok:
                tally.stuck += 1
                tally.problems.append(f"{what} failed: {done.stderr.strip()[:200]}")
        except subprocess.TimeoutExpired:
            tally.stuck += 1
            tally.problems.append(f"{what} timed out: a lock is stuck")
        if time.monotonic() - started > 20 + deadline / 2:
            tally.stuck += 1

    must("final edit", "edit", target, "--add-tag", "final")
    must("final rebuild", "rebuild", deadline=120)
    for task in tally.claimed:
        must(f"a checker's claim of {task}", "task", "release", task, "--force", "--agent", "checker", ok=(0, 1))
        must(f"a checker's claim of {task}", "task", "claim", task, "--agent", "checker")
    locks = [str(p.relative_to(root)) for p in (root / ".git" / "refs").rglob("*.lock")]
    if locks:
        tally.stuck += len(locks)
        tally.problems.append(f"lock files left: {locks[:5]}")
    half = [f.message for f in doctor(Project(root)).findings if f.check in ("half-superseded", "schema")]
    tally.torn_facts += len(half)
    tally.problems += half
    report = wal.ReadReport()
    list(wal.read_all(Project(root), report, session="torture"))
    tally.wal_skipped = len(report.skipped)


def calibrate(root: Path, target: str, tally: Tally) -> None:
    """One whole run of each operation, timed: kill delays are drawn as multiples of it."""
    import random as _random

    from stele.project import Project

    project = Project(root)
    for op in OPS:
        args, _ = _args(project, op, target, -1, _random.Random(0))
        if op == "edit":
            args = ["edit", target, "--add-tag", "calibrate"]
        started = time.monotonic()
        proc = _launch(root, args)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, (op, err)
        tally.run_times[op] = round(time.monotonic() - started, 3)


def run(root: Path, trials: int, seed: int = 7, spread: float = 1.3, start: float = 0.0) -> Tally:
    """Kill delays are drawn from `start` to `spread` times each operation's measured run time, so some
    kills land before the write, some in it, and some after the command finished."""
    rng = random.Random(seed)
    target = setup(root)
    tally = Tally()
    calibrate(root, target, tally)
    for n in range(trials):
        trial(root, target, n, rng, tally, start, spread)
    finish(root, target, tally)
    return tally
