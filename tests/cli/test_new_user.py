"""A new user's first hour, scripted: Stele installed the pipx way (its own fresh virtual environment,
its `stele` command in that environment's bin folder and not on PATH), then `stele init`, `stele import`
and `stele install claude`, which must end with the loud line saying the hooks will do nothing.

The wheel is built by the real backend and installed into a new venv with pip, `--no-deps`: the
dependencies are read from this test run's environment through a `.pth` file, because installing
them afresh (tantivy, numpy, model2vec, ...) takes minutes (measured 2m32s: `python3 -m venv v &&
v/bin/pip install .`). Everything Stele itself ships, and the console script, come from the wheel."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.helpers import git

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "import"

pytestmark = pytest.mark.slow  # builds the wheel (compresses the model): a few seconds


def _run(args: list, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_a_new_users_path_from_a_clean_venv(tmp_path):
    wheels = tmp_path / "wheels"
    code = "import sys, hatchling.build as b; print(b.build_wheel(sys.argv[1]))"
    built = subprocess.run([sys.executable, "-c", code, str(wheels)], cwd=ROOT, capture_output=True, text=True,
                           timeout=300)
    assert built.returncode == 0, built.stderr
    venv = tmp_path / "pipx" / "venvs" / "stele"
    assert subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], timeout=120).returncode == 0
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STELE_", "VIRTUAL_ENV", "PYTHON"))}
    env |= {"PATH": "/usr/bin:/bin", "STELE_BACKGROUND": "0", "STELE_RESIDENT": "0", "NO_COLOR": "1"}
    pip = _run([sys.executable, "-m", "pip", "--python", venv / "bin" / "python", "install", "--quiet",
                "--no-deps", "--no-index", next(wheels.glob("stele-*.whl"))], tmp_path, env)
    assert pip.returncode == 0, pip.stderr
    site = Path(_run([venv / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                     tmp_path, env).stdout.strip())
    (site / "zz_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    stele = venv / "bin" / "stele"
    assert shutil.which("stele", path=env["PATH"]) is None  # pipx's shim folder is not on this PATH

    repo = tmp_path / "your-repo"
    shutil.copytree(FIXTURES / "nygard", repo)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "-c", "user.email=a@b.invalid", "-c", "user.name=A", "commit", "-qm", "ADRs")
    where = _run([venv / "bin" / "python", "-c", "import stele; print(stele.__file__)"], repo, env)
    assert where.stdout.startswith(str(venv)), where  # Stele itself from the fresh venv, not this checkout

    assert _run([stele, "init"], repo, env).returncode == 0
    imported = _run([stele, "import", "adr"], repo, env)
    assert imported.returncode == 0 and "3 new facts" in imported.stdout, imported.stderr
    installed = _run([stele, "install", "claude"], repo, env)
    assert installed.returncode == 0, installed.stderr
    assert "created .claude/settings.json" in installed.stdout
    assert installed.stderr.strip().splitlines()[-1].startswith(
        "WARNING: Stele's hooks will do nothing yet: stele is not on PATH here"), installed.stderr
    doctor = _run([stele, "doctor"], repo, env)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
