"""`check: {command: CMD}` (retrieve/commandcheck.py) in real git repositories: off unless this clone
opted in (`git config stele.checkCommands true`), run only from a fact identical to its version on the
reviewed ref, a non-zero exit a violation, a timeout the fact's problem. Each command that must not run
would leave a file behind if it did."""
from __future__ import annotations

import json
import shlex
import sys

from tests.factfiles import commit, write, write_fact
from tests.helpers import git, invoke

SCRIPT = "#!/bin/sh\necho login\n"


def command(code: str) -> str:
    """A command line running Python `code` with this interpreter (no shell)."""
    return shlex.join([sys.executable, "-c", code])


# leaves `ran` behind, and fails
MARKS = command("import pathlib, sys; pathlib.Path('ran').write_text('x'); print('lint: 1 problem'); sys.exit(1)")


def setup(root, cmd=MARKS, kind="constraint", **check):
    write(root, "ops/login.sh", SCRIPT)
    write_fact(root, "CON-AAAA" if kind == "constraint" else "DEC-AAAA", kind, title="Scripts pass the linter",
               anchors=["ops/**/*.sh"], check={"command": cmd, **check})
    return commit(root, "init")


def stage_script_change(root):
    write(root, "ops/login.sh", SCRIPT + "echo more\n")
    git(root, "add", "ops/login.sh")


def opt_in(root, reviewed="main"):
    git(root, "config", "stele.checkCommands", "true")
    if reviewed:
        git(root, "config", "stele.reviewedRef", reviewed)


def test_off_by_default_the_command_does_not_run_and_a_note_says_how_to_opt_in(repo):
    setup(repo)
    git(repo, "config", "stele.reviewedRef", "main")
    stage_script_change(repo)
    r = invoke("hook", "pre-commit")
    assert r.code == 0 and not (repo / "ran").exists()
    assert "command not run: command checks are off in this clone (opt in: `git config stele.checkCommands true`)" in r.out
    r = invoke("doctor", "--check-code", "--strict", "--json")
    assert not (repo / "ran").exists()
    [note] = json.loads(r.out)["findings"]
    assert (note["check"], note["severity"], note["fact"]) == ("bad-check", "note", "CON-AAAA")
    assert r.code == 0  # a note fails nothing, not even --strict


def test_the_user_s_global_config_or_an_environment_override_does_not_opt_in(repo, tmp_path, monkeypatch):
    """Only this clone's `.git/config` opts in (`.stele/config.yaml` has no such key at all: an unknown
    key there is refused)."""
    setup(repo)
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[stele]\n\tcheckCommands = true\n\treviewedRef = main\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "stele.checkCommands")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "true")
    assert git(repo, "config", "--get", "stele.checkCommands").strip() == "true"  # git itself sees it
    stage_script_change(repo)
    r = invoke("hook", "pre-commit")
    assert not (repo / "ran").exists() and "command checks are off in this clone" in r.out


def test_opted_in_a_reviewed_fact_runs_and_a_failing_command_blocks_strict(repo):
    setup(repo)
    opt_in(repo)
    stage_script_change(repo)
    r = invoke("hook", "pre-commit", "--strict")
    assert (repo / "ran").exists()
    assert r.code == 1 and "breaks the check of CON-AAAA" in r.err
    assert "ops/login.sh: `" in r.err and "` failed (exit 1: lint: 1 problem)" in r.err


def test_opted_in_a_passing_command_satisfies_strict(repo):
    setup(repo, command("import pathlib; pathlib.Path('ran').write_text('x')"))
    opt_in(repo)
    stage_script_change(repo)
    r = invoke("hook", "pre-commit", "--strict")
    assert (repo / "ran").exists() and r.code == 0, r.err


def test_a_fact_changed_in_the_working_tree_does_not_run_and_says_why(repo):
    setup(repo, command("import sys; sys.exit(0)"))
    opt_in(repo)
    fact = repo / "docs/memory/constraints/CON-AAAA.md"
    fact.write_text(fact.read_text().replace("sys.exit(0)", "import pathlib; pathlib.Path('ran').write_text('x')"))
    assert "pathlib" in fact.read_text()
    stage_script_change(repo)
    r = invoke("hook", "pre-commit")
    assert r.code == 0 and not (repo / "ran").exists()
    assert "command not run: the fact differs from its version on the reviewed ref main" in r.out


def test_a_pull_request_adding_a_command_fact_never_runs_it_in_ci(repo):
    """The attacker's view: CI opted in (`git config stele.checkCommands true`) and runs
    `stele doctor --check-code --base main` on a pull request branch that adds a fact with a command,
    and one that rewrites a reviewed fact's command. Neither runs; the run is not failed by them."""
    setup(repo, command("import sys; sys.exit(0)"))
    git(repo, "checkout", "-q", "-b", "pr")
    write_fact(repo, "CON-BBBB", "constraint", title="Innocent", anchors=["ops/**/*.sh"],
               check={"command": MARKS})
    fact = repo / "docs/memory/constraints/CON-AAAA.md"
    fact.write_text(fact.read_text().replace("sys.exit(0)", "import pathlib; pathlib.Path('ran').write_text('x')"))
    write(repo, "ops/login.sh", SCRIPT + "echo pwned\n")
    commit(repo, "pr")
    git(repo, "config", "stele.checkCommands", "true")  # no reviewedRef: --base is the reviewed ref
    r = invoke("doctor", "--check-code", "--base", "main", "--strict", "--format", "sarif")
    assert not (repo / "ran").exists()
    assert r.code == 0, r.out
    results = {x["properties"]["fact"]: x for x in json.loads(r.out)["runs"][0]["results"]}
    assert results["CON-BBBB"]["level"] == "note" and "is not on the reviewed ref main" in results["CON-BBBB"]["message"]["text"]
    assert "differs from its version on the reviewed ref main" in results["CON-AAAA"]["message"]["text"]


def test_on_the_base_itself_a_reviewed_command_runs_and_is_a_sarif_result_on_the_file(repo):
    setup(repo)
    opt_in(repo, reviewed=None)
    write(repo, "ops/login.sh", SCRIPT + "echo more\n")  # the change since main, in the working tree
    r = invoke("doctor", "--check-code", "--base", "main", "--format", "sarif")
    assert (repo / "ran").exists()
    [result] = json.loads(r.out)["runs"][0]["results"]
    assert result["ruleId"] == "code-check/CON-AAAA" and result["level"] == "warning"
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "ops/login.sh"


def test_without_a_reviewed_ref_nothing_runs(repo):
    setup(repo)
    opt_in(repo, reviewed=None)  # no --base, no stele.reviewedRef, no origin/HEAD
    stage_script_change(repo)
    r = invoke("hook", "pre-commit")
    assert not (repo / "ran").exists() and "no reviewed ref to compare the fact with" in r.out


def test_a_clone_s_origin_head_is_the_default_reviewed_ref(repo, tmp_path, monkeypatch):
    setup(repo)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    monkeypatch.chdir(clone)
    assert invoke("init").code == 0
    opt_in(clone, reviewed=None)
    stage_script_change(clone)
    r = invoke("hook", "pre-commit", "--strict")
    assert (clone / "ran").exists() and r.code == 1


def test_a_timeout_is_the_fact_s_problem_and_blocks_nothing(repo):
    # a decision: strict mode's acknowledge-or-verify fallback (risks, constraints) does not apply
    setup(repo, command("import time; time.sleep(60)"), kind="decision", timeout=0.2)
    opt_in(repo)
    stage_script_change(repo)
    r = invoke("hook", "pre-commit", "--strict")
    assert r.code == 0, r.err
    assert "took longer than 0.2 s and was stopped" in r.err and "breaks the check" not in r.err
    r = invoke("doctor", "--check-code", "--json")
    [finding] = json.loads(r.out)["findings"]
    assert (finding["check"], finding["severity"]) == ("bad-check", "warning") and r.code == 0


def test_the_command_gets_a_reduced_environment(repo, monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_" + "x" * 36)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    setup(repo, command("import os, sys; sys.exit(3 if {'GITHUB_TOKEN', 'AWS_SECRET_ACCESS_KEY'} & set(os.environ) "
                        "else 0)"))
    opt_in(repo)
    stage_script_change(repo)
    r = invoke("hook", "pre-commit", "--strict")
    assert r.code == 0, r.err


def test_a_missing_program_is_the_fact_s_problem(repo):
    setup(repo, "no-such-program-stele --check", kind="decision")
    opt_in(repo)
    stage_script_change(repo)
    r = invoke("hook", "pre-commit", "--strict")
    assert r.code == 0 and "`check` command `no-such-program-stele --check` could not start" in r.err


def test_a_file_merged_outside_the_memory_folder_does_not_run_when_a_pull_request_moves_the_folder(repo):
    """Two steps: a harmless-looking pull request merges `examples/memory/CON-EEEE.md`, a page of the
    documentation that happens to be a fact with a command (outside the memory folder, no one reviews it
    as one, and doctor never reads it); a second one sets `memory_dir: examples/memory`. The file is
    byte-identical to its blob on the reviewed ref, so its command ran in CI. It runs only from a fact
    inside the memory folder the reviewed ref's own config names."""
    from tests.factfiles import fact_text

    setup(repo, command("import sys; sys.exit(0)"))
    write(repo, "examples/memory/CON-EEEE.md", fact_text("CON-EEEE", "constraint", title="An example",
                                                          anchors=["ops/**/*.sh"], check={"command": MARKS}))
    commit(repo, "docs: an example")
    git(repo, "checkout", "-q", "-b", "pr")
    config = repo / ".stele/config.yaml"
    config.write_text(config.read_text().replace("memory_dir: docs/memory", "memory_dir: examples/memory"))
    write(repo, "ops/login.sh", SCRIPT + "echo pwned\n")
    commit(repo, "pr")
    git(repo, "config", "stele.checkCommands", "true")
    r = invoke("doctor", "--check-code", "--base", "main", "--strict", "--json")
    assert not (repo / "ran").exists()
    notes = [f["message"] for f in json.loads(r.out)["findings"] if f["fact"] == "CON-EEEE"]
    assert any("outside the memory folder the reviewed ref main names (docs/memory)" in n for n in notes), notes
    stage = write(repo, "ops/login.sh", SCRIPT + "echo again\n")
    git(repo, "add", str(stage))
    git(repo, "config", "stele.reviewedRef", "main")
    invoke("hook", "pre-commit")
    assert not (repo / "ran").exists()


def test_a_program_named_by_a_reviewed_command_is_not_found_in_the_checkout_through_path(repo, monkeypatch):
    """`PATH=$EXTRA:$PATH` with EXTRA unset leaves an empty entry, which means the current folder, and
    the command runs in the repository root: a reviewed `lint-scripts --all` then ran the pull request's
    own `./lint-scripts`. Only absolute PATH entries are searched."""
    import os

    setup(repo, "stele-lint-tool --all")
    opt_in(repo)
    git(repo, "checkout", "-q", "-b", "pr")
    tool = write(repo, "stele-lint-tool", "#!/bin/sh\ntouch ran\n")
    tool.chmod(0o755)
    commit(repo, "pr: a helper")
    monkeypatch.setenv("PATH", ":" + os.environ["PATH"])
    stage_script_change(repo)
    r = invoke("hook", "pre-commit")
    assert not (repo / "ran").exists()
    assert "`check` command `stele-lint-tool --all` could not start" in r.out


def test_a_slow_command_takes_nothing_from_the_patterns_of_the_facts_after_it(repo, monkeypatch):
    """A reviewed command check that takes a while (a linter) ran inside the patterns' budget: a fact
    after it found that budget spent and said `not run`, so its violation went through. Commands have
    their own timeout, and now run after every fact's patterns."""
    from stele.anchors import codecheck

    monkeypatch.setattr(codecheck, "COMMIT_BUDGET", 1.0)
    setup(repo, command("import time; time.sleep(1.5)"))
    write_fact(repo, "CON-ZZZZ", "constraint", title="No dex", anchors=["ops/**/*.sh"], check={"forbid": "dex"})
    commit(repo, "facts")
    opt_in(repo)
    write(repo, "ops/login.sh", SCRIPT + "echo dex\n")
    git(repo, "add", "ops/login.sh")
    r = invoke("hook", "pre-commit")
    assert r.code == 0 and "ops/login.sh:3: adds `echo dex`, which matches /dex/ (forbidden)" in r.out, r.out
    assert "took all of their 1 s" not in r.out
