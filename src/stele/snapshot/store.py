"""Stored snapshots: `.stele/snapshots/<run>.json`, written once and never modified.

"What the agent saw" must stay what it saw: the file embeds every delivered text, is created with a
hard link from a fully written temp file (so it appears whole or not at all, and an existing run is
never overwritten), and is left read-only. Run ids are ULIDs, so file names sort by time. Snapshots are
per-machine history like the WAL: `.stele/` keeps them out of git.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .. import atomic
from ..errors import SteleError, UsageError
from ..project import Project
from .model import Snapshot

_RUN_RE = re.compile(r"^[0-9A-HJKMNP-TV-Z]{1,26}$")


def snapshots_dir(project: Project) -> Path:
    return project.local("snapshots")


def save(project: Project, snap: Snapshot) -> Path:
    """Write `snap` as its run's file; refuses to replace an existing run."""
    folder = snapshots_dir(project)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{snap.run}.json"
    snap.stored = project.rel(path)
    data = json.dumps(snap.as_dict(), indent=1, ensure_ascii=False) + "\n"
    tmp = project.local("tmp")
    _clear_stale(tmp)
    try:
        atomic.write(path, data, mode=0o444, exclusive=True, tmp_dir=tmp)
    except FileExistsError:
        snap.stored = None
        raise SteleError(f"{project.rel(path)} already exists: a stored run is never replaced") from None
    return path


STALE_TMP_S = 600  # no snapshot takes this long to write: an older temporary is a killed writer's


def _clear_stale(folder: Path) -> None:
    """Temporaries are written outside `snapshots/` (a killed claim must not leave half a run among
    the runs); the ones a kill left are removed by a later save, once surely abandoned."""
    import os
    import time

    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    cutoff = time.time() - STALE_TMP_S
    for entry in entries:
        try:
            if entry.name.endswith(".tmp") and entry.stat(follow_symlinks=False).st_mtime < cutoff:
                os.unlink(entry.path)
        except OSError:
            pass


def resolve(project: Project, run: str) -> Path:
    """The file of `run` (a full run id or a unique prefix of one)."""
    wanted = run.strip().upper()
    if not _RUN_RE.match(wanted):
        raise UsageError(f"{run!r} is not a run id: `stele snapshot list` shows them")
    folder = snapshots_dir(project)
    matches = sorted(folder.glob(f"{wanted}*.json")) if folder.is_dir() else []
    if not matches:
        raise SteleError(f"no stored snapshot {wanted} in {project.rel(folder)}/: `stele snapshot list` "
                         "shows the runs")
    if len(matches) > 1:
        raise UsageError(f"run {wanted} is ambiguous ({len(matches)} runs start with it): give more "
                         "characters")
    return matches[0]


def load(project: Project, run: str) -> dict[str, Any]:
    path = resolve(project, run)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise SteleError(f"{project.rel(path)}: cannot read the stored snapshot ({e})") from None
    if not isinstance(data, dict) or "run" not in data:
        raise SteleError(f"{project.rel(path)}: not a stored snapshot (no `run`)")
    return data


def runs(project: Project) -> Iterator[dict[str, Any]]:
    """A summary of every stored run, oldest first; unreadable files are reported, not fatal."""
    folder = snapshots_dir(project)
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else ():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            usage = {row["part"]: row for row in data["usage"]}
            task = data["inputs"].get("task") or {}
            yield {"run": data["run"], "created": data["created"], "task": task.get("id"),
                   "records": usage["records"]["items"], "code": usage["code"]["items"],
                   "briefing": usage["briefing"]["items"], "bytes": usage["total"]["bytes"],
                   "path": project.rel(path)}
        except (OSError, ValueError, KeyError, TypeError) as e:
            yield {"run": path.stem, "error": f"cannot read {project.rel(path)} ({type(e).__name__}: {e})",
                   "path": project.rel(path)}
