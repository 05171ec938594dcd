"""`stele hook pre-commit`: the listing, `--strict`, filenames from the framework, failing open."""
import subprocess
import sys

from tests.factfiles import AUTH_PY, commit, write, write_fact
from tests.helpers import git, invoke

EXPECTED = """\
stele: 2 facts anchored to the staged changes:
  RISK-AAAA risk: Limiter order is load-bearing
      src/auth.py::RateLimiter.check (lines 10-13)
  DEC-BBBB decision: Auth lives in one file
      src/auth.py
Read one with `stele show ID`. If it still holds: `stele verify ID`.
"""


def setup(root):
    write(root, "src/auth.py", AUTH_PY)
    write(root, "src/other.py", "x = 1\n")
    write_fact(root, "RISK-AAAA", "risk", title="Limiter order is load-bearing",
               anchors=["src/auth.py::RateLimiter.check"])
    write_fact(root, "DEC-BBBB", "decision", title="Auth lives in one file", anchors=["src/auth.py"])
    commit(root, "init")


def stage_check_edit(root):
    write(root, "src/auth.py", AUTH_PY.replace("return True", "return bool(key)"))
    git(root, "add", "src/auth.py")


def test_lists_facts_anchored_to_the_staged_method_and_exits_0(repo):
    setup(repo)
    stage_check_edit(repo)
    r = invoke("hook", "pre-commit")
    assert (r.code, r.out) == (0, EXPECTED)


def test_editing_another_function_does_not_list_the_method_anchor(repo):
    setup(repo)
    write(repo, "src/auth.py", AUTH_PY.replace("return user is not None", "return bool(user)"))
    git(repo, "add", "src/auth.py")
    r = invoke("hook", "pre-commit")
    assert r.code == 0 and "DEC-BBBB" in r.out and "RISK-AAAA" not in r.out


def test_nothing_staged_or_nothing_anchored_prints_nothing(repo):
    setup(repo)
    assert invoke("hook", "pre-commit").out == ""
    write(repo, "src/other.py", "x = 2\n")
    git(repo, "add", "src/other.py")
    assert invoke("hook", "pre-commit").out == ""


def test_strict_blocks_until_the_risk_is_verified_and_staged(repo):
    setup(repo)
    stage_check_edit(repo)
    r = invoke("hook", "pre-commit", "--strict")
    assert r.code == 1 and "RISK-AAAA" in r.err and "DEC-BBBB" not in r.err
    assert invoke("verify", "RISK-AAAA").code == 0
    git(repo, "add", "docs/memory")
    assert invoke("hook", "pre-commit", "--strict").code == 0


def test_filenames_narrow_the_change_and_stand_in_when_nothing_is_staged(repo):
    setup(repo)
    stage_check_edit(repo)
    assert invoke("hook", "pre-commit", "src/other.py").out == ""
    assert "RISK-AAAA" in invoke("hook", "pre-commit", "src/auth.py").out
    git(repo, "reset", "-q")
    r = invoke("hook", "pre-commit", "src/auth.py", "src/other.py")
    assert "these files" in r.out and "RISK-AAAA" in r.out


def test_internal_errors_fail_open_even_with_strict(repo):
    setup(repo)
    stage_check_edit(repo)
    (repo / ".stele/config.yaml").write_text("memory_dir: [not, a, string]\n")
    r = invoke("hook", "pre-commit", "--strict")
    assert r.code == 0 and "continuing without memory" in r.err


def test_outside_a_repository_it_does_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert invoke("hook", "pre-commit").code == 0


def test_the_hook_path_imports_neither_typer_rich_nor_gitpython():
    code = ("import sys, stele.hooks.dispatch as d, stele.hooks.precommit; "
            "print(sorted(m for m in ('typer', 'rich', 'git') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
