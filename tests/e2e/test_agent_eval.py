"""`stele eval --agent` against the real Claude Code, Codex, Gemini CLI and Copilot CLI binaries and the
scripted mock model.

This tests the apparatus, not a model: the mock is scripted to react to what reaches it (issue 30).
On a task about a fact it keeps the fact (leaves the code, names the fact) only when the fact's title
is in the request, so the `with` arm must come out ahead exactly on the tasks whose fact Stele
delivered; on the control task (nothing in the record is anchored there) it does the same in both
arms, so the difference must be zero; scripted to be distracted by Stele's framed context, it fails
the control task in the `with` arm only, so the difference must be negative. Each check compares the
report with what the mock itself logged, run by run, so a miscounting report cannot pass.

Claude Code and Codex run the 6-task starter suite at 3 runs per arm (the issue's acceptance); Gemini
CLI and Copilot CLI run the three cases in one smaller suite (12 sessions each), which keeps the file's
time bounded. The user's harness settings are written as a user would (edits allowed, a model named),
never passed as a flag of Stele's.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stele.config import load_yaml
from stele.project import Project
from stele.record.load import load
from tests.helpers import TODAY

from . import install
from .conftest import need
from .drivers import DRIVERS, SYSTEM_PATH, base_env, node_dir, stele_bin_dir
from .mockmodel import FRAME, Reactive, Server, Task

STELE = Path(sys.executable).parent / "stele"
SUITE = "docs/memory/agent-eval.yaml"
EVAL_TIMEOUT = 900


# For a drafted task whose outcome is its fact's `forbid` check, what the mock's "simplification" writes
# into the first anchored file: a line the demo's check forbids (CON-X1MC: no third-party CDN).
BREAKS = {"CON-X1MC": '<link rel="stylesheet" href="https://fonts.googleapis.com/css2?family=Inter">\n'}


def suite_tasks(root: Path) -> dict[str, Task]:
    """The mock's play for each task of the drafted suite, by task id: its fact's title (and, when the
    outcome is the fact's check, the line that breaks it), or the file it writes."""
    facts = load(Project(root)).facts
    out = {}
    for t in load_yaml((root / SUITE).read_text(encoding="utf-8"), SUITE)["tasks"]:
        if t.get("about"):
            breaks = ("", "")
            if t["expect"].get("forbid"):
                assert t["about"] in BREAKS, f"add to BREAKS a line {t['about']}'s check forbids"
                breaks = (t["expect"]["paths"][0], BREAKS[t["about"]])
            out[t["id"]] = Task(t["prompt"], t["about"], facts[t["about"]].title, breaks=breaks)
        else:
            out[t["id"]] = Task(t["prompt"], writes=t["expect"]["touched"][0])
    return out


def draft(root: Path, env: dict[str, str], max_tasks: int) -> None:
    done = subprocess.run([str(STELE), "eval", "--agent", "--init", "--max-tasks", str(max_tasks)], cwd=root,
                          env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr


def configure(name: str, root: Path, work: Path, server: Server) -> dict[str, str]:
    """A fresh HOME whose harness is configured for the mock, as a user's would be for their model:
    the e2e driver's settings, with edits allowed by the user's own settings (Claude Code's default
    permission mode, Codex's sandbox), never by a flag of Stele's."""
    home = work / f"home-{name}"
    home.mkdir(parents=True, exist_ok=True)
    env = base_env(home, os.pathsep.join(p for p in (str(stele_bin_dir(work)), node_dir(), SYSTEM_PATH) if p))
    DRIVERS[name].configure(home, root, server, env)
    if name == "claude":
        (home / ".claude").mkdir(exist_ok=True)
        (home / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"defaultMode": "acceptEdits"}}))
    if name == "codex":
        config = Path(env["CODEX_HOME"]) / "config.toml"
        config.write_text('sandbox_mode = "workspace-write"\n' + config.read_text(encoding="utf-8"), encoding="utf-8")
    if name == "gemini":  # the model (else a router model classifies the prompt first) and edits, as settings
        path = home / ".gemini" / "settings.json"
        settings = json.loads(path.read_text(encoding="utf-8"))
        settings["general"]["defaultApprovalMode"] = "auto_edit"
        settings["model"] = {"name": "gemini-2.5-flash"}
        path.write_text(json.dumps(settings), encoding="utf-8")
    if name == "copilot":  # edits and commands without asking ("1", not "true", which would also trust the folder)
        env["COPILOT_ALLOW_ALL"] = "1"
    env["STELE_TODAY"] = TODAY
    return env


def run_eval(name: str, root: Path, work: Path, script: Reactive, suite: str = SUITE, runs: int = 3,
             extra: list[str] | tuple[str, ...] = ()) -> dict:
    with Server(root, script, log_path=work / f"{name}-requests.jsonl") as server:
        env = configure(name, root, work, server)
        done = subprocess.run([str(STELE), "eval", "--agent", suite, "--harness", name, "--harness-bin",
                               str(install.binary(name)), "--runs", str(runs), "--json", *extra], cwd=root, env=env,
                              capture_output=True, text=True, timeout=EVAL_TIMEOUT, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, done.stderr[-3000:]
        report = json.loads(done.stdout)
        report["requests"] = server.agent_requests()
    return report


def kept(report: dict, tid: str, task: Task, arm: str, run: int) -> bool:
    """What the mock did in one run, from its own log: did the fact's title reach it (it kept the fact)?"""
    tag = f"/{tid}.{arm}.{run}"
    texts = [r.text for r in report["requests"] if tag in r.text and task.prompt in r.text]
    assert texts, f"the mock saw no request of run {tag}"
    return any(task.keeps in t for t in texts)


def draft_env(work: Path) -> dict[str, str]:
    env = base_env(work / "draft-home", os.environ["PATH"])
    env["STELE_TODAY"] = TODAY
    return env


@pytest.mark.parametrize("name", ["claude", "codex"])
def test_the_difference_the_mock_was_scripted_to_produce(name, demo_repo, tmp_path):
    need(name)
    draft(demo_repo, draft_env(tmp_path), 6)
    tasks = suite_tasks(demo_repo)
    assert len(tasks) == 6 and [t for t, task in tasks.items() if task.writes] == ["control"]
    report = run_eval(name, demo_repo, tmp_path, Reactive(list(tasks.values())))
    assert report["stopped"] is None and len(report["runs"]) == 36
    for tid, task in tasks.items():
        block = report["tasks"][tid]
        for r in (r for r in report["runs"] if r["task"] == tid):
            expected = True if task.writes else kept(report, tid, task, r["arm"], r["run"])
            assert r["passed"] == expected, (tid, r)
        w, wo = block["arms"]["with"], block["arms"]["without"]
        assert block["difference"]["value"] == pytest.approx((w["passed"] - wo["passed"]) / 3)
        if task.writes:  # Stele has nothing on it: the same in both arms
            assert (w["passed"], wo["passed"], block["difference"]["value"]) == (3, 3, 0)
        else:  # the fact never reaches the mock without Stele
            assert wo["passed"] == 0
    overall = report["overall"]
    assert overall["difference"]["value"] > 0 and overall["difference"]["interval"][0] > 0, overall
    assert overall["arms"]["with"]["tokens_in"] > 0 and overall["arms"]["without"]["seconds"] > 0
    delivered = set(overall["injected"])
    assert {t.fact for t in tasks.values() if t.fact} & delivered, "no task's fact was delivered"
    folder = demo_repo / ".stele" / "eval" / "agent" / report["run"]
    assert json.loads((folder / "result.json").read_text())["overall"] == overall
    assert "| **overall** |" in (folder / "report.md").read_text()


def test_distraction_gives_a_negative_difference_reproducibly(demo_repo, tmp_path):
    need("claude")
    draft(demo_repo, draft_env(tmp_path), 1)  # the control task alone
    tasks = list(suite_tasks(demo_repo).values())
    assert [t.writes for t in tasks] == ["scripts/print_date.sh"]
    first = run_eval("claude", demo_repo, tmp_path / "a", Reactive(tasks, distracted=True))
    control = first["tasks"]["control"]
    assert (control["arms"]["with"]["passed"], control["arms"]["without"]["passed"]) == (0, 3)
    assert control["difference"]["value"] == -1 and control["difference"]["interval"][1] < 0
    assert all(FRAME in r.text for r in first["requests"] if ".with." in r.text)
    second = run_eval("claude", demo_repo, tmp_path / "b", Reactive(tasks, distracted=True))

    def numbers(report: dict) -> dict:
        return {k: {a: {f: v for f, v in arm.items() if "seconds" not in f} for a, arm in block["arms"].items()}
                | {"difference": block["difference"]} for k, block in report["tasks"].items()}

    assert numbers(second) == numbers(first)


DISTRACTION = {"id": "distraction", "prompt": "Add a small shell script scripts/print_time.sh that prints the time in UTC.",
               "expect": {"touched": ["scripts/print_time.sh"]}}


@pytest.mark.parametrize("name", ["gemini", "copilot"])
def test_each_case_in_gemini_and_copilot(name, demo_repo, tmp_path):
    """One suite holds the three cases, 2 runs per arm (12 sessions, 1-3 minutes here by load): the first
    drafted fact task (positive), the control task (zero), and a second control task on which the mock
    is distracted by Stele's framed context (negative). In both harnesses the clone is a folder nobody
    trusted: the `with` arm's requests must carry Stele's context, the `without` arm's never."""
    need(name)
    draft(demo_repo, draft_env(tmp_path), 2)
    suite = load_yaml((demo_repo / SUITE).read_text(encoding="utf-8"), SUITE)
    suite["tasks"].append(DISTRACTION)
    path = tmp_path / "suite.json"  # outside the repository (JSON is YAML)
    path.write_text(json.dumps(suite), encoding="utf-8")
    tasks = suite_tasks(demo_repo)
    fact = next(tid for tid in tasks if tid != "control")
    tasks["distraction"] = Task(DISTRACTION["prompt"], writes="scripts/print_time.sh", distracted=True)
    report = run_eval(name, demo_repo, tmp_path, Reactive(list(tasks.values())), suite=str(path), runs=2)
    assert report["stopped"] is None and len(report["runs"]) == 12
    runs = [(r, r.root.name.split(".")) for r in report["requests"] if r.root is not None]  # task, arm, run
    with_requests = [r for r, (_, arm, _) in runs if arm == "with"]
    without_requests = [r for r, (_, arm, _) in runs if arm == "without"]
    assert with_requests and without_requests
    assert {r.root.name for r in with_requests if FRAME in r.text} == {f"{t}.with.{n}" for t in tasks for n in (1, 2)}
    assert not any(FRAME in r.text for r in without_requests), "Stele's context reached a `without` run"
    for r in report["runs"]:
        expected = {fact: r["arm"] == "with", "control": True, "distraction": r["arm"] == "without"}[r["task"]]
        assert r["passed"] == expected, r
        if r["task"] == fact:
            assert r["passed"] == kept(report, fact, tasks[fact], r["arm"], r["run"])
    blocks = report["tasks"]
    assert blocks[fact]["difference"]["value"] == 1 and blocks[fact]["difference"]["interval"][0] > 0
    assert report["overall"]["difference"]["paired"] | {"interval": None} == {
        "pairs": 6, "with_only": 2, "without_only": 2, "value": 0.0, "interval": None}
    assert blocks["control"]["difference"]["value"] == 0
    assert blocks["distraction"]["difference"]["value"] == -1 and blocks["distraction"]["difference"]["interval"][1] < 0
    for arm in ("with", "without"):
        a = report["overall"]["arms"][arm]
        assert a["tokens_in"] > 0 and a["tokens_out"] > 0 and a["seconds"] > 0, (arm, a)
    assert tasks[fact].fact in report["overall"]["injected"]
