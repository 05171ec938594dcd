"""`stele install` runs `--check` on what it installed and ends with one loud line when the hooks
would do nothing: `stele install claude` once printed `created .claude/settings.json` with stele off
PATH, and only `stele install --check` said the hooks were dead."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

from tests.helpers import invoke


def _without_stele(monkeypatch) -> None:
    dirs = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d and not (Path(d) / "stele").exists()]
    monkeypatch.setenv("PATH", os.pathsep.join(dirs))
    assert shutil.which("stele") is None


def test_install_with_stele_off_path_ends_with_the_warning(repo: Path, monkeypatch):
    _without_stele(monkeypatch)
    r = invoke("install", "claude")
    assert r.code == 0 and "created .claude/settings.json" in r.out
    last = r.err.strip().splitlines()[-1]
    assert last.startswith("WARNING: Stele's hooks will do nothing yet: stele is not on PATH here")
    again = invoke("install", "claude")  # an unchanged install says it too
    assert again.err.strip().splitlines()[-1] == last


def test_install_with_stele_on_path_says_nothing_more(repo: Path, monkeypatch, tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "stele").write_text("#!/bin/sh\nexit 0\n")
    (bin_dir / "stele").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    r = invoke("install", "claude")
    assert r.code == 0 and "WARNING" not in r.err


def test_a_dry_run_checks_nothing(repo: Path, monkeypatch):
    _without_stele(monkeypatch)
    assert "WARNING" not in invoke("install", "claude", "--dry-run").err
