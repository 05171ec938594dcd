"""The loop of `stele eval --agent` end to end through the CLI, with a stand-in harness: a script that
reads its own working tree (are Stele's hooks installed?) and prints Claude Code's stream-json. The
real binaries against the mock model are in tests/e2e/test_agent_eval.py."""
import json
import sys
from pathlib import Path

import pytest

from stele.agenteval import process, results
from stele.project import Project
from tests.helpers import git, invoke

FAKE = '''#!{python}
import json, pathlib, sys, time
args = sys.argv[1:]
prompt = args[args.index("-p") + 1]
settings = pathlib.Path(".claude/settings.json")
with_stele = settings.is_file() and "stele hook" in settings.read_text()
import os
pathlib.Path("{log}").open("a").write(str(pathlib.Path.cwd()) + "\\n")
pathlib.Path("{log}.off").open("a").write(os.environ.get("STELE_OFF", "-") + "\\n")
pathlib.Path("{log}.files").open("a").write(" ".join(sorted(p.name for p in pathlib.Path.cwd().iterdir())) + "\\n")
if "hang" in prompt:
    time.sleep(60)
if "refuse" in prompt:
    sys.stderr.write("starting\\nnot running in a trusted directory\\n")
    sys.exit(41)
if with_stele:
    pathlib.Path("notes.txt").write_text("kept\\n")
print(json.dumps({{"type": "result", "num_turns": 2, "result": "done CON-1" if with_stele else "done",
                  "usage": {{"input_tokens": 100, "output_tokens": 7}}}}))
'''


@pytest.fixture
def project(repo, tmp_path, monkeypatch):
    fake = tmp_path / "bin" / "claude"
    fake.parent.mkdir()
    fake.write_text(FAKE.format(python=sys.executable, log=tmp_path / "cwds.txt"))
    fake.chmod(0o755)
    (repo / "app.py").write_text("print('hi')\n")
    (repo / "suite.yaml").write_text(
        "tasks:\n"
        "  - id: notes\n    prompt: write the notes\n    expect: {touched: [notes.txt], cite: [CON-1]}\n"
        "  - id: hang\n    prompt: hang for a while\n    timeout: 1\n    expect: {touched: [notes.txt]}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "start")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    monkeypatch.setenv("STELE_OFF", "1")  # a user who had switched Stele off: the with arm switches it on
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    return repo, fake


def run(repo, fake, *extra):
    got = invoke("eval", "--agent", "suite.yaml", "--harness", "claude", "--harness-bin", str(fake), "--json", *extra)
    assert got.code == 0, got.err
    return json.loads(got.out), got.err


def test_the_arms_compare_and_the_users_tree_is_left_alone(project, tmp_path):
    repo, fake = project
    (repo / "app.py").write_text("print('uncommitted')\n")  # the user's work in progress
    status = git(repo, "status", "--porcelain")
    report, err = run(repo, fake, "--runs", "2")
    notes = report["tasks"]["notes"]
    assert (notes["arms"]["with"]["passed"], notes["arms"]["without"]["passed"]) == (2, 0)
    assert notes["difference"]["value"] == 1 and notes["difference"]["interval"][0] > 0
    paired = report["overall"]["difference"]["paired"]  # notes: 2 pairs only `with` passed; hang: 2 failed both
    assert (paired["pairs"], paired["with_only"], paired["without_only"], paired["value"]) == (4, 2, 0, 0.5)
    assert 0 <= paired["interval"][0] <= 0.5 <= paired["interval"][1] <= 1
    assert report["overall"]["arms"]["with"]["tokens_in"] == 200 and report["overall"]["arms"]["with"]["tokens_out"] == 14  # killed runs report none
    hang = [r for r in report["runs"] if r["task"] == "hang"]
    assert all(r["timed_out"] and not r["passed"] and r["checks"][0]["check"] == "finished in time" for r in hang)
    assert "notes with #1: pass" in err and "hang without #2: FAIL finished in time" in err
    # every run in its own throwaway clone, all gone; the user's checkout as it was
    cwds = (tmp_path / "cwds.txt").read_text().split()
    offs = (tmp_path / "cwds.txt.off").read_text().split()  # the without arm silences user-scope hooks too
    assert {(Path(c).name.split(".")[1], off) for c, off in zip(cwds, offs, strict=True)} == {("with", "-"), ("without", "1")}
    assert len(cwds) == 8 == len(set(cwds)) and not any(Path(c).exists() for c in cwds)
    assert all(Path(c).parent.name.startswith("stele-eval-") for c in cwds)
    assert list((tmp_path / "tmp").iterdir()) == []
    assert git(repo, "status", "--porcelain") == status and "stele-eval" not in git(repo, "worktree", "list")
    assert (repo / "app.py").read_text() == "print('uncommitted')\n" and not (repo / "notes.txt").exists()
    # kept for `stele serve`
    folder = repo / ".stele" / "eval" / "agent" / report["run"]
    assert sorted(p.name for p in folder.iterdir()) == ["report.md", "result.json", "runs"]
    assert len(list((folder / "runs").iterdir())) == 8
    listed = results.listing(Project(repo))
    assert [r["run"] for r in listed] == [report["run"]] and listed[0]["difference"] == report["overall"]["difference"]


def test_the_same_runs_give_the_same_numbers(project):
    repo, fake = project
    first, _ = run(repo, fake, "--runs", "1", "--arms", "with,without")
    second, _ = run(repo, fake, "--runs", "1")
    assert first["run"] != second["run"] and set(first["tasks"]) == {"notes", "hang"}
    for name in first["tasks"]:
        for arm in ("with", "without"):
            a, b = first["tasks"][name]["arms"][arm], second["tasks"][name]["arms"][arm]
            assert {k: v for k, v in a.items() if "seconds" not in k} == {k: v for k, v in b.items() if "seconds" not in k}
        assert first["tasks"][name]["difference"] == second["tasks"][name]["difference"]


def test_a_harness_that_never_reached_the_model_says_why(project):
    repo, fake = project
    (repo / "suite.yaml").write_text("tasks:\n  - id: refuse\n    prompt: refuse to start\n"
                                     "    expect: {touched: [notes.txt]}\n")
    report, _ = run(repo, fake, "--runs", "1")
    assert [r["checks"][0] for r in report["runs"]] == [
        {"check": "the harness ran", "ok": False, "detail": "exit 41 with no output: not running in a trusted directory"}] * 2
    folder = repo / ".stele" / "eval" / "agent" / report["run"]
    assert "refuse with #1: the harness ran (exit 41 with no output: not running" in (folder / "report.md").read_text()


@pytest.mark.parametrize("flag, stopped_at, why", [("--max-runs=3", 3, "run ceiling: 3 runs"),
                                                     ("--max-tokens=200", 2, "token ceiling: 214 of 200")])
def test_a_ceiling_stops_the_suite(project, flag, stopped_at, why):
    repo, fake = project
    (repo / "suite.yaml").write_text("tasks:\n  - id: notes\n    prompt: write the notes\n"
                                     "    expect: {touched: [notes.txt]}\n")
    report, _ = run(repo, fake, "--runs", "3", flag)
    assert len(report["runs"]) == stopped_at and why in report["stopped"]


def test_no_credentials_is_refused_before_anything_runs(project, monkeypatch, tmp_path):
    _repo, fake = project
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    got = invoke("eval", "--agent", "suite.yaml", "--harness", "claude", "--harness-bin", str(fake))
    assert got.code == 1 and "no model credentials for claude" in got.err and len(got.err.strip().splitlines()) == 1
    assert not (tmp_path / "cwds.txt").exists()


def test_ctrl_c_removes_the_clone(project, monkeypatch, tmp_path):
    repo, fake = project

    def interrupted(*args, **kwargs):
        assert any(p.name.startswith("notes.") for d in (tmp_path / "tmp").iterdir() for p in d.iterdir())
        raise KeyboardInterrupt

    monkeypatch.setattr(process, "run", interrupted)
    got = invoke("eval", "--agent", "suite.yaml", "--harness", "claude", "--harness-bin", str(fake))
    assert got.code == 130
    assert list((tmp_path / "tmp").iterdir()) == [] and not (repo / ".stele" / "eval").exists()


@pytest.mark.parametrize("args, says", [
    (["--harness", "vim"], "--harness vim: give one of"),
    (["--harness", "claude", "--arms", "with,maybe"], "--arms with,maybe"),
    (["--harness", "claude", "--runs", "0"], "--runs: give at least 1"),
    (["--harness", "claude", "--max-tasks", "3"], "--max-tasks only applies"),
    (["--harness", "claude", "--min", "50"], "do not go with --agent"),
    ([], "give a suite and a harness"),
])
def test_bad_flags(project, args, says):
    got = invoke("eval", "--agent", "suite.yaml", *args)
    assert got.code == 2 and says in got.err, got.err


def test_harness_without_agent_is_a_usage_error(project):
    got = invoke("eval", "suite.yaml", "--harness", "claude")
    assert got.code == 2 and "go with --agent" in got.err



def test_a_task_starts_from_its_patch_or_branch_and_only_the_agents_change_is_judged(project, tmp_path):
    repo, fake = project
    git(repo, "checkout", "-qb", "feature")
    (repo / "branch.txt").write_text("from the branch\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "feature")
    git(repo, "checkout", "-q", "main")
    (repo / "start.patch").write_text("--- /dev/null\n+++ b/patched.txt\n@@ -0,0 +1 @@\n+patched\n")
    (repo / "suite.yaml").write_text(
        "tasks:\n"
        "  - id: patched\n    prompt: write the notes\n    setup: {patch: start.patch}\n"
        "    expect: {touched: [notes.txt], not_touched: [patched.txt]}\n"
        "  - id: branched\n    prompt: write the notes\n    setup: {branch: feature}\n"
        "    expect: {touched: [notes.txt], not_touched: [branch.txt]}\n")
    report, _ = run(repo, fake, "--runs", "1", "--arms", "with")
    assert [(r["task"], r["passed"]) for r in report["runs"]] == [("patched", True), ("branched", True)]
    seen = (tmp_path / "cwds.txt.files").read_text().split("\n")
    assert "patched.txt" in seen[0] and "branch.txt" not in seen[0]
    assert "branch.txt" in seen[1] and "patched.txt" not in seen[1]
    assert not (repo / "patched.txt").exists() and git(repo, "branch", "--show-current").strip() == "main"


def test_a_setup_that_fails_stops_the_suite_instead_of_failing_an_arm(project, tmp_path):
    repo, fake = project
    (repo / "suite.yaml").write_text("tasks:\n  - id: gone\n    prompt: write the notes\n    setup: {branch: nowhere}\n"
                                     "    expect: {touched: [notes.txt]}\n")
    got = invoke("eval", "--agent", "suite.yaml", "--harness", "claude", "--harness-bin", str(fake))
    assert got.code == 1 and "task gone (with, run 1): " in got.err and "nowhere" in got.err, got.err
    assert list((tmp_path / "tmp").iterdir()) == [] and not (repo / ".stele" / "eval").exists()
