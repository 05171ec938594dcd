"""The files CI and the pre-commit framework read: `.pre-commit-hooks.yaml` and the composite `action.yml`.

The action's shell steps run here with fake `stele` and `gh` commands on PATH, so argument building
and the update-or-create comment logic are tested without GitHub.
"""
import os
import re
import subprocess
from pathlib import Path

import yaml

from stele.hooks.dispatch import EVENTS

ROOT = Path(__file__).resolve().parents[1]


def load(name):
    return yaml.safe_load((ROOT / name).read_text())


def test_pre_commit_hooks_are_python_hooks_with_visible_output():
    hooks = {h["id"]: h for h in load(".pre-commit-hooks.yaml")}
    assert set(hooks) == {"stele-anchored", "stele-doctor"}
    for hook in hooks.values():
        assert hook["language"] == "python" and hook["verbose"] is True
        assert {"id", "name", "entry", "language"} <= set(hook)
    assert hooks["stele-anchored"]["entry"] == "stele hook pre-commit" and "pre-commit" in EVENTS
    assert hooks["stele-anchored"]["require_serial"] is True
    doctor = hooks["stele-doctor"]
    assert doctor["entry"] == "stele doctor" and doctor["pass_filenames"] is False


def steps():
    return {s["name"]: s for s in load("action.yml")["runs"]["steps"]}


def test_this_repository_runs_ruff_mypy_and_its_own_hook_before_a_commit():
    hooks = {h["id"]: h for repo in load(".pre-commit-config.yaml")["repos"] for h in repo["hooks"]}
    assert set(hooks) == {"ruff", "mypy", "stele-anchored"}
    for hook in hooks.values():  # the dev venv's tools: the versions pyproject.toml pins
        tool = hook["entry"].split()[0]
        assert hook["language"] == "system" and tool.startswith(".venv/bin/"), hook
        assert Path(tool).name in ("ruff", "mypy", "stele")
    ours = {h["id"]: h for h in load(".pre-commit-hooks.yaml")}["stele-anchored"]
    assert hooks["stele-anchored"]["entry"] == ".venv/bin/" + ours["entry"]


def test_action_is_composite_and_every_run_step_names_its_shell():
    action = load("action.yml")
    assert action["runs"]["using"] == "composite"
    assert set(action["inputs"]) == {"args", "base", "gate", "review", "token", "stele", "sarif"}
    guard, *rest = action["runs"]["steps"]
    assert guard["shell"] == "cmd"
    assert all(s.get("shell") == "bash" for s in rest if "run" in s)


ANNOTATION = re.compile(r"^::error title=[^:,]+::[^\r\n]+$")


def test_on_windows_the_first_step_fails_with_one_line_and_nothing_else_runs():
    """No Windows runner here: the guard is read, not run. It is the first step, runs only on Windows,
    prints one `::error` workflow command and exits 1 in cmd (every Windows runner has cmd; bash and
    pwsh are not on every self-hosted one); every later step either has no condition, so the failure
    skips it, or needs the output of a step that was skipped."""
    guard, *rest = load("action.yml")["runs"]["steps"]
    assert guard["if"] == "runner.os == 'Windows'"
    echo, leave = guard["run"].strip().splitlines()
    assert leave == "exit /b 1"
    assert echo.startswith("echo ") and ANNOTATION.match(echo[len("echo "):])
    assert "ubuntu-latest" in echo and "macos-latest" in echo
    assert not set(echo) & set("&|<>()^%!\"")  # cmd would read these as syntax
    for step in rest:
        assert "if" not in step or "steps.base.outputs.ref != ''" in step["if"], step["name"]


def fake(bin_dir: Path, name: str, script: str) -> None:
    path = bin_dir / name
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(0o755)


def run_step(step, env, tmp_path, gh_exit=0):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    log = tmp_path / "log"
    fake(bin_dir, "stele", f'echo "stele $*" >> {log}\n')
    fake(bin_dir, "gh", f'echo "gh $*" >> {log}\n'
                        f'case "$*" in *--paginate*) cat {tmp_path}/existing 2>/dev/null;;\n'
                        f'*) exit {gh_exit};; esac\n')
    full = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "RUNNER_TEMP": str(tmp_path),
            "GITHUB_OUTPUT": str(tmp_path / "github_output"), **env}
    done = subprocess.run(["bash", "-e", "-c", step["run"]], env=full, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return (log.read_text().splitlines() if log.exists() else []), done.stdout


def test_doctor_step_builds_its_arguments(tmp_path):
    step = steps()["stele doctor"]
    log, _ = run_step(step, {"BASE": "", "GATE": "true", "ARGS": ""}, tmp_path)
    assert log == ["stele doctor --format github"]
    (tmp_path / "log").unlink()
    assert run_step(step, {"BASE": "origin/main", "GATE": "true", "ARGS": "--strict"}, tmp_path)[0] == [
        "stele doctor --format github --base origin/main --gate --strict"]
    output = tmp_path / "github_output"
    assert output.read_text() == "sarif=\nsarif=\n"  # no SARIF asked for: the output is empty


def test_doctor_step_writes_sarif_in_the_same_run(tmp_path):
    step = steps()["stele doctor"]
    log, _ = run_step(step, {"BASE": "", "GATE": "false", "ARGS": "", "SARIF": "out/stele.sarif"}, tmp_path)
    assert log == ["stele doctor --format github --sarif-output out/stele.sarif"]
    assert (tmp_path / "github_output").read_text() == "sarif=out/stele.sarif\n"
    outputs = load("action.yml")["outputs"]
    assert outputs["sarif"]["value"] == "${{ steps.doctor.outputs.sarif }}" and step["id"] == "doctor"


def test_comment_step_updates_its_own_comment_or_creates_one(tmp_path):
    step = steps()["Comment on the pull request"]
    (tmp_path / "stele-review.md").write_text("<!-- stele-review -->\n## Memory changes\n")
    env = {"GH_TOKEN": "t", "PR": "12", "REPO": "o/r"}
    created, _ = run_step(step, env, tmp_path)
    assert created[0].startswith("gh api repos/o/r/issues/12/comments --paginate --jq")
    body = f"body=@{tmp_path}/stele-review.md"
    assert created[1] == f"gh api --silent -X POST repos/o/r/issues/12/comments -F {body}"
    (tmp_path / "log").unlink()
    (tmp_path / "existing").write_text("987\n")
    updated, out = run_step(step, env, tmp_path)
    assert updated[1] == f"gh api --silent -X PATCH repos/o/r/issues/comments/987 -F {body}"
    assert out == ""


def test_a_comment_that_cannot_be_posted_warns_instead_of_failing(tmp_path):
    (tmp_path / "stele-review.md").write_text("<!-- stele-review -->\n")
    env = {"GH_TOKEN": "t", "PR": "1", "REPO": "o/r"}
    _, out = run_step(steps()["Comment on the pull request"], env, tmp_path, gh_exit=1)
    assert out.startswith("::warning title=stele review::could not comment")


def test_review_step_appends_markdown_to_the_step_summary(tmp_path):
    step = steps()["stele review"]
    summary = tmp_path / "summary.md"
    summary.write_text("doctor summary\n")
    log, _ = run_step(step, {"BASE": "origin/main", "GITHUB_STEP_SUMMARY": str(summary)}, tmp_path)
    assert log == ["stele review origin/main...HEAD --format markdown"]
    assert summary.read_text() == "doctor summary\n"  # the fake stele printed nothing to stdout
    assert (tmp_path / "stele-review.md").exists()


def test_ci_repeats_the_end_to_end_suite_after_make_test():
    lines = [x.strip() for x in (ROOT / ".ci/run").read_text().splitlines() if x.strip() and not x.startswith("#")]
    assert lines.index(".venv/bin/python -m tests.e2e.repeat") == lines.index("make test") + 1


def test_the_e2e_repeats_stop_at_the_count_and_before_the_budget():
    from tests.e2e.repeat import plan

    assert plan(5, started=0, budget=1200, durations=[0.0], now=300)  # the first repeat always fits
    assert plan(5, started=0, budget=1200, durations=[0.0, 200, 250], now=900)
    assert not plan(5, started=0, budget=1200, durations=[0.0, 200, 250], now=1000)  # 1000 + 250 > 1200
    assert not plan(3, started=0, budget=10**6, durations=[0.0, 200, 250], now=1000)  # 3 runs done
