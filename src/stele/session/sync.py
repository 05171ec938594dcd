"""Team session memory: push this clone's session lines to the store, pull everyone else's.

The protocol (docs/sessions.md, "Team session memory"): a session's lines leave as immutable
segments `PREFIX/wal/<session>/<seq>.jsonl`, created with `If-None-Match: *` so two writers never
overwrite one object, and each writer keeps one small head per session, `PREFIX/head/<session>/
<writer>.json`, that no one else writes. Nothing is ever read, changed and written back remotely.

Locally the WAL stays the write-ahead log: a line is durable in `.stele/wal/` before sync sees it,
and sync only reads it. What was shipped and pulled is in `.stele/state/sync/` (push.json,
pull.json), saved atomically after every segment, so a sync cut off anywhere (a killed server, a
hook's deadline, Ctrl-C) resumes where it stopped and never ships or stores a line twice. One sync
at a time per clone (a lock file); a hook that finds another sync running skips.

`pending()` is the hook's question "is there anything to push?" and must stay cheap: it compares
the stat of each session's files with what the last push saw, and imports no S3 client.
"""
from __future__ import annotations

import json
import os
import socket
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .. import clock
from ..errors import SteleError
from ..project import Project
from ..textcut import counted
from . import author, wal
from . import segment as seg
from .remote import Remote

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

HOST_ENV = "STELE_HOST"
STATE_DIR = "sync"
PULL_QUIET_S = 30.0  # a session start within this long after a finished pull does not pull again
_WRITER_CHARS = "0123456789abcdefghjkmnpqrstvwxyz"


@dataclass
class Pushed:
    session: str
    seq: int
    ids: list[str]


@dataclass
class Pulled:
    session: str
    seq: int
    path: Path


@dataclass
class Result:
    """What one sync did; `problems` are one line each (damaged segments, skipped sessions)."""
    pushed: list[Pushed] = field(default_factory=list)
    pulled: list[Pulled] = field(default_factory=list)
    pushed_lines: int = 0
    pulled_lines: int = 0
    problems: list[str] = field(default_factory=list)
    redacted: Counter = field(default_factory=Counter)
    resent: list[Pushed] = field(default_factory=list)  # own segments the store had lost, sent again
    resent_lines: int = 0
    gaps: list[str] = field(default_factory=list)  # "session/seq" missing on the store, nobody re-sent yet
    lost: list[str] = field(default_factory=list)  # "session/seq" gone from the store and from this clone

    def as_dict(self) -> dict[str, Any]:
        return {"pushed_segments": len(self.pushed), "pushed_lines": self.pushed_lines,
                "pulled_segments": len(self.pulled), "pulled_lines": self.pulled_lines,
                "resent_segments": len(self.resent), "resent_lines": self.resent_lines,
                "gaps": self.gaps, "lost": self.lost, "problems": self.problems}


# -- local state -----------------------------------------------------------------------------------

def state_dir(project: Project) -> Path:
    return project.state_dir / STATE_DIR


def host() -> str:
    return (os.environ.get(HOST_ENV) or socket.gethostname() or "unknown").strip()[:128]


def writer_id(project: Project) -> str:
    """This clone's writer id: made once, random, never reused by another clone."""
    path = state_dir(project) / "writer"
    try:
        text = path.read_text(encoding="utf-8").strip()
        if text:
            return text
    except OSError:
        pass
    import secrets

    made = "w-" + "".join(secrets.choice(_WRITER_CHARS) for _ in range(16))
    write_file(path, made + "\n")
    return made


def _load(project: Project, name: str) -> dict[str, Any]:
    try:
        data = json.loads((state_dir(project) / name).read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _save(project: Project, name: str, data: dict[str, Any]) -> None:
    write_file(state_dir(project) / name, json.dumps(data, sort_keys=True))


def write_file(path: Path, text: str | bytes) -> None:
    from .. import atomic

    atomic.write(path, text, mode=0o600)


class Busy(SteleError):
    """Another sync of this clone is running."""


class _Lock:
    def __init__(self, project: Project, wait: bool) -> None:
        from .. import atomic

        folder = state_dir(project)
        folder.mkdir(parents=True, exist_ok=True)
        self.fd = os.open(folder / "lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            atomic.lock_fd(self.fd, deadline=None if wait else 0.0)
        except atomic.LockTimeout:
            os.close(self.fd)
            raise Busy("another `stele session sync` is running in this clone; it will ship these "
                       "lines") from None

    def __enter__(self) -> _Lock:
        return self

    def __exit__(self, *exc: Any) -> None:
        os.close(self.fd)


def lock(project: Project, wait: bool = True) -> _Lock:
    return _Lock(project, wait)


# -- push ------------------------------------------------------------------------------------------

def _fingerprint(project: Project, paths: list[Path]) -> dict[str, list[int]]:
    out = {}
    for path in paths:
        try:
            st = path.stat()
        except OSError:
            continue
        out[project.rel(path)] = [st.st_size, st.st_mtime_ns]
    return out


def pending(project: Project) -> list[str]:
    """Local sessions with lines the store may not have (stat comparisons only; no S3 client)."""
    shipped = _load(project, "push.json").get("sessions", {})
    out = []
    for session, paths in wal.own_sessions(project).items():
        st = shipped.get(session, {})
        if st.get("files") != _fingerprint(project, paths) or st.get("head_due"):
            out.append(session)
    return out


def push(project: Project, remote: Remote, store: Any, result: Result,
         on_segment: Callable[[Pushed], None] | None = None) -> None:
    """Ship every pending session's new lines as segments, then its head. Raises StoreError on the
    first failure (what was shipped before it stays shipped)."""
    state = _load(project, "push.json")
    sessions = state.setdefault("sessions", {})
    me, here = writer_id(project), host()
    patterns = project.config["redaction.patterns"]
    own = wal.own_sessions(project)
    for session in pending(project):
        st = sessions.setdefault(session, {"shipped": 0, "last": None, "seq": 0, "mine": []})
        files = _fingerprint(project, own[session])  # before reading: a line appended meanwhile is pending
        report = wal.ReadReport()
        entries = list(wal.read_all(project, report, session=session, team=False))
        start = _resume_at(entries, st)
        if start is None:
            result.problems.append(f"session {session}: its log no longer holds the last line synced "
                                   f"({st.get('last')}); it was edited by hand, so it is not pushed")
            continue
        sizes = [0] * start + [len(json.dumps(e.as_dict(), ensure_ascii=False)) for e in entries[start:]]
        for chunk_start, chunk_end in seg.chunks(sizes, start):
            chunk = entries[chunk_start:chunk_end]
            lines = [wal.redact_entry({**e.as_dict(), "host": e.extra.get("host") or here}, patterns,
                                      result.redacted) for e in chunk]
            seq = _put_segment(remote, store, session, int(st["seq"]) + 1, me, here, lines)
            # where its lines are in the log, to send it again if the store loses it (`repair`)
            spans = {**st.get("spans", {}), str(seq): [chunk_start, chunk_start + len(chunk), chunk[-1].id]}
            st.update(shipped=chunk_start + len(chunk), last=chunk[-1].id, seq=seq, head_due=True,
                      mine=st["mine"] + [seq], spans=spans)
            _save(project, "push.json", state)
            done = Pushed(session, seq, [e.id for e in chunk])
            result.pushed.append(done)
            result.pushed_lines += len(chunk)
            if on_segment:
                on_segment(done)
        if st.get("head_due"):
            agent = next((e.agent for e in entries if e.agent), None)
            store.put(seg.head_key(remote.prefix, session, me),
                      seg.head(session, me, here, agent, int(st["seq"]), int(st["shipped"]), clock.now_iso()))
        st.update(files=files, head_due=False)
        _save(project, "push.json", state)


def _resume_at(entries: list[wal.Entry], st: dict[str, Any]) -> int | None:
    """Where the unshipped lines start: after the last shipped entry (found by id, normally at the
    count shipped). None when that entry is gone from the log."""
    last, shipped = st.get("last"), int(st.get("shipped", 0))
    if not last:
        return 0
    if 0 < shipped <= len(entries) and entries[shipped - 1].id == last:
        return shipped
    for n, e in enumerate(entries):
        if e.id == last:
            return n + 1
    return None


def _put_segment(remote: Remote, store: Any, session: str, seq: int, me: str, here: str,
                 lines: list[dict[str, Any]]) -> int:
    """Create the segment at the first free number from `seq`; returns the number it got. Finding
    our own bytes already there (an upload whose answer was lost) counts as done."""
    for _ in range(10_000):
        data = seg.encode(session, seq, me, here, lines)
        key = seg.segment_key(remote.prefix, session, seq)
        if store.put_new(key, data) or store.get(key) == data:
            return seq
        seq += 1  # another writer holds this number (two clones logging under one session id)
    raise SteleError(f"{remote.where()}: no free segment number for session {session}")


# -- continuity ------------------------------------------------------------------------------------

def repair(project: Project, remote: Remote, store: Any, result: Result, verify: bool = False) -> None:
    """Segment continuity for this writer: find the segments it confirmed on the store that the store
    no longer has, and send them again from the local log (same number, same bytes); one whose lines
    the log no longer holds is reported as lost. Normally one request: a session whose head of ours is
    missing from the listing of `head/` (a store restarted empty, a bucket emptied) is checked segment
    by segment; `verify` checks every session this clone wrote (`stele session sync --verify`)."""
    state = _load(project, "push.json")
    ours = {s: st for s, st in state.get("sessions", {}).items() if st.get("mine")}
    if not ours:
        return
    me, here = writer_id(project), host()
    if verify:
        suspect = sorted(ours)
    else:
        heads = {obj.key for obj in store.list(f"{remote.prefix}head/")}
        suspect = sorted(s for s in ours if seg.head_key(remote.prefix, s, me) not in heads)
    patterns = project.config["redaction.patterns"]
    for session in suspect:
        st = ours[session]
        present = {seg.parse_seq(o.key.rsplit("/", 1)[-1]) for o in store.list(f"{remote.prefix}wal/{session}/")}
        missing = [n for n in st["mine"] if n not in present]
        st["head_due"] = True  # our head is missing or may be stale: write it again
        if not missing:
            continue
        entries = list(wal.read_all(project, wal.ReadReport(), session=session, team=False))
        resent, lost = [], []
        for n in missing:
            span = st.get("spans", {}).get(str(n))
            if not span or span[1] > len(entries) or entries[span[1] - 1].id != span[2]:
                lost.append(n)
                continue
            chunk = entries[span[0]:span[1]]
            lines = [wal.redact_entry({**e.as_dict(), "host": e.extra.get("host") or here}, patterns,
                                      result.redacted) for e in chunk]
            data = seg.encode(session, n, me, here, lines)
            key = seg.segment_key(remote.prefix, session, n)
            if not store.put_new(key, data) and store.get(key) != data:
                result.problems.append(f"session {session}: segment {n} the store had lost was taken by "
                                       "another writer meanwhile; its lines stay in the local log")
                continue
            resent.append(n)
            result.resent.append(Pushed(session, n, [e.id for e in chunk]))
            result.resent_lines += len(chunk)
        if resent:
            result.problems.append(f"session {session}: the store had lost {numbered('segment', resent)} "
                                   "of this clone; sent again from the local log")
        if lost:
            result.lost += [f"{session}/{n}" for n in lost]
            result.problems.append(f"session {session}: the store lost {numbered('segment', lost)} of this "
                                   "clone, and the local log no longer holds their lines: nobody has them")
        st["lost"] = sorted(set(st.get("lost", [])) | set(lost))
        _save(project, "push.json", state)
    _save(project, "push.json", state)


def numbered(word: str, numbers: list[int]) -> str:
    """`1 segment (3)`, `2 segments (3, 5)`."""
    return f"{counted(len(numbers), word)} ({', '.join(str(n) for n in numbers)})"


def continuity(project: Project) -> tuple[dict[str, list[int]], dict[str, list[int]]]:
    """What the last syncs found and could not mend (doctor; no network): segments missing on the
    store that a pull is waiting for (session -> numbers), and this clone's segments lost for good."""
    gaps = {s: list(v["missing"]) for s, v in _load(project, "pull.json").get("sessions", {}).items()
            if v.get("missing")}
    lost = {s: list(v["lost"]) for s, v in _load(project, "push.json").get("sessions", {}).items()
            if v.get("lost")}
    return gaps, lost


# -- pull ------------------------------------------------------------------------------------------

def pull_due(project: Project, now: float | None = None) -> bool:
    """Should a session start pull? Not when a pull finished moments ago (several agents starting)."""
    finished = _load(project, "pull.json").get("finished", 0)
    return (time.time() if now is None else now) - float(finished or 0) >= PULL_QUIET_S


def pull(project: Project, remote: Remote, store: Any, result: Result,
         on_segment: Callable[[Pulled], None] | None = None) -> None:
    """Fetch the team's new segments into `.stele/wal/team/`. A damaged segment is reported in
    `result.problems` and skipped; a store failure raises StoreError (what was stored stays)."""
    state = _load(project, "pull.json")
    heads, sessions, bad = (state.setdefault(k, {}) for k in ("heads", "sessions", "bad"))
    me = writer_id(project)
    mine = {s: set(v.get("mine", ())) for s, v in _load(project, "push.json").get("sessions", {}).items()}
    changed: dict[str, dict[str, str]] = {}
    for obj in store.list(f"{remote.prefix}head/"):
        parts = obj.key[len(remote.prefix):].split("/")
        if len(parts) != 3 or not parts[2].endswith(".json"):
            continue
        session, writer = parts[1], parts[2][:-len(".json")]
        if writer == me or heads.get(obj.key) == obj.etag:
            continue
        if not _valid_session(session):
            result.problems.append(f"{remote.url}/{obj.key}: not a session name Stele writes; skipped")
            heads[obj.key] = obj.etag
            continue
        changed.setdefault(session, {})[obj.key] = obj.etag
    # An open gap is looked for at every pull, whether its writer's head changed or not: the head a
    # writer rewrites after sending a lost segment again can be byte for byte the one before (its time
    # is to the second, the rest unchanged), or not written at all (a sync cut off between the two).
    for session, known in sessions.items():
        if known.get("missing"):
            changed.setdefault(session, {})
    patterns = project.config["redaction.patterns"]
    for session, seen in sorted(changed.items()):
        st = sessions.setdefault(session, {"last": 0})
        last = int(st["last"])
        for seq in list(st.get("missing", ())):  # a gap seen before: has its writer sent it again?
            key = seg.segment_key(remote.prefix, session, seq)
            found = next((o for o in store.list(f"{remote.prefix}wal/{session}/", _before(key)) if o.key == key),
                         None)
            if found is None:
                continue
            if seq not in mine.get(session, ()):
                got = _pull_one(project, remote, store, session, seq, found, patterns, result, bad)
                if got is not None and on_segment:
                    on_segment(got)
            st["missing"] = [n for n in st["missing"] if n != seq]
            _save(project, "pull.json", state)
        after = seg.segment_key(remote.prefix, session, last) if last else ""
        for obj in store.list(f"{remote.prefix}wal/{session}/", after):
            seq = seg.parse_seq(obj.key.rsplit("/", 1)[-1])
            if seq is None or seq <= last:
                continue
            if seq > last + 1:  # numbers are contiguous: these were lost by the store (or not sent yet)
                gap = set(range(last + 1, seq)) - mine.get(session, set())  # our own: `repair`'s work
                st["missing"] = sorted(set(st.get("missing", ())) | gap)
            if seq not in mine.get(session, ()):
                got = _pull_one(project, remote, store, session, seq, obj, patterns, result, bad)
                if got is not None and on_segment:
                    on_segment(got)
            st["last"] = last = seq
            _save(project, "pull.json", state)
        gone = [n for n in st.get("missing", ()) if n not in mine.get(session, ())]
        if gone:
            result.gaps += [f"{session}/{n}" for n in gone]
            result.problems.append(f"session {session}: {numbered('segment', gone)} missing on the store "
                                   "(lost by it, or not sent yet); its writer's next sync sends it again if "
                                   "its log still holds the lines")
        heads.update(seen)  # the heads as listed before the segments: a newer one shows up next time
        _save(project, "pull.json", state)
    state["finished"] = time.time()
    _save(project, "pull.json", state)


def _before(key: str) -> str:
    """A StartAfter that lists `key` first: the key with its last character stepped back."""
    return key[:-1] + chr(ord(key[-1]) - 1)


def _pull_one(project: Project, remote: Remote, store: Any, session: str, seq: int, obj: Any,
              patterns: Any, result: Result, bad: dict[str, Any]) -> Pulled | None:
    where = f"{remote.url}/{obj.key[len(remote.prefix):]}"
    try:
        data = seg.fetch(store, obj.key, obj.size)
        if data is None:
            result.problems.append(f"{where}: listed but gone; skipped")
            return None
        segment = seg.decode(session, seq, data)
    except seg.BadSegment as e:
        result.problems.append(f"{where}: {e}; skipped (the rest of the sync went on)")
        bad[obj.key] = {"etag": obj.etag, "why": str(e)}
        return None
    # Every pulled line carries a host that reads as a name: a line without one reads as this clone's
    # own (no byline), so a segment naming no host could pass its steering off as this operator's. The
    # host is stamped before redaction: a trailer's words are the writer's, untrusted like its lines.
    lines = [wal.redact_entry({**e, "host": author.clean(e.get("host")) or author.clean(segment.host)
                               or author.UNKNOWN}, patterns, result.redacted)
             for e in segment.entries]
    path = wal.team_segment_path(project, session, seq)
    write_file(path, "".join(seg.line(x).decode("utf-8") for x in lines))
    result.pulled_lines += len(lines)
    got = Pulled(session, seq, path)
    result.pulled.append(got)
    return got


def _valid_session(name: str) -> bool:
    try:
        wal.check_session_name(name)
        return True
    except SteleError:
        return False


def record_outcome(project: Project, error: str | None, problems: list[str]) -> None:
    """How the last bounded sync (a hook's, run in the background) went: doctor reports it."""
    try:
        _save(project, "outcome.json", {"at": clock.now_iso(), "error": error, "problems": problems[:20]})
    except OSError:
        pass


def outcome(project: Project) -> dict[str, Any]:
    return _load(project, "outcome.json")


def damaged(project: Project) -> dict[str, str]:
    """Segments the last pulls refused: key -> why (doctor lists them; no network)."""
    return {k: str(v.get("why", "")) for k, v in _load(project, "pull.json").get("bad", {}).items()}


def last_pull(project: Project) -> float | None:
    finished = _load(project, "pull.json").get("finished")
    return float(finished) if finished else None


def iter_team(project: Project) -> Iterator[Path]:
    """Every pulled segment file."""
    root = wal.team_dir(project)
    if root.is_dir():
        yield from sorted(root.glob("*/*.jsonl"))
