"""A claim's remote misbehaving, through the real CLI in its own process: a remote that accepts the
connection and never answers, a remote helper that never answers, a remote that refuses the push.
Each must end the command with one line saying what happened, soon, and change nothing locally."""
import os
import socket
import stat
import threading
import time
from pathlib import Path

import pytest

from stele.project import Project
from stele.tasks import claims
from tests.helpers import git, invoke
from tests.torture import stele

WAIT_MS = 1000  # the remote timeout these tests set; the unbounded cost is forever
BOUND_S = 60  # far above WAIT_MS and a busy machine's start-up, far below forever


@pytest.fixture
def task(repo) -> str:
    """A committed task in a repository whose claim remote calls wait WAIT_MS."""
    config = repo / ".stele" / "config.yaml"
    text = config.read_text()
    assert "remote_timeout_ms: 30000" in text  # the template documents the setting
    config.write_text(text.replace("remote_timeout_ms: 30000", f"remote_timeout_ms: {WAIT_MS}"))
    done = invoke("task", "new", "Fix the login bug", "--json")
    assert done.code == 0, done.err
    return done.out.split('"id": "')[1].split('"')[0]


@pytest.fixture
def silent_listener():
    """A TCP port that accepts connections and never says a word (a hung git daemon, a black hole)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join(5)
    for conn in held:
        conn.close()
    server.close()


def _timed(root: Path, *args: str, env: dict | None = None):
    start = time.monotonic()
    done = stele(root, *args, timeout=BOUND_S) if env is None else _with_env(root, args, env)
    return done, time.monotonic() - start


def _with_env(root: Path, args: tuple[str, ...], env: dict):
    import subprocess
    import sys

    from tests.torture import _env

    return subprocess.run([sys.executable, "-m", "stele", *args], cwd=root, env={**_env(), **env},
                          capture_output=True, text=True, timeout=BOUND_S)


def test_a_remote_that_never_answers_ends_the_claim_with_one_line_and_nothing_written(repo, task,
                                                                                       silent_listener):
    url = f"git://127.0.0.1:{silent_listener}/stele.git"
    done, took = _timed(repo, "task", "claim", task, "--agent", "alice", "--remote-name", url)
    assert done.returncode == 1, done.stderr
    assert done.stderr.count("\n") == 1
    assert f"cannot read claims from {url}: `git ls-remote` gave no answer in 1 s" in done.stderr
    assert "tasks.remote_timeout_ms" in done.stderr
    assert took < BOUND_S
    assert claims.read(Project(repo), task) is None and not list((repo / ".stele").glob("snapshots/*"))

    done, _ = _timed(repo, "task", "claims", "--remote-name", url)
    assert done.returncode == 1 and "`git fetch` gave no answer in 1 s" in done.stderr


def test_a_remote_helper_that_never_answers_is_stopped_with_everything_it_started(repo, task, tmp_path):
    """`stall::x` runs `git-remote-stall`, which writes its pid and sleeps: the command ends, and so
    does the helper (git's children are killed with it, none is left holding a socket)."""
    bin_dir, pid_file = tmp_path / "bin", tmp_path / "helper.pid"
    bin_dir.mkdir()
    helper = bin_dir / "git-remote-stall"
    helper.write_text(f"#!/bin/sh\necho $$ > {pid_file}\nexec sleep 600\n")
    helper.chmod(helper.stat().st_mode | stat.S_IXUSR)
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    done, took = _timed(repo, "task", "claim", task, "--agent", "alice", "--remote-name", "stall::x", env=env)
    assert done.returncode == 1 and "gave no answer in 1 s" in done.stderr, done.stderr
    assert took < BOUND_S
    pid = int(pid_file.read_text())
    for _ in range(100):  # killed at once; reaped by init a moment later
        if not _alive(pid):
            break
        time.sleep(0.1)
    assert not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_remote_that_refuses_the_push_is_told_at_once_not_retried_as_contention(repo, task, tmp_path):
    bare = tmp_path / "refusing.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    hook = bare / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'refs/stele is not allowed here' >&2\nexit 1\n")
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    done, _ = _timed(repo, "task", "claim", task, "--agent", "alice", "--remote-name", str(bare))
    assert done.returncode == 1
    assert done.stderr == (f"stele: {bare} refused the push of refs/stele/claims/{task}: pre-receive hook "
                           "declined (refs/stele is not allowed here); the remote must accept pushes to "
                           'refs/stele/* (docs/tasks.md, "Across machines")\n')
    assert claims.read(Project(repo), task) is None
    assert git(bare, "for-each-ref").strip() == ""
