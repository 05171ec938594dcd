"""Shared fixtures. Every test runs with a pinned terminal and date, an isolated HOME and git config,
and no inherited STELE_* settings, so results do not depend on the machine running them."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers import TODAY, git, invoke

# the fake embedding model's fixtures (`fake_model`, `no_model`), for every test that asks for them
pytest_plugins = ["tests.fakes"]


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path_factory, monkeypatch):
    home = tmp_path_factory.mktemp("home")
    for key in list(os.environ):
        if key.startswith(("STELE_", "GIT_", "GITHUB_", "AWS_")):
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("STELE_TODAY", TODAY)
    monkeypatch.setenv("EDITOR", "true")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Test")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "test@example.invalid")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Test")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "test@example.invalid")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("STELE_BACKGROUND", "0")  # no detached builders outliving a test (tests of it set it)
    monkeypatch.setenv("STELE_RESIDENT", "0")  # nor resident servers (tests/serve/test_resident.py starts its own)
    # The AWS credential chain must never reach past this machine: no instance-metadata lookups, no
    # profiles but the (empty) isolated home's.
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(home / ".aws" / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(home / ".aws" / "credentials"))

@pytest.fixture
def plain_repo(tmp_path, monkeypatch) -> Path:
    """A fresh git repository without Stele, as the working directory."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    monkeypatch.chdir(root)
    return root

@pytest.fixture
def repo(plain_repo) -> Path:
    """A fresh git repository with Stele initialised, as the working directory."""
    assert invoke("init").code == 0
    return plain_repo

