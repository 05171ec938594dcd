"""Fixtures of the end-to-end suite: the harness binaries, the demo repository, a work folder.

Every test here is marked `slow`. Where node or npm is missing, or a harness cannot be installed,
its tests skip with one line saying so; under CI (`CI` set) that is a failure instead, so a green CI
never hides a suite that did not run.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import TODAY

from . import install


def pytest_collection_modifyitems(items):
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.slow)


def need(name: str) -> Path:
    """The harness's executable, installed into the cache if missing; skip (fail under CI) otherwise."""
    try:
        return install.binary(name)
    except install.Unavailable as e:
        if os.environ.get("CI"):
            pytest.fail(f"e2e: {e} (CI must run this suite: see .ci/run)")
        pytest.skip(f"e2e: {e}")


@pytest.fixture(autouse=True)
def _no_server_starting_outlives_its_test(tmp_path_factory):
    """A harness's hook may start a resident server just before the turn ends: one still starting up has
    no socket the suite-wide guard (tests/conftest.py) can ask, so it is found in /proc and stopped."""
    yield
    if sys.platform.startswith("linux"):
        from tests.conftest import _serving_under, _terminate

        for pid in _serving_under(str(tmp_path_factory.getbasetemp().resolve())):
            _terminate(pid)


@pytest.fixture(scope="session")
def demo_template(tmp_path_factory) -> Path:
    """`stele demo --keep` once per worker: a committed git repository with the Harbor record."""
    dest = tmp_path_factory.mktemp("demo") / "harbor"
    stele = Path(sys.executable).parent / "stele"
    env = {k: v for k, v in os.environ.items() if not k.startswith("STELE_")}
    env.update(NO_COLOR="1", COLUMNS="100", STELE_TODAY=TODAY)
    done = subprocess.run([str(stele), "demo", "--keep", str(dest)], check=False, capture_output=True, text=True,
                          env=env, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-2000:]
    return dest


@pytest.fixture
def demo_repo(demo_template, tmp_path) -> Path:
    root = tmp_path / "harbor"
    shutil.copytree(demo_template, root, symlinks=True)
    return root
