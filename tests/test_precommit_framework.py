"""The real pre-commit framework (from PyPI, in the dev extra) runs this checkout's `stele-anchored` hook.

`pre-commit try-repo` pip-installs the checkout into a fresh environment, which needs the package index
and takes ~20-40 s: marked slow, still part of the default suite.
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.factfiles import AUTH_PY, commit, write, write_fact
from tests.helpers import git

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_pre_commit_try_repo_runs_stele_anchored(repo, tmp_path):
    write(repo, "src/auth.py", AUTH_PY)
    write_fact(repo, "RISK-AAAA", "risk", title="Limiter order", anchors=["src/auth.py::RateLimiter.check"])
    commit(repo, "init")
    write(repo, "src/auth.py", AUTH_PY.replace("return True", "return bool(key)"))
    git(repo, "add", "src/auth.py")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}
    pre_commit = str(Path(sys.executable).parent / "pre-commit")
    done = subprocess.run([pre_commit, "try-repo", str(ROOT), "stele-anchored", "--verbose"], cwd=repo,
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "stele anchored facts" in done.stdout and "Passed" in done.stdout
    assert "RISK-AAAA risk: Limiter order" in done.stdout
    assert "src/auth.py::RateLimiter.check (lines 10-13)" in done.stdout
