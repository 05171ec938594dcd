"""Shared fixtures. Every test runs with a pinned terminal and date, an isolated HOME and git config,
and no inherited STELE_* settings, so results do not depend on the machine running them."""
from __future__ import annotations

import os
import sys
import tempfile
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
    monkeypatch.setenv("STELE_RESIDENT", "0")  # nor resident servers (tests/cli/test_resident.py starts its own)
    monkeypatch.delenv("CI", raising=False)  # a CI runner's CI=true would turn the resident server off
    # The AWS credential chain must never reach past this machine: no instance-metadata lookups, no
    # profiles but the (empty) isolated home's.
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(home / ".aws" / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(home / ".aws" / "credentials"))
    # Temporary files (an edit's private copy kept after a refusal, by design) stay in the test's
    # folders, never in the machine's /tmp: in this process and in every child it starts.
    scratch = tmp_path_factory.mktemp("tmp")
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))

@pytest.fixture(params=["own process", "resident"])
def resident(request, monkeypatch, tmp_path_factory):
    """Run the test twice: hooks, `recall` and `search` in their own process (the default), then
    answered by a resident server (tests/helpers.py, `through_server`; Linux only)."""
    import sys

    from tests import helpers

    if request.param == "resident" and not (sys.platform.startswith("linux") and hasattr(os, "pidfd_open")):
        pytest.skip("the resident server is Linux only")
    if request.param == "resident":
        from stele.residency import mount_refusal

        why = mount_refusal(str(tmp_path_factory.getbasetemp()))
        if why is not None:
            pytest.skip(f"no resident server here: {why}")
    monkeypatch.setitem(helpers.RESIDENT, "on", request.param == "resident")
    return request.param


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



@pytest.fixture(autouse=True)
def _no_server_outlives_its_test(tmp_path_factory):
    """Every resident server a test started (directly or through a hook) is stopped when the test
    ends: none is left serving a removed temporary folder (the per-user cap would count it). Only
    servers that came up during the test are asked (others are this user's real ones)."""
    import sys

    from stele.cli.resident import client as resident

    linux = sys.platform.startswith("linux")
    before = set(resident.running()) if linux else set()
    yield
    if not linux:
        return
    base = str(tmp_path_factory.getbasetemp().resolve())
    for at in set(resident.running()) - before:
        status = resident.request("", "status", at=at)
        if status and str(status.get("root", "")).startswith(base + os.sep):
            resident.request("", "stop", at=at)
            _wait_gone(int(status["pid"]))


@pytest.fixture(scope="session", autouse=True)
def _no_server_outlives_the_run(tmp_path_factory):
    """After the last test (of this worker), no `resident-serve` process serves a folder of this run:
    each would wait out its idle time in a removed temporary repository (44 were found alive on one
    machine after a few suites). Any left is stopped, and the run fails naming it."""
    yield
    if not sys.platform.startswith("linux"):
        return
    left = _serving_under(str(tmp_path_factory.getbasetemp().resolve()))
    for pid in left:
        _terminate(pid)
    assert not left, f"resident servers outlived the test run: {left}"


def _serving_under(base: str) -> dict[int, str]:
    """The live `stele resident-serve ROOT` processes (pid -> ROOT) whose ROOT is under `base`, from /proc."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                args = [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
        except OSError:
            continue
        if "resident-serve" in args[:-1]:
            root = args[args.index("resident-serve") + 1]
            if os.path.realpath(root).startswith(base + os.sep):
                found[int(entry)] = root
    return found


def _terminate(pid: int) -> None:
    try:
        os.kill(pid, 15)
    except OSError:
        return
    _wait_gone(pid)


def _wait_gone(pid: int) -> None:
    """Wait (at most 30 s) for a server asked to stop to exit, then kill it."""
    import time

    deadline = time.monotonic() + 30
    while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return  # exited; its parent (a test's Popen) reaps it
        except OSError:
            return
        time.sleep(0.02)
    if os.path.exists(f"/proc/{pid}"):
        os.kill(pid, 9)
