#!/usr/bin/env python3
"""Spike (issue 34.5): can git's own stat cache tell a hook in its own process that the tracked facts
under `docs/memory/` are unchanged, cheaper than `index.sources.scan` stat-ing every file?

    .venv/bin/python bench/git_stat_cache.py bench/out/rec-10000 [--runs 15]

Timed, each the median of `--runs` (warm page cache), on the record's memory folder:
- `sources.scan` in-process (what a hook does: one stat per file, folders by their listing);
- `git ls-files --debug` (the index's recorded stat data, no lstat: what git knows without looking);
- `git diff-files --quiet` (git's freshness check: one lstat per tracked file against that data);
- `git status --porcelain` with `core.untrackedCache` on (adds the untracked files, folders by mtime);
- reading `.git/index` in-process (the entries' stat data parsed in Python, no lstat).
git has no file-system monitor of its own on Linux (`git fsmonitor--daemon` is macOS and Windows
only; Linux needs watchman through a hook), so every git path that answers "unchanged" still lstats
each tracked file, plus a process start; only the index read avoids the lstats, and it cannot see an
edit saved after the last `git add` or `git status`.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path


def median_ms(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def read_index(path: Path) -> int:
    """The number of entries of a git index (version 2), with each entry's stat data unpacked."""
    import struct

    data = path.read_bytes()
    _sig, version, count = struct.unpack(">4sII", data[:12])
    if version != 2:
        raise SystemExit(f"index version {version}: this spike reads version 2 only")
    offset, out = 12, 0
    for _ in range(count):
        struct.unpack_from(">10I20sH", data, offset)  # ctime, mtime, dev, ino, mode, uid, gid, size, sha, flags
        name_len = struct.unpack_from(">H", data, offset + 60)[0] & 0xFFF
        offset += (62 + name_len + 8) & ~7
        out += 1
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("repo", type=Path)
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    repo = args.repo.resolve()
    os.chdir(repo)
    from stele.index import sources
    from stele.project import Project

    project = Project(repo)
    memory = str(project.memory_dir.relative_to(repo))
    subprocess.run(["git", "add", "-A", memory], check=True)
    subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "record", "--allow-empty"],
                   check=True)
    subprocess.run(["git", "config", "core.untrackedCache", "true"], check=True)
    subprocess.run(["git", "update-index", "--untracked-cache", "--refresh"], capture_output=True)
    files = len(subprocess.run(["git", "ls-files", memory], capture_output=True, text=True).stdout.splitlines())

    def git(*cmd: str):
        return lambda: subprocess.run(["git", *cmd], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    rows = {
        "sources.scan, in-process (a hook's check)": lambda: sources.scan(project),
        "git ls-files --debug (stat data, no lstat)": git("ls-files", "--debug", "--", memory),
        "git diff-files --quiet (lstat each)": git("diff-files", "--quiet", "--", memory),
        "git status --porcelain, untracked cache": git("status", "--porcelain", "--", memory),
        "git --version (a process start)": git("--version"),
        ".git/index parsed in Python (no lstat)": lambda: read_index(repo / ".git" / "index"),
    }
    print(f"{repo}: {files} tracked files under {memory}/; git {subprocess.run(['git', '--version'], capture_output=True, text=True).stdout.split()[-1]}; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; median of {args.runs}")
    for name, fn in rows.items():
        print(f"  {name:<45} {median_ms(fn, args.runs):7.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
