"""Session memory: an append-only JSONL write-ahead log per session under `.stele/wal/`.

Why it is shaped this way:
- Several agents may share one checkout, so every append takes an exclusive `flock` on the file and
  writes one whole line with a single `write()` on an `O_APPEND` descriptor, then fsyncs: lines never
  interleave and an acknowledged line survives a crash.
- Nothing is rewritten in place. A crash mid-write can leave a torn last line; readers skip it (and
  say so once) instead of failing, because the WAL must never make a command fail.
- Every line is redacted before it is written, with the same patterns as committed facts.
- A session's log is one live file plus any gzipped segments `stele session compact` moved, whole,
  into `archive/` (see `archive.py`). Readers see archived segments first, then the live file, so
  compaction changes where lines are stored, never which lines there are. An appender that waited on
  the lock of a file compaction just archived notices (the path no longer names its inode) and
  reopens, so no line lands in an archived file.
"""
from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from .. import clock
from ..errors import SteleError, UsageError, say
from ..ids import session_entry_id
from ..plain import dataclass, field
from ..project import Project

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SCHEMA_VERSION = 1
SESSION_ENV = "STELE_SESSION"
ARCHIVE_DIR = "archive"
ARCHIVE_SUFFIX = ".jsonl.gz"
TEAM_DIR = "team"  # segments pulled from the team store: team/<session>/<seq>.jsonl (see session.sync)
TYPES = ("prompt", "note", "decision", "outcome", "steering", "claim", "release", "stage", "snapshot")
_SESSION_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


@dataclass
class Entry:
    id: str
    ts: str
    session: str
    type: str
    text: str
    agent: str | None = None
    task: str | None = None
    refs: dict[str, Any] = field(default_factory=dict)
    thread: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # unknown keys, kept for forward compatibility

    @property
    def paths(self) -> list[str]:
        """The files the entry is about (`refs.paths`). A log is hand-editable: anything but a list of
        strings there counts as no path, never as a reason for a reader to fail."""
        paths = self.refs.get("paths")
        return [p for p in paths if isinstance(p, str)] if isinstance(paths, list) else []

    @property
    def prints(self) -> dict[str, str]:
        """The fingerprints of those files when the entry was written (`refs.prints`; anything else
        there counts as none)."""
        prints = self.refs.get("prints")
        return {k: v for k, v in prints.items() if isinstance(k, str) and isinstance(v, str)} \
            if isinstance(prints, dict) else {}

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"v": SCHEMA_VERSION, "id": self.id, "ts": self.ts, "session": self.session}
        if self.agent:
            data["agent"] = self.agent
        data["type"] = self.type
        data["text"] = self.text
        if self.task:
            data["task"] = self.task
        if self.refs:
            data["refs"] = self.refs
        if self.thread:
            data["thread"] = self.thread
        data.update(self.extra)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Entry:
        known = {"v", "id", "ts", "session", "agent", "type", "text", "task", "refs", "thread"}
        raw_refs = data.get("refs")
        refs = raw_refs if isinstance(raw_refs, dict) else {}
        return cls(id=str(data["id"]), ts=str(data.get("ts", "")), session=str(data.get("session", "")),
                   type=str(data.get("type", "note")), text=str(data.get("text", "")),
                   agent=data.get("agent"), task=data.get("task"), refs=refs, thread=data.get("thread"),
                   extra={k: v for k, v in data.items() if k not in known})


_PLAIN_SESSION_RE = re.compile(r"^(?:S-[0-9A-HJKMNP-TV-Z]{10,32}"
                               r"|[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}|s-[0-9a-f]{32})$")


def check_session_name(name: str) -> str:
    """A session id names files, so it is checked: its characters, and that it is not a credential
    (`--session ghp_...` would put the token in a file name). Ours, UUIDs and hashes skip the redactor."""
    if not _SESSION_NAME_RE.match(name):
        raise UsageError(f"session id {name!r}: use letters, digits, '.', '_' or '-' (at most 128)")
    if not _PLAIN_SESSION_RE.match(name):
        from ..redact import redact

        if redact(name).secrets:
            raise UsageError("the session id holds a credential; choose another id (it names files under "
                             ".stele/wal/)")
    return name


def wal_path(project: Project, session: str) -> Path:
    return project.wal_dir / f"{check_session_name(session)}.jsonl"


def append(project: Project, entry: Entry, extra_patterns: tuple[str, ...] | None = None,
           found: Counter | None = None, durable: bool = True) -> Entry:
    """Redact and append one entry to its session's log (locked, flushed, fsynced unless not
    `durable`: `sessions.DURABLE_BOOKKEEPING` says which lines need not be). What was redacted (kind of
    secret -> count) is added to `found` when given."""
    from .. import atomic

    if entry.type not in TYPES:
        raise UsageError(f"entry type {entry.type!r} is not one of " + ", ".join(TYPES))
    patterns = project.config["redaction.patterns"] if extra_patterns is None else extra_patterns
    counts: Counter = Counter() if found is None else found
    # redact values, not the serialized JSON: that keeps the line valid
    clean = redact_entry(entry.as_dict(), patterns, counts)
    line = json.dumps(clean, ensure_ascii=False, separators=(", ", ": "))
    data = (line + "\n").encode("utf-8")
    path = wal_path(project, entry.session)
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            atomic.lock_fd(fd)
            try:
                if is_replaced(fd, path):
                    continue  # archived while we waited for the lock: append to the new live file
                _repair_torn_tail(fd)
                _append_whole(fd, data, durable)
                return Entry.from_dict(clean)
            finally:
                atomic.unlock_fd(fd)
        finally:
            os.close(fd)


def _append_whole(fd: int, data: bytes, durable: bool = True) -> None:
    """Write one line (and fsync it when `durable`), or leave the log as it was: a full disk stops
    `os.write` part way, and a partial line is cut off again (under the lock, so no other writer's line
    follows it)."""
    start = os.fstat(fd).st_size
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        if durable:
            os.fsync(fd)
    except OSError:
        try:
            os.ftruncate(fd, start)
        except OSError:
            pass
        raise


def redact_entry(data: dict[str, Any], patterns: tuple[str, ...] | list[str],
                 found: Counter[str]) -> dict[str, Any]:
    """An entry's values redacted (its serialized JSON stays valid): what every line that is written
    or shipped passes through."""
    from ..redact import Redactor, Tally

    tally = Tally()
    clean = Redactor(patterns).redact_data(data, tally)
    found.update(tally.found)  # one secret in two fields is told once
    return clean


def is_replaced(fd: int, path: Path) -> bool:
    """Does `path` no longer name the file open as `fd` (moved away or unlinked by compaction)?"""
    mine = os.fstat(fd)
    try:
        now = os.stat(path)
    except FileNotFoundError:
        return True
    return (mine.st_ino, mine.st_dev) != (now.st_ino, now.st_dev)


def _repair_torn_tail(fd: int) -> None:
    """If a crashed writer left a line without its newline, end it so ours starts on a fresh line.
    (The torn text itself stays: nothing is ever rewritten, readers skip it.)"""
    size = os.fstat(fd).st_size
    if size and os.pread(fd, 1, size - 1) != b"\n":
        os.write(fd, b"\n")


def new_entry(session: str, type_: str, text: str, ts: str | None = None, **fields: Any) -> Entry:
    """A new entry stamped now, or at `ts` (stored format) when it records something that happened earlier."""
    return Entry(id=session_entry_id(), ts=ts or clock.now_iso(), session=session, type=type_, text=text, **fields)


@dataclass
class ReadReport:
    skipped: list[str] = field(default_factory=list)  # `path:line: why` for each unreadable line
    end: int = 0  # a live log: the byte offset just past its last whole line (where to read on from)


MAX_LINE = 4 << 20  # bytes; an entry is a note or a prompt, never megabytes: longer is damage, skipped
MAX_EXPANSION = 100  # an archive may hold at most this many times its size (JSONL packs ~5-20x)
EXPANSION_FLOOR = 16 << 20  # ...and at least this much, whatever its size


def read_file(path: Path, report: ReadReport | None = None, start: int = 0) -> Iterator[Entry]:
    """Entries of one log (live `.jsonl` or archived `.jsonl.gz`), in file order; unreadable lines
    are skipped and noted in `report`. Read as a stream, never whole: an archive stops at
    MAX_EXPANSION times its size (a gzip bomb is bounded, not decompressed into memory) and a line past
    MAX_LINE is skipped without being held. A live log may be read from byte `start`, the end of a
    line a previous read reported (`ReadReport.end`): logs are only appended to. (Line numbers in the
    report then count from there.)"""
    import zlib

    def skip(why: str) -> None:
        if report is not None:
            report.skipped.append(why)

    live = not path.name.endswith(".gz")
    try:
        if not live:
            import gzip

            limit = max(EXPANSION_FLOOR, MAX_EXPANSION * path.stat().st_size)
            stream: Any = gzip.open(path, "rb")  # noqa: SIM115 (closed by the `with` below)
        else:
            limit, stream = None, open(path, "rb")  # noqa: SIM115
            if start:
                stream.seek(start)
    except OSError as e:
        skip(f"{path}: cannot read ({e})")
        return
    whole = [0]  # bytes of whole lines read so far
    with stream:
        try:
            for n, line, torn in _lines(stream, limit, path, skip, whole):
                if not line.strip():
                    continue
                try:
                    data = json.loads(line)
                    if not isinstance(data, dict) or "id" not in data:
                        raise ValueError("not an entry object")
                    yield Entry.from_dict(data)
                except (ValueError, UnicodeDecodeError) as e:
                    why = "torn last line (a writer was interrupted)" if torn else f"unreadable line ({e})"
                    skip(f"{path}:{n}: {why}; skipped")
        except (OSError, EOFError, zlib.error) as e:  # a damaged archive is reported, never fatal
            skip(f"{path}: cannot read past this point ({e})")
    if report is not None and live:
        report.end = start + whole[0]  # a line still being written is read next time


def _lines(stream: Any, limit: int | None, path: Path, skip: Any,
           whole: list[int]) -> Iterator[tuple[int, bytes, bool]]:
    """(line number, line, torn) in order, read in blocks; `torn` marks a last line without its newline.
    `whole[0]` counts the bytes of the whole lines (newlines included) passed so far."""
    n, total, pending, dropping, dropped = 0, 0, b"", False, 0
    while True:
        block = stream.read(1 << 16)
        if not block:
            break
        total += len(block)
        if limit is not None and total > limit:
            skip(f"{path}: expands to over {limit >> 20} MiB, {MAX_EXPANSION}x its size: not a session log; "
                 "read up to there")
            return
        parts = (pending + block).split(b"\n")
        pending = parts.pop()
        for part in parts:
            whole[0] += dropped + len(part) + 1
            dropped = 0
            if dropping:  # the end of an over-long line, already counted and reported
                dropping = False
                continue
            n += 1
            yield n, part, False
        if dropping:
            dropped += len(pending)
            pending = b""  # still inside the over-long line
        elif len(pending) > MAX_LINE:
            n += 1
            skip(f"{path}:{n}: a line over {MAX_LINE} bytes; skipped")
            dropped += len(pending)
            pending, dropping = b"", True
    if pending and not dropping:
        yield n + 1, pending, True


def archive_dir(project: Project) -> Path:
    return project.wal_dir / ARCHIVE_DIR


def session_of_segment(path: Path) -> str:
    """`archive/<session>.<ULID>.jsonl.gz` -> session (a session name may itself contain dots)."""
    return path.name[: -len(ARCHIVE_SUFFIX)].rsplit(".", 1)[0]


def team_dir(project: Project) -> Path:
    return project.wal_dir / TEAM_DIR


def team_segment_path(project: Project, session: str, seq: int) -> Path:
    return team_dir(project) / check_session_name(session) / f"{seq:08d}.jsonl"


def own_sessions(project: Project) -> dict[str, list[Path]]:
    """This clone's own sessions (not pulled ones) -> the files holding their lines."""
    out: dict[str, list[Path]] = {}
    for path in segments(project, team=False):
        name = session_of_segment(path) if path.name.endswith(ARCHIVE_SUFFIX) else path.name[: -len(".jsonl")]
        out.setdefault(name, []).append(path)
    return out


def segments(project: Project, session: str | None = None, team: bool = True) -> list[Path]:
    """The files holding a session's lines (every session's, by name, when `session` is None): its
    archived segments oldest first, then its live file, then (unless `team` is False) the segments
    pulled from the team store in sequence order."""
    by_session: dict[str, list[Path]] = {}
    archived = archive_dir(project)
    if archived.is_dir():
        pattern = f"{check_session_name(session)}.*{ARCHIVE_SUFFIX}" if session else f"*{ARCHIVE_SUFFIX}"
        for path in sorted(archived.glob(pattern)):
            name = session_of_segment(path)
            if session is None or name == session:
                by_session.setdefault(name, []).append(path)
    if project.wal_dir.is_dir():
        for path in project.wal_dir.glob(f"{check_session_name(session)}.jsonl" if session else "*.jsonl"):
            by_session.setdefault(path.name[: -len(".jsonl")], []).append(path)
    pulled = team_dir(project)
    if team and pulled.is_dir():
        folders = [pulled / check_session_name(session)] if session else sorted(pulled.iterdir())
        for folder in folders:
            if folder.is_dir():
                by_session.setdefault(folder.name, []).extend(sorted(folder.glob("*.jsonl")))
    return [path for name in sorted(by_session) for path in by_session[name]]


def read_all(project: Project, report: ReadReport | None = None,
             session: str | None = None, team: bool = True) -> Iterator[Entry]:
    """Every entry of every session log (or of one `session`): each session's segments in order,
    sessions by name. An entry seen twice (a compaction interrupted between archiving and removing
    the live file) is yielded once."""
    seen: set[str] = set()
    for path in segments(project, session, team):
        for entry in read_file(path, report):
            if entry.id not in seen:
                seen.add(entry.id)
                yield entry


def warn_skipped(report: ReadReport) -> None:
    """Say once, on stderr, what was skipped."""
    if report.skipped:
        first = report.skipped[0]
        more = f" (and {len(report.skipped) - 1} more)" if len(report.skipped) > 1 else ""
        say(f"stele: {first}{more}")


def current_session(explicit: str | None = None) -> str | None:
    """The session id: the flag, else STELE_SESSION (a hook reads the harness's own id from its
    payload first: `hooks.payload`)."""
    if explicit:
        return check_session_name(explicit)
    if os.environ.get(SESSION_ENV):
        return check_session_name(os.environ[SESSION_ENV])
    return None


def require_session(explicit: str | None = None) -> str:
    session = current_session(explicit)
    if session is None:
        raise SteleError("no session: run `stele session start` and export STELE_SESSION=<id>, "
                         "or pass --session")
    return session
