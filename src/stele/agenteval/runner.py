"""The loop of `stele eval --agent`: every task, once per arm and run, each in its own throwaway
clone, under the suite's budgets.

Runs are ordered run by run, task by task, arm by arm, so a suite stopped by its token or run ceiling
leaves pairs (the same task and run number in both arms) rather than one arm finished and the other
not begun. A run's harness process gets its own process group: at its timeout, or on Ctrl-C, the whole
group is killed, the clone removed, and (Ctrl-C) the interruption goes on up to the CLI's exit 130.
"""
from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .. import gitrepo
from ..errors import SteleError, UsageError
from ..project import Project
from ..residency import OFF_ENV
from . import harnesses, outcome, process, workspace
from .suite import Suite, Task

ARMS = ("with", "without")
GUIDANCE = ["AGENTS.md", "CLAUDE.md", "GEMINI.md", ".github/copilot-instructions.md"]  # the repo's own, kept


@dataclass
class Options:
    harness: str
    runs: int = 3
    arms: tuple[str, ...] = ARMS
    harness_bin: str | None = None
    harness_args: list[str] = field(default_factory=list)
    max_tokens: int | None = None  # stop the suite once this many tokens (in + out) are spent
    max_runs: int | None = None  # stop the suite after this many harness runs
    timeout: int | None = None  # per task, over the suite's


@dataclass
class RunResult:
    task: str
    arm: str
    run: int
    passed: bool
    checks: list[outcome.Check]
    tokens_in: int = 0
    tokens_out: int = 0
    turns: int = 0
    seconds: float = 0.0
    exit: int | None = None
    timed_out: bool = False
    answer: str = ""
    injected: list[dict] = field(default_factory=list)  # the session log's deliveries: hook and ids
    transcript: str = ""  # the harness's stdout (written redacted beside the report)

    def as_dict(self) -> dict:
        return {"task": self.task, "arm": self.arm, "run": self.run, "passed": self.passed,
                "checks": [c.as_dict() for c in self.checks], "tokens_in": self.tokens_in,
                "tokens_out": self.tokens_out, "turns": self.turns, "seconds": round(self.seconds, 2),
                "exit": self.exit, "timed_out": self.timed_out, "answer": self.answer[:2000],
                "injected": self.injected}


@dataclass
class Outcome:
    harness: str
    commit: str
    started: float
    results: list[RunResult]
    stopped: str = ""  # why the suite stopped early ('' when it ran whole)
    seconds: float = 0.0


def check_options(opts: Options) -> None:
    if opts.harness not in harnesses.TARGETS:
        raise UsageError(f"--harness {opts.harness}: give one of {', '.join(harnesses.TARGETS)}")
    bad = [a for a in opts.arms if a not in ARMS]
    if bad or not opts.arms or len(set(opts.arms)) != len(opts.arms):
        raise UsageError(f"--arms {','.join(opts.arms)}: give with, without or both (with,without)")
    if opts.runs < 1:
        raise UsageError("--runs: give at least 1")


def preflight(opts: Options) -> tuple[dict[str, str], str]:
    """The checks before anything runs: the flags, model credentials, the harness executable; the
    environment the harness gets and its path."""
    check_options(opts)
    env = harnesses.environment()
    why = harnesses.missing_credentials(opts.harness, env)
    if why:
        raise SteleError(why)
    return env, harnesses.binary(opts.harness, opts.harness_bin, env)


def run_suite(project: Project, suite: Suite, opts: Options,
              progress: Callable[[RunResult], None] | None = None) -> Outcome:
    env, exe = preflight(opts)
    commit = gitrepo.head_sha(project.root)
    if commit is None:
        raise SteleError(f"{project.root} has no commit yet: commit first (each task starts from the current commit)")
    if "with" in opts.arms and not project.config_path.is_file():
        raise SteleError(f"{project.root} has no .stele/config.yaml: run `stele init` first (the `with` arm installs "
                         "Stele's hooks as `stele install` does)")
    started = time.time()
    out = Outcome(opts.harness, commit, started, [])
    spent = 0
    base = Path(tempfile.mkdtemp(prefix="stele-eval-"))
    try:
        for n in range(1, opts.runs + 1):
            for task in suite.tasks:
                for arm in opts.arms:
                    if opts.max_runs is not None and len(out.results) >= opts.max_runs:
                        out.stopped = f"run ceiling: {opts.max_runs} runs (--max-runs)"
                    elif opts.max_tokens is not None and spent >= opts.max_tokens:
                        out.stopped = f"token ceiling: {spent} of {opts.max_tokens} tokens spent (--max-tokens)"
                    if out.stopped:
                        return out
                    result = one(project, task, arm, n, commit, base, exe, opts, env)
                    spent += result.tokens_in + result.tokens_out
                    out.results.append(result)
                    if progress is not None:
                        progress(result)
        return out
    finally:
        out.seconds = time.time() - started
        shutil.rmtree(base, ignore_errors=True)


def arm_env(env: dict[str, str], arm: str) -> dict[str, str]:
    """The harness's environment in an arm: `without` sets STELE_OFF=1, which silences Stele's hooks
    from any scope (a user-scope install in the home folder included); `with` never has it set."""
    out = {k: v for k, v in env.items() if k != OFF_ENV}
    if arm == "without":
        out[OFF_ENV] = "1"
    return out


def _prepare(project: Project, tree: Path, task: Task, arm: str, harness: str) -> None:
    from ..install import targets as inst

    if task.patch:
        workspace.apply_patch(tree, task.patch)
    wt = Project(tree)
    names = harnesses.TARGETS[harness]
    if arm == "with":
        workspace.settings(project.stele_dir, tree / ".stele")
        for name in names:
            inst.get(name).install(wt, scope="project")
    else:  # no Stele hooks, even ones the repository committed; its own guidance files as they are
        for name in names:
            if (tree / ".stele").is_dir():
                inst.get(name).uninstall(wt, scope="project")
        workspace.restore(tree, GUIDANCE)


def one(project: Project, task: Task, arm: str, n: int, commit: str, base: Path, exe: str, opts: Options,
        env: dict[str, str]) -> RunResult:
    tree = base / f"{task.id}.{arm}.{n}"
    usage_file = base / f"{task.id}.{arm}.{n}.usage.json"  # beside the clone, never in its diff
    try:
        start_at = commit if not task.branch else gitrepo.require_commit(project.root, task.branch, f"task {task.id}: setup.branch")
        workspace.create(project.root, start_at, tree)
        _prepare(project, tree, task, arm, opts.harness)
        start = workspace.commit_all(tree, f"stele eval: {task.id} ({arm}) setup")
        cmd = harnesses.command(opts.harness, exe, task.prompt, with_stele=arm == "with",
                                max_turns=task.max_turns, extra=opts.harness_args,
                                trust=harnesses.trust_like(opts.harness, project.root, tree, env),
                                usage_file=usage_file)
        timeout = opts.timeout or task.timeout
        t0 = time.monotonic()
        code, stdout, stderr, timed_out = process.run(cmd, tree, harnesses.run_env(opts.harness, arm_env(env, arm)), timeout)
        seconds = time.monotonic() - t0
        usage = harnesses.read_output(opts.harness, stdout)
        harnesses.read_usage_file(usage_file, usage)
        change = workspace.changes(tree, start)
        checks = outcome.judge(task.expect, tree, change, usage.answer, usage.turns, task.max_turns, env)
        if timed_out:
            checks.insert(0, outcome.Check("finished in time", False, f"killed after {timeout} s"))
        elif code and not usage.events:  # it never got to the model: say why, not just which checks failed
            last = next((line.strip() for line in reversed(stderr.splitlines()) if line.strip()), "")
            checks.insert(0, outcome.Check("the harness ran", False, f"exit {code} with no output: {last[:300]}"))
        return RunResult(task.id, arm, n, all(c.ok for c in checks), checks, usage.tokens_in, usage.tokens_out,
                         usage.turns, seconds, code, timed_out, usage.answer, injected(tree), stdout)
    except SteleError as e:  # the apparatus failed, not the agent: counting it as a failed run would bias an arm
        raise SteleError(f"task {task.id} ({arm}, run {n}): {e}") from None
    finally:
        workspace.remove(tree)
        usage_file.unlink(missing_ok=True)


def injected(tree: Path) -> list[dict]:
    """What Stele's hooks delivered in the run, from the clone's session log: hook and fact ids."""
    from ..session import sessions, wal

    out = []
    entries = [e for path in sorted((tree / ".stele" / "wal").glob("*.jsonl")) for e in wal.read_file(path)]
    for entry in sorted(entries, key=sessions.order_key):
        ids = sessions.delivered_ids(entry)
        if ids:
            out.append({"hook": str(entry.extra.get("hook") or ""), "ids": ids})
    return out
