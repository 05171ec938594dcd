"""A child process with a timeout that kills its whole process group: the harness (and every helper
and hook it started), or an outcome command (and whatever its shell started). On Ctrl-C too."""
from __future__ import annotations

import subprocess
from pathlib import Path

from .. import procs
from ..errors import SteleError


def run(cmd: list[str] | str, cwd: Path, env: dict[str, str], timeout: int) -> tuple[int | None, str, str, bool]:
    """(exit code or None, stdout, stderr, timed out). A string is run by the shell."""
    try:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, shell=isinstance(cmd, str), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    except OSError as e:
        raise SteleError(f"could not start {cmd if isinstance(cmd, str) else cmd[0]}: {e}") from None
    try:
        out, err = proc.communicate(timeout=timeout)
        return proc.returncode, out, err, False
    except subprocess.TimeoutExpired:
        procs.kill(proc)
        out, err = proc.communicate()
        return None, out or "", err or "", True
    finally:  # Ctrl-C included: nothing of it outlives the call
        procs.kill(proc)


