"""`stele install pre-commit`: a plain git hook that keeps existing hooks and never writes tracked files."""
import os
import stat
import subprocess
import sys

from stele.install.precommit import BEGIN
from tests.factfiles import AUTH_PY, commit, write, write_fact
from tests.helpers import git, invoke


def test_install_creates_an_executable_hook_that_git_runs(repo):
    write(repo, "src/auth.py", AUTH_PY)
    write_fact(repo, "RISK-AAAA", "risk", anchors=["src/auth.py"])
    commit(repo, "init")
    r = invoke("install", "pre-commit")
    hook = repo / ".git/hooks/pre-commit"
    assert r.code == 0 and "created .git/hooks/pre-commit" in r.out
    assert hook.stat().st_mode & stat.S_IXUSR and hook.read_text().startswith("#!/bin/sh\n" + BEGIN)
    assert invoke("install", "pre-commit").out.startswith("unchanged")
    write(repo, "src/auth.py", AUTH_PY + "\n# more\n")
    git(repo, "add", "src/auth.py")
    env = {**os.environ, "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]}
    done = subprocess.run(["git", "commit", "-m", "edit"], cwd=repo, capture_output=True, text=True, env=env)
    assert done.returncode == 0 and "RISK-AAAA" in done.stdout + done.stderr
    assert invoke("uninstall", "pre-commit").out.startswith("removed") and not hook.exists()


def test_an_existing_shell_hook_is_kept_and_restored_byte_for_byte(repo):
    hook = repo / ".git/hooks/pre-commit"
    original = "#!/usr/bin/env bash\necho mine\nexec true\n"
    hook.write_text(original)
    hook.chmod(0o755)
    assert invoke("install", "pre-commit").code == 0
    text = hook.read_text()
    assert text.startswith("#!/usr/bin/env bash\n" + BEGIN) and text.endswith("echo mine\nexec true\n")
    assert invoke("uninstall", "pre-commit").out.startswith("restored")
    assert hook.read_text() == original


def test_a_non_shell_hook_is_refused_with_advice(repo):
    hook = repo / ".git/hooks/pre-commit"
    hook.write_text("#!/usr/bin/env python3\nprint('hi')\n")
    r = invoke("install", "pre-commit")
    assert r.code == 1 and "python3" in r.err and "by hand" in r.err
    assert hook.read_text() == "#!/usr/bin/env python3\nprint('hi')\n"


def test_core_hooks_path_is_honoured_and_tracked_hooks_are_never_written(repo):
    git(repo, "config", "core.hooksPath", ".githooks")
    assert invoke("install", "pre-commit").code == 0
    assert (repo / ".githooks/pre-commit").is_file()
    assert invoke("uninstall", "pre-commit").code == 0
    write(repo, ".githooks/pre-commit", "#!/bin/sh\necho team hook\n")
    commit(repo, "team hook")
    r = invoke("install", "pre-commit")
    assert r.code == 1 and "tracked by git" in r.err and "hook pre-commit" in r.err
    assert (repo / ".githooks/pre-commit").read_text() == "#!/bin/sh\necho team hook\n"
