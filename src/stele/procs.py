"""Child processes started in a session of their own (`start_new_session=True`): stopping one stops
everything it started (a git remote helper, a check command's shell and its children, a harness and
its hooks), also on Ctrl-C."""
from __future__ import annotations

import os
import signal
import subprocess


def kill(proc: subprocess.Popen) -> None:
    """SIGKILL the process's whole session (the process alone when its group is gone or not ours)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        try:
            proc.kill()
        except OSError:
            pass


def stop(proc: subprocess.Popen) -> None:
    """`kill`, then reap it; something that left its session and still holds a pipe is left behind."""
    kill(proc)
    try:
        proc.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        pass
