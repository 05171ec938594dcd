"""Whether the resident server may run for a repository: the one home of that rule.

The resident server (`cli/resident/`) is off by default: hooks run in their own process unless
`hooks.resident: true` is set for the repository or `STELE_RESIDENT=1` for one environment. It is
never on where a detached process would be wrong whatever the setting says: with `STELE_OFF` set or
`STELE_RESIDENT=0`, in CI (`CI` set: a job's hook would leave a server behind the job), on a read-only
mount (nothing to keep fresh, nowhere to keep its lock) or on a temporary file system (tmpfs, ramfs:
a scratch checkout that is removed while the server watches it). `stele install --check` says which
applies here.

It is also the home of the few files the server keeps under `.stele/run/` (its lock, its log, when a
hook last started one, and the bench's usage lines): a CLI module never writes a file itself, and a
log that is gone is never created again (it went with a removal of the repository). None of them is
opened through a symbolic link (`_open`): `.stele/run/` can arrive in a pull request, and a link there
(`resident.spawned -> ~/.bashrc`) would have the first hook truncate the file it points to.

The caller's side imports this before anything else of Stele (`environment_refusal`), so it imports
nothing at module level but os.
"""
from __future__ import annotations

import os

ENV = "STELE_RESIDENT"
OFF_ENV = "STELE_OFF"  # hooks/run.py's switch: every hook off, nothing read, nothing written
CI_ENV = "CI"
FALSE = ("", "0", "false", "no")
TEMPORARY_FS = ("tmpfs", "ramfs")


def _set(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in FALSE


def off() -> bool:
    """`STELE_OFF=1`: every hook off (hooks/run.py), and no resident server asked or started."""
    return _set(OFF_ENV)


def environment_refusal() -> str | None:
    """Why this environment never uses the resident server (checked before any file is read), or None."""
    import sys

    if not (sys.platform.startswith("linux") and hasattr(os, "pidfd_open")):
        return "Linux only"
    if off():
        return f"{OFF_ENV} is set"
    if os.environ.get(ENV, "").strip().lower() in ("0", "false", "no", "off"):
        return f"{ENV}=0"
    if _set(CI_ENV):
        return "CI is set (a job's hook would leave a server behind the job)"
    return None


def forced() -> bool:
    """`STELE_RESIDENT=1` (or true, yes, on): on for this environment whatever the config says."""
    return _set(ENV)


def mount_refusal(root: str) -> str | None:
    """Why the repository at `root` is on a mount no server should watch (read-only, temporary), or None."""
    try:
        if os.statvfs(root).f_flag & os.ST_RDONLY:
            return "the repository is on a read-only mount"
    except OSError:
        return "the repository cannot be read"
    fstype = _fstype(os.path.realpath(root))
    if fstype in TEMPORARY_FS:
        return f"the repository is on a temporary file system ({fstype})"
    return None


def _fstype(path: str) -> str | None:
    """The file system type of the mount holding `path` (the longest mount point above it)."""
    best, kind = "", None
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                fields = line.split()
                try:
                    point = fields[4].replace("\\040", " ")
                    fstype = fields[fields.index("-") + 1]
                except (IndexError, ValueError):
                    continue
                inside = path == point or path.startswith(point.rstrip("/") + "/")
                if inside and len(point) >= len(best):
                    best, kind = point, fstype
    except OSError:
        return None
    return kind


def refusal(root: str, configured: bool) -> str | None:
    """Why no resident server runs for the repository at `root`, given its `hooks.resident`
    setting, or None when one may."""
    why = environment_refusal()
    if why is not None:
        return why
    if not (configured or forced()):
        return "hooks.resident is off (the default) and STELE_RESIDENT is not 1"
    return mount_refusal(root)


RUN_DIR = "run"  # under .stele: the server's lock and log
LOCK, LOG, SPAWNED = "resident.lock", "resident.log", "resident.spawned"


def run_path(root: str, name: str) -> str:
    return os.path.join(root, ".stele", RUN_DIR, name)


def _open(root: str, name: str, flags: int, make: bool = False) -> int:
    """A file of `.stele/run/`, never through a link (the folder or the file: OSError), so nothing
    the server keeps is written outside the repository."""
    folder = os.path.dirname(run_path(root, name))
    if make:
        os.makedirs(folder, exist_ok=True)
    if os.path.islink(folder):
        raise OSError(f"{folder} is a symbolic link")
    return os.open(run_path(root, name), flags | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)


def take_lock(root: str) -> int | None:
    """The server's lock of `root` (held for its life: at most one server per repository), or None
    when another server holds it or it cannot be made."""
    import fcntl

    try:
        fd = _open(root, LOCK, os.O_RDWR | os.O_CREAT, make=True)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def log(root: str, line: str, create: bool = False) -> None:
    """Append a line to the server's log; the file is created only when the server starts (`create`)."""
    import time

    try:
        fd = _open(root, LOG, os.O_WRONLY | os.O_APPEND | (os.O_CREAT if create else 0))
        with open(fd, "a", encoding="utf-8") as f:
            f.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {os.getpid()} {line}\n")
    except OSError:
        pass


def spawned_within(root: str, seconds: float) -> bool:
    """Did a hook start a server for `root` in the last `seconds`?"""
    import time

    try:
        return time.time() - os.lstat(run_path(root, SPAWNED)).st_mtime < seconds
    except OSError:
        return False


def mark_spawned(root: str) -> bool:
    """Record that a hook starts a server for `root` now; False when it cannot be recorded."""
    try:
        fd = _open(root, SPAWNED, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, make=True)
        with open(fd, "w", encoding="utf-8") as f:
            f.write(f"{os.getpid()}\n")
    except OSError:
        return False
    return True


def record_usage(path: str, fields: list) -> None:
    """One line of a call's usage (exit code, CPU, peak RSS, faults) for the bench (`STELE_RESIDENT_USAGE`)."""
    with open(path, "a", encoding="utf-8") as f:
        f.write(" ".join(map(str, fields)) + "\n")
