"""A store that answers, but a byte at a time and never finishes (a slowloris, a broken proxy, an
attacker's endpoint): botocore's read timeout is per socket read, so each trickled byte renewed it and
`stele session sync`, `stele doctor` and a hook's background sync (holding the sync lock) waited as
long as the store kept trickling. Every request now ends at the sync's deadline whatever the store
sends. The server here is a real TCP server speaking the start of an HTTP answer; the commands are
real processes with a generous limit, far above their bounds and far below the unbounded cost."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.helpers import git, invoke, point_store

pytest.importorskip("boto3")
pytestmark = pytest.mark.s3

BOUND_MS = 2000


class Trickle:
    """Accepts, reads the request, then sends an HTTP status line and one header byte every 0.2 s."""

    def __init__(self) -> None:
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        self.stopped = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.stopped.is_set():
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            try:
                conn.settimeout(2)
                conn.recv(65536)
                conn.sendall(b"HTTP/1.1 200 OK\r\nX-Slow: ")
                while not self.stopped.wait(0.2):
                    conn.sendall(b"a")
            except OSError:
                pass

    def close(self) -> None:
        self.stopped.set()
        self.listener.close()


@pytest.fixture
def trickling(tmp_path, monkeypatch):
    server = Trickle()
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    monkeypatch.chdir(root)
    assert invoke("init").code == 0
    point_store(root, "s3://team-memory/slow", f"http://127.0.0.1:{server.port}", sync_bound_ms=BOUND_MS,
                sync_deadline_ms=BOUND_MS)
    assert invoke("note", "--session", "s1", "the retry fix waits for the sandbox account").code == 0
    yield root
    server.close()


def run(root: Path, *args: str, env: dict[str, str] | None = None) -> tuple[float, subprocess.CompletedProcess]:
    env = {**os.environ, "AWS_ACCESS_KEY_ID": "AKIDSLOWSTORE", "AWS_SECRET_ACCESS_KEY": "slow", **(env or {})}
    t0 = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-m", "stele", *args], capture_output=True, text=True, cwd=root,
                              env=env, timeout=90)
    except subprocess.TimeoutExpired:
        pytest.fail(f"`stele {' '.join(args)}` was still waiting on a trickling store after 90 s")
    return time.monotonic() - t0, done


def test_a_trickling_store_holds_sync_only_to_its_bound(trickling):
    took, done = run(trickling, "session", "sync")
    assert done.returncode == 1, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "run `stele session sync` again" in done.stderr
    assert took < 45, took  # the bound is 2 s; unbounded, a trickle never ends
    assert "the retry fix" in (trickling / ".stele/wal/s1.jsonl").read_text()


def test_a_trickling_store_holds_doctor_only_to_the_sync_deadline(trickling):
    took, done = run(trickling, "doctor")
    assert "unreachable" in done.stdout + done.stderr, done.stdout + done.stderr
    assert took < 45, took


def test_a_hooks_background_sync_ends_and_frees_the_lock(trickling):
    """The detached sync a hook starts ends at its deadline, so the next sync is not `Busy` forever."""
    t0 = time.monotonic()
    try:
        subprocess.run([sys.executable, "-m", "stele.index.teamsync", str(trickling), "--push", "--pull"],
                       cwd=trickling, timeout=90, capture_output=True,
                       env={**os.environ, "AWS_ACCESS_KEY_ID": "AKIDSLOWSTORE", "AWS_SECRET_ACCESS_KEY": "slow"})
    except subprocess.TimeoutExpired:
        pytest.fail("a hook's background sync was still holding the sync lock after 90 s")
    assert time.monotonic() - t0 < 45
    outcome = json.loads((trickling / ".stele/state/sync/outcome.json").read_text())
    assert "deadline" in outcome["error"], outcome
