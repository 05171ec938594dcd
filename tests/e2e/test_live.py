"""`stele install --check --live` and `--probe` against the real harnesses and the mock model.

`--live` reads the harness's own record of the last session in the repository (Claude Code's
transcript, Codex's rollout, Gemini's chat log, Copilot's session events) after a scripted turn, with
the harness's environment (its fresh HOME): Stele's hooks ran and their text reached the conversation.
Without `stele` on the harness's PATH the same turn leaves a record in which no hook ran, and `--live`
says so. `--probe` runs the harness itself on the probe prompt while the mock model is up; the mock
repeats the nonce when the request carries it, so the nonce comes back only when the session-start
hook's text reached the model.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stele.install.live import FINDERS

from . import install
from .conftest import need
from .drivers import DRIVERS, Server, run_turn

STELE = Path(sys.executable).parent / "stele"


def check(root: Path, env: dict[str, str], *flags: str) -> list[dict]:
    done = subprocess.run([str(STELE), "install", "--check", *flags, "--json"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert done.stdout, done.stderr
    return json.loads(done.stdout)["findings"]


def about(findings: list[dict], harness: str, word: str) -> list[dict]:
    return [f for f in findings if f["harness"] == harness and word in f["message"]]


@pytest.mark.parametrize("name", [n for n in DRIVERS if n in FINDERS])  # Cline: no --live reader yet
def test_live_reads_the_last_session(name, demo_repo, tmp_path):
    need(name)
    run = run_turn(name, demo_repo, tmp_path)
    assert run.returncode == 0, run.describe()
    found = about(check(run.root, run.env, "--live"), name, "last session ")
    assert [f["level"] for f in found] == ["ok"], found
    assert "hooks ran and their text reached the conversation" in found[0]["message"]


def test_live_says_when_no_hook_ran(demo_repo, tmp_path):
    need("claude")
    run = run_turn("claude", demo_repo, tmp_path, stele_on_path=False)
    assert run.returncode == 0, run.describe()
    found = about(check(run.root, run.env, "--live"), "claude", "last session")
    assert [f["level"] for f in found] == ["error"] and "no Stele hook ran" in found[0]["message"], found


@pytest.mark.parametrize("name", ["claude", "gemini"])
def test_probe_gets_the_nonce_back(name, demo_repo, tmp_path):
    need(name)
    run = run_turn(name, demo_repo, tmp_path)  # installs the hooks and writes the harness's fresh HOME
    env = {**run.env, "PATH": os.pathsep.join([str(install.binary(name).parent), run.env["PATH"]])}
    with Server(run.root, log_path=tmp_path / "probe-requests.jsonl") as server:
        DRIVERS[name].configure(Path(env["HOME"]), run.root, server, env)  # the harness talks to this mock
        found = about(check(run.root, env, "--probe"), name, "probe:")
        asked = [r for r in server.agent_requests() if r.move == "probe"]
    assert asked, "the harness never sent the probe prompt"
    assert [f["level"] for f in found] == ["ok"], found


def test_probe_fails_when_the_hook_text_does_not_arrive(demo_repo, tmp_path):
    """`STELE_OFF=1` in the harness's environment: the hooks say nothing, the nonce cannot come back."""
    need("claude")
    run = run_turn("claude", demo_repo, tmp_path)
    env = {**run.env, "STELE_OFF": "1",
           "PATH": os.pathsep.join([str(install.binary("claude").parent), run.env["PATH"]])}
    with Server(run.root) as server:
        DRIVERS["claude"].configure(Path(env["HOME"]), run.root, server, env)
        found = about(check(run.root, env, "--probe"), "claude", "probe:")
    assert [f["level"] for f in found] == ["error"], found
