"""A frozen store (`kill -STOP` of a real S3-compatible server process: it accepts connections and
never answers): no hook waits on it, session start still delivers the standing rules, the hooks' own
sync (in the background) and `stele session sync` end within their bounds, and nothing is lost.

Each hook runs as its own process, through a wrapper that records what it imported: a hook that
imports no S3 client did not wait on the store, whatever the machine's load. The durations are the
measurement the issue asked for (printed with -s); the asserts on them are loose (the hook budget)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import git, invoke, point_store, write_fact
from tests.session import s3server

pytestmark = [pytest.mark.s3, pytest.mark.skipif(s3server.moto_command() is None,
                                                 reason="moto_server is not installed (pip install 'moto[server]')")]

WRAPPER = """
import json, sys
from stele.cli.entry import main
code = main(sys.argv[2:])
with open(sys.argv[1], "w") as f:
    json.dump({"code": code, "modules": sorted(sys.modules)}, f)
"""
RULE = "Run the payment retry tests against the sandbox account only"
BOUND_MS = 4000


@pytest.fixture
def frozen(tmp_path, monkeypatch):
    """A repository whose store is a moto_server that is frozen (SIGSTOP) once the repository has a
    standing rule, an index and a session with lines to push."""
    server = s3server.start(tmp_path / "moto.log")
    try:
        for key, value in server.env().items():
            monkeypatch.setenv(key, value)
        root = tmp_path / "repo"
        root.mkdir()
        git(root, "init", "-q", "-b", "main")
        monkeypatch.chdir(root)
        assert invoke("init").code == 0
        point_store(root, f"s3://{s3server.BUCKET}/frozen", server.url, sync_bound_ms=BOUND_MS)
        write_fact(root, "INS-0001", "instruction", RULE, RULE + ".")
        (root / "src").mkdir()
        (root / "src/pay.py").write_text("def retry():\n    pass\n")
        assert invoke("rebuild").code == 0
        assert invoke("session", "start", "--session", "s1", "--goal", "ship the retry fix").code == 0
        assert invoke("note", "--session", "s1", "the retry fix waits for the sandbox account").code == 0
        os.kill(server.proc.pid, signal.SIGSTOP)
        yield root, server
    finally:
        os.kill(server.proc.pid, signal.SIGCONT)
        server.stop()


def run_hook(root: Path, tmp_path: Path, event: str, payload: dict, background: bool) -> tuple[float, dict, str]:
    report = tmp_path / f"{event}.json"
    env = {**os.environ, "STELE_BACKGROUND": "1" if background else "0"}
    argv = [sys.executable, "-c", WRAPPER, str(report), "hook", event, "--harness", "claude"]
    t0 = time.monotonic()
    done = subprocess.run(argv, input=json.dumps(payload), capture_output=True, text=True, cwd=root, env=env,
                          timeout=120)
    took = time.monotonic() - t0
    assert done.returncode == 0
    data = json.loads(report.read_text())
    data["modules"] = {m.split(".")[0] for m in data["modules"]}
    return took, data, done.stdout


def wait_for_outcome(root: Path, since: str | None, limit_s: float = 90) -> dict:
    """The background sync's record of how it went (written when it ends)."""
    path = root / ".stele/state/sync/outcome.json"
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        try:
            data = json.loads(path.read_text())
            if data.get("at") != since:
                return data
        except (OSError, ValueError):
            pass
        time.sleep(0.1)
    raise AssertionError("the background sync never ended")


def test_a_frozen_store_holds_up_no_hook_and_no_sync(frozen, tmp_path):
    root, server = frozen
    budget = 8.0  # retrieval.hook_budget_ms
    base = {"session_id": "s1", "cwd": str(root), "transcript_path": str(tmp_path / "t.jsonl")}
    events = [
        ("session-start", {"hook_event_name": "SessionStart", "source": "startup"}),
        ("prompt", {"hook_event_name": "UserPromptSubmit",
                    "prompt": "how should the payment retry tests be run against the sandbox?"}),
        ("pre-edit", {"hook_event_name": "PreToolUse", "tool_name": "Edit",
                      "tool_input": {"file_path": str(root / "src/pay.py")}}),
        ("stop", {"hook_event_name": "Stop", "stop_hook_active": False}),
        ("session-end", {"hook_event_name": "SessionEnd", "reason": "prompt_input_exit"}),
    ]
    took = {}
    for event, extra in events:
        since = json.loads((root / ".stele/state/sync/outcome.json").read_text())["at"] \
            if (root / ".stele/state/sync/outcome.json").exists() else None
        took[event], data, out = run_hook(root, tmp_path, event, {**base, **extra}, background=True)
        assert not data["modules"] & {"boto3", "botocore", "urllib3"}, (event, "waited on the store")
        assert took[event] < budget, (event, took[event])
        if event == "session-start":
            assert RULE in json.loads(out)["hookSpecificOutput"]["additionalContext"]
        if event in ("session-start", "stop", "session-end"):  # each started a background sync: it ends
            outcome = wait_for_outcome(root, since)
            assert outcome["error"] and ("unreachable" in outcome["error"] or "deadline" in outcome["error"])
    print("hook seconds with the store frozen:", {k: round(v, 2) for k, v in took.items()})
    # the hook's own sync where it runs in the hook (STELE_BACKGROUND=0) ends at its 3 s deadline and
    # records so. (Its wall time was asserted under the 8 s budget: 3.7 s measured beside two CPU hogs,
    # a process start and the boto3 import that load stretches. A sync that overran its deadline would
    # be cut by the hook's own timer, which records no outcome.)
    (root / ".stele/state/sync/outcome.json").unlink()
    t_inline, data, _ = run_hook(root, tmp_path, "stop", {**base, "hook_event_name": "Stop"}, background=False)
    assert "botocore" in data["modules"], sorted(data["modules"])
    outcome = json.loads((root / ".stele/state/sync/outcome.json").read_text())
    assert outcome["error"] and ("unreachable" in outcome["error"] or "deadline" in outcome["error"]), outcome
    # `stele session sync`: its own bound, one line saying what waits
    t0 = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "stele", "session", "sync"], capture_output=True, text=True,
                          cwd=root, timeout=120)
    t_sync = time.monotonic() - t0
    print(f"inline stop hook {t_inline:.2f} s; stele session sync {t_sync:.2f} s (bound {BOUND_MS / 1000:g} s)")
    assert done.returncode == 1 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "skipped: 1 session not (fully) pushed (s1)" in done.stderr, done.stderr
    assert t_sync < BOUND_MS / 1000 + 30, t_sync  # a process start and boto3 import on a loaded machine
    doctor = invoke("doctor")
    assert "the last sync" in doctor.out and "did not finish" in doctor.out, doctor.out
    # thawed: the next sync ships everything, once
    os.kill(server.proc.pid, signal.SIGCONT)
    r = invoke("session", "sync", "--json")
    assert r.code == 0, r.err
    logged = sum(p.read_text().count("\n") for p in (root / ".stele/wal").glob("*.jsonl"))
    assert json.loads(r.out)["pushed_lines"] == logged >= 2
    assert "the last sync" not in invoke("doctor").out  # a sync that finished clears it
