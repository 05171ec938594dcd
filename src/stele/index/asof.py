"""The record as it stood at a moment: what `--as-of DATE|COMMIT` answers from.

A past state is a project of its own, laid out in a cache folder under the live index
(`.stele/index/asof/<commit>-<time>/`): the fact files of `docs/memory/` as committed at that commit
(read with `git ls-tree` and one `git cat-file`, never by checking anything out), the session entries
written up to that time (filtered by their `ts`), and a copy of today's `.stele/config.yaml` (the
settings a question is answered with are today's; the record is the past one). The normal
`open_index` then builds and refreshes its index there exactly as it does the live one, so a past
answer runs the same search, walk and ranking. The live index, the working tree and the WAL are only
read.

Which commit a date means: the newest commit on the current branch's first-parent history committed
at or before it (a merged branch's own commits are not what this branch held then). A date alone is
the end of that day, UTC. A commit means its committer time for the session log. Uncommitted fact
files never count: they were not in any past record.

The fact files of a commit never change, so they are written once per folder; the session entries up
to its time can (a log pulled from a teammate, an entry logged with its original time), so they are
filtered again on every use and rewritten only when they differ, which the index refresh picks up.
At most KEEP past states are kept, least recently used first out; one still open elsewhere stays.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import time
from pathlib import Path
from typing import Any

from .. import atomic, clock, gitrepo
from ..errors import SteleError
from ..plain import dataclass
from ..project import Project

CACHE = "asof"  # under the live index folder: derived, gitignored, deleted with the index
KEEP = 8  # past states kept; each holds a copy of the record then and its index
READY = ".stele/ready"  # written last: the fact files of the commit are all there
STALE_TMP_S = 3600  # a half-built folder this old was left by a killed process
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[T ].*)?$")
FLAG = "--as-of"
FORMS = "a date (2026-03-04, 2026-03-04T10:00:00Z) or a commit (a sha, tag or branch)"


@dataclass(frozen=True)
class Moment:
    """A past state of the record: the commit whose facts count, and the time up to which session
    entries count."""
    asked: str  # as given: the option's value, or the words of the prompt that asked
    commit: str  # full sha
    cutoff: str  # clock.FORMAT, UTC

    @property
    def day(self) -> dt.date:
        """The calendar day expiry and review are judged on (then, not today)."""
        return clock.parse_time(self.cutoff).date()

    @property
    def key(self) -> str:
        return f"{self.commit[:12]}-{self.cutoff.replace('-', '').replace(':', '')}"

    def as_dict(self) -> dict[str, Any]:
        return {"asked": self.asked, "time": self.cutoff, "commit": self.commit}

    def line(self) -> str:
        return f"as of {self.cutoff} (the record at commit {self.commit[:7]}; asked: {self.asked})"


def parse_date(text: str) -> dt.datetime | None:
    """`text` as a UTC moment when it is written as a date (None when it is not date-shaped); a date
    alone is the end of that day, a time without a zone is UTC. ValueError for a date-shaped text
    that is no date (`2026-13-40`)."""
    text = text.strip()
    if not DATE_RE.match(text):
        return None
    moment = dt.datetime.fromisoformat(text)  # 3.11: `Z`, offsets and fractions of a second
    if len(text) == 10:
        moment = moment.replace(hour=23, minute=59, second=59)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.astimezone(dt.UTC).replace(microsecond=0)


def resolve(project: Project, spec: str, flag: str = FLAG) -> Moment:
    """The past state `spec` names (a date or a commit); a SteleError naming `flag` and what to do
    when it names none."""
    spec = spec.strip()
    if not spec:
        raise SteleError(f"{flag} is empty: give {FORMS}")
    try:
        when = parse_date(spec)
    except ValueError:
        raise SteleError(f"{flag} {spec!r} is not a valid date: write it as YYYY-MM-DD or "
                         "YYYY-MM-DDTHH:MM:SSZ") from None
    if when is not None:
        return at(project, when, spec, flag)
    if spec.startswith("-"):
        raise SteleError(f"{flag} {spec!r}: give {FORMS}")
    sha = gitrepo.rev_parse(project.root, spec)
    if sha is None:
        raise SteleError(f"{flag} {spec!r} is neither a date nor a commit here: give {FORMS} "
                         "(`git log --oneline` lists the commits)")
    return Moment(spec, sha, clock.iso(dt.datetime.fromisoformat(gitrepo.commit_time(project.root, sha))))


def at(project: Project, when: dt.datetime, asked: str, flag: str = FLAG) -> Moment:
    """The past state at `when` (aware): the last commit on the branch's first-parent history
    committed by then, and session entries up to then."""
    cutoff = clock.iso(when)
    sha = gitrepo.last_commit_before(project.root, cutoff)
    if sha is None:
        first = gitrepo.first_commit(project.root)
        if first is None:
            raise SteleError(f"{flag} {asked!r}: this repository has no commits yet, so it has no past "
                             "record; commit the record first")
        since = clock.iso(dt.datetime.fromisoformat(gitrepo.commit_time(project.root, first)))
        raise SteleError(f"{flag} {asked!r} is before the first commit of this branch ({since}): "
                         "give a later date, or a commit")
    return Moment(asked, sha, cutoff)


def prepare(project: Project, moment: Moment) -> Project:
    """The project holding the record at `moment`, in its cache folder (made when missing), with its
    session entries brought up to date; open it with `open_index` as any project."""
    cache = project.index_dir / CACHE
    home = cache / moment.key
    if not (home / READY).is_file():
        _lay_out(project, moment, cache, home)
    _copy_config(project, home)
    _write_sessions(project, moment, home)
    os.utime(home)  # used now: the last to be pruned
    _prune(cache, home)
    return Project(home)


def _lay_out(project: Project, moment: Moment, cache: Path, home: Path) -> None:
    """Write the commit's fact files into a fresh folder and move it into place whole, so a reader
    never sees half a record (of two processes doing it at once, the second's copy is dropped)."""
    rel = project.rel(project.memory_dir).rstrip("/")
    blobs = gitrepo.tree_blobs(project.root, moment.commit, rel)
    contents = gitrepo.read_blobs(project.root, list(blobs.values()))
    cache.mkdir(parents=True, exist_ok=True)
    tmp = cache / f".{moment.key}.{os.getpid()}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / rel).mkdir(parents=True)
    (tmp / ".stele" / "wal").mkdir(parents=True)
    for path, sha in blobs.items():
        if not path.startswith(rel + "/"):
            continue
        target = tmp / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(contents.get(sha) or b"")  # a symbolic link's blob is its target: no fact
    (tmp / READY).write_text(moment.commit + "\n", encoding="utf-8")
    try:
        os.rename(tmp, home)
    except OSError:  # another process put it there first
        shutil.rmtree(tmp, ignore_errors=True)
        if not (home / READY).is_file():
            raise SteleError(f"cannot prepare the record as of {moment.cutoff} in {project.rel(home)}; "
                             "delete that folder and try again") from None


def _copy_config(project: Project, home: Path) -> None:
    """Today's settings (models, weights, redaction), unchanged when they did not change."""
    wanted = project.config_path.read_bytes() if project.config_path.is_file() else None
    target = home / ".stele" / "config.yaml"
    have = target.read_bytes() if target.is_file() else None
    if wanted != have:
        if wanted is None:
            target.unlink()
        else:
            atomic.write(target, wanted, durable=False)


def _write_sessions(project: Project, moment: Moment, home: Path) -> None:
    """The session entries written up to the cutoff, one log per session; a log is rewritten only
    when what it should hold changed. An entry whose time cannot be read is left out: it cannot be
    placed before or after."""
    from ..session.wal import ReadReport, check_session_name, read_all

    logs: dict[str, list[str]] = {}
    for entry in read_all(project, ReadReport()):  # what is unreadable the live index reports
        ts = _entry_time(entry.ts)
        if ts is None or ts > moment.cutoff:
            continue
        try:
            name = check_session_name(entry.session)
        except SteleError:
            name = "_"
        logs.setdefault(name, []).append(json.dumps(entry.as_dict(), ensure_ascii=False) + "\n")
    wal = home / ".stele" / "wal"
    wal.mkdir(parents=True, exist_ok=True)
    for old in wal.glob("*.jsonl"):
        if old.name[:-len(".jsonl")] not in logs:
            old.unlink()
    for name, lines in logs.items():
        target = wal / f"{name}.jsonl"
        data = "".join(lines).encode("utf-8")
        if not target.is_file() or target.read_bytes() != data:
            atomic.write(target, data, durable=False)


def _entry_time(ts: str) -> str | None:
    """A session entry's time in clock.FORMAT (how Stele writes it; anything else ISO is converted)."""
    try:
        return clock.iso(clock.parse_time(ts))
    except ValueError:
        pass
    try:
        moment = dt.datetime.fromisoformat(ts)
    except ValueError:
        return None
    return clock.iso(moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC))


def _prune(cache: Path, keep: Path) -> None:
    """Drop past states beyond the KEEP most recently used (never `keep`, nor one whose index another
    process holds open), and half-built folders a killed process left."""
    try:
        folders = [p for p in cache.iterdir() if p.is_dir()]
    except OSError:
        return
    now = time.time()
    for tmp in [p for p in folders if p.name.startswith(".")]:
        try:
            if now - tmp.stat().st_mtime > STALE_TMP_S:
                shutil.rmtree(tmp, ignore_errors=True)
        except OSError:
            pass
    states = sorted((p for p in folders if not p.name.startswith(".")), key=_mtime, reverse=True)
    for old in states[KEEP:]:
        if old != keep and _unused(old):
            shutil.rmtree(old, ignore_errors=True)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _unused(home: Path) -> bool:
    """No process reads or builds this state's index (one try at each of its locks)."""
    from .handle import BUILD_LOCK, LOCK

    folder = Project(home).index_dir
    fds = []
    try:
        for name in (LOCK, BUILD_LOCK):
            path = folder / name
            if not path.is_file():
                continue
            fd = os.open(path, os.O_RDWR)
            fds.append(fd)
            atomic.lock_fd(fd, exclusive=True, deadline=time.monotonic())
        return True
    except OSError:  # LockTimeout is an OSError
        return False
    finally:
        for fd in fds:
            os.close(fd)
