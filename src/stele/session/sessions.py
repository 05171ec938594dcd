"""Sessions over the WAL: start, log, restart, and the queries behind `session list` and `show`.

A session is nothing but its log. `start` writes a `note` entry with `"event": "start"` that carries
the agent, thread, goal and task; `log` copies the session's agent and thread onto every entry, so a
line is self-describing for the index and for `--thread` filters without a second file that could
disagree with the log. Everything here reads the log afresh: there is no session database to repair.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from .. import clock, textcut, treefile
from ..anchors.paths import normalize, path_matches
from ..errors import SteleError, UsageError
from ..ids import ID_RE, SESSION_ID_RE, ulid
from ..lazyre import lazy
from ..plain import dataclass, field
from ..project import Project
from . import wal
from .author import agent_of, clean, host_of
from .wal import Entry

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

START, RESTART = "start", "restart"  # values of the `event` key on bookkeeping `note` entries
DELIVERED = "delivered"  # ... and the note a hook or tool writes naming the fact ids the agent was given
EDIT_HOOK = "edit"  # the `hook` of the note a harness hook writes for the files the agent edited
MAX_TEXT = 256 * 1024
# Whether the lines the hooks write on their own (a harness session adopted, a delivery, the files an
# edit touched) are fsynced. They are not: each fsync costs a prompt hook ~4 ms (two on a session's
# first prompt), and a power cut losing the last of them costs at worst a fact shown again or an edit
# missing from the recall gap. Lines an agent or a person writes (`stele session ...`) are.
DURABLE_BOOKKEEPING = False
MAX_QUERY = 2048
MAX_LIMIT = 32
DEFAULT_LIMIT = 20
_SHA_RE = lazy(r"^[0-9a-fA-F]{4,64}$")


def new_session_id() -> str:
    """`sess-` and a lower-case ULID: sorts by start time, cannot be mistaken for an entry id (`S-...`)."""
    return "sess-" + ulid().lower()


def event(entry: Entry) -> str | None:
    return entry.extra.get("event") if entry.type == "note" else None


@dataclass
class Session:
    """What a session's log says about it."""
    id: str
    agent: str | None = None
    thread: str | None = None
    goal: str | None = None
    task: str | None = None
    started: str | None = None
    last: str | None = None
    entries: int = 0
    restarts: int = 0
    types: Counter = field(default_factory=Counter)
    hosts: set[str] = field(default_factory=set)  # where its pulled entries were written (team sessions)

    def add(self, entry: Entry) -> None:
        if self.entries == 0:
            self.started = entry.ts
        self.entries += 1
        self.last = entry.ts
        self.types[entry.type] += 1
        where = host_of(entry)
        if where:
            self.hosts.add(where)
        if event(entry) == START:
            self.started = entry.ts
            self.agent = entry.agent or self.agent
            self.thread = entry.thread or self.thread
            self.goal = entry.extra.get("goal") or self.goal
            self.task = entry.task or self.task
        elif event(entry) == RESTART:
            self.restarts += 1

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "agent": clean(self.agent), "thread": self.thread, "goal": self.goal,
                "task": self.task, "started": self.started, "last": self.last, "entries": self.entries,
                "restarts": self.restarts, "types": dict(sorted(self.types.items())),
                "hosts": sorted(self.hosts)}


def summarize(session_id: str, entries: Iterable[Entry]) -> Session:
    s = Session(session_id)
    for entry in entries:
        s.add(entry)
    return s


def entries_of(project: Project, session_id: str, report: wal.ReadReport | None = None) -> list[Entry]:
    return list(wal.read_all(project, report, session=session_id))


def info(project: Project, session_id: str) -> Session:
    return summarize(session_id, entries_of(project, session_id))


def identity(project: Project, session_id: str) -> Session:
    """Who runs a session, in which thread, towards what: read up to its start entry only (the first
    line, normally), because `log` asks on every append."""
    s = Session(session_id)
    for entry in wal.read_all(project, session=session_id):
        if event(entry) == START:
            s.add(entry)
            break
    return s


def start(project: Project, *, agent: str | None = None, thread: str | None = None, goal: str | None = None,
          task: str | None = None, session: str | None = None, durable: bool = True) -> Entry:
    """Begin a session (a fresh id unless `session` names one, e.g. a harness's id) and record who runs
    it, in which thread, towards what goal."""
    session_id = wal.check_session_name(session) if session else new_session_id()
    if thread is not None:
        thread = _check_name(thread, "--thread")
    if agent is not None:
        agent = _check_name(agent, "--agent")
    if wal.segments(project, session_id):
        raise SteleError(f"session {session_id} already exists; log to it with `stele session log` "
                         "(STELE_SESSION or --session), or start a new one without --session")
    if thread is not None:
        _one_harness_per_thread(project, thread, agent)
    goal = goal.strip() if goal else None
    entry = wal.new_entry(session_id, "note", goal or "session started", agent=agent, thread=thread,
                          task=check_task(task), extra={"event": START, **({"goal": goal} if goal else {})})
    return wal.append(project, entry, durable=durable)


def _one_harness_per_thread(project: Project, thread: str, agent: str | None) -> None:
    """A thread's history is one run's: its preamble, stages and visit counts assume one harness
    driving it. A session of another agent joining it is refused (a new thread costs nothing)."""
    for entry in wal.read_all(project):
        if event(entry) == START and entry.thread == thread and entry.agent != agent:
            theirs = entry.agent or "an unnamed agent"
            raise SteleError(f"thread {thread!r} is run by {theirs} (session {entry.session}): a thread cannot "
                             f"mix harnesses; start {agent or 'this session'} in a thread of its own")


def log(project: Project, session_id: str, type_: str, text: str, *, task: str | None = None,
        issue: str | None = None, pr: str | None = None, sha: str | None = None, paths: Iterable[str] = (),
        stage: str | None = None, extra: dict[str, Any] | None = None, found: Counter | None = None,
        durable: bool = True, at: str | None = None) -> Entry:
    """Append one entry to a session, stamped with the session's agent and thread, and with the time
    now or `at` (a time a person typed, e.g. from notes written earlier: see `clock.parse_given`)."""
    if type_ not in wal.TYPES:
        raise UsageError(f"entry type {type_!r} is not one of " + ", ".join(wal.TYPES))
    text = text.strip("\n")
    if not text.strip():
        raise UsageError("the text is empty: say what happened (an argument, or - to read stdin)")
    if len(text.encode("utf-8")) > MAX_TEXT:
        raise UsageError(f"the text is {len(text.encode('utf-8'))} bytes; a session entry holds at most "
                         f"{MAX_TEXT}: log a summary, and commit the long form as a document")
    fields = dict(extra or {})
    if type_ == "stage":
        if not stage or not stage.strip():
            raise UsageError("a stage entry needs --stage NAME (the stage it completes, e.g. plan)")
        fields["stage"] = _check_name(stage, "--stage")
    elif stage:
        raise UsageError(f"--stage only applies to `stage` entries, not {type_!r}")
    ts = None
    if at is not None:
        try:
            ts = clock.parse_given(at)
        except ValueError as e:
            raise UsageError(f"--at: {e}") from None
    s = identity(project, session_id)
    entry = wal.new_entry(session_id, type_, text, ts=ts, agent=s.agent, thread=s.thread, task=check_task(task),
                          refs=refs(project, issue, pr, sha, paths), extra=fields)
    return wal.append(project, entry, found=found, durable=durable)


def adopt(project: Project, session_id: str, agent: str) -> None:
    """A harness's own session becomes a Stele session, named after it and stamped with the agent, the
    first time a hook writes to it: `stele session list` and `task resume` then see it like any other."""
    if not wal.segments(project, session_id):
        try:
            start(project, agent=agent, session=session_id, durable=DURABLE_BOOKKEEPING)
        except SteleError:
            pass  # a parallel hook started it first


def log_edit(project: Project, session_id: str, paths: list[str], agent: str) -> Entry:
    """The files (repo-relative) a harness reported the agent edited: one note for the recall gap and
    for search ("which session touched gc.py?")."""
    adopt(project, session_id, agent)
    return log(project, session_id, "note", "edited " + ", ".join(paths),
               paths=[str(project.root / p) for p in paths], extra={"hook": EDIT_HOOK}, durable=DURABLE_BOOKKEEPING)


PROMPT_CHARS = 500  # of the prompt a delivery answered, kept beside it (redacted like every line)


def log_delivered(project: Project, session_id: str, hook: str, ids: list[str], agent: str,
                  prompt: str | None = None, warned: list[str] | None = None) -> Entry:
    """The fact ids `hook` (a hook event, or `mcp:<tool>`) put in front of the agent: one compact
    bookkeeping note per delivery, so "what did the agent see" is answerable for any session; with
    the prompt it answered (cut to `PROMPT_CHARS`), so it is answerable per turn, and `stele eval
    --init` can draw cases from what was really asked. `warned`: those of the ids delivered as a risk
    callout (kept only when there are some)."""
    from ..textcut import chars

    adopt(project, session_id, agent)
    extra: dict[str, Any] = {"event": DELIVERED, "hook": hook, "ids": list(ids)}
    if warned:
        extra["warned"] = [i for i in ids if i in set(warned)]
    if prompt and prompt.strip():
        extra["prompt"] = chars(" ".join(prompt.split()), PROMPT_CHARS, "...")
    return log(project, session_id, "note", f"{hook}: {', '.join(ids)}", extra=extra, durable=DURABLE_BOOKKEEPING)


def delivered_prompt(entry: Entry) -> str:
    """The prompt a delivery note answered ('' when it was not a prompt's, or predates the field)."""
    prompt = entry.extra.get("prompt") if event(entry) == DELIVERED else None
    return prompt if isinstance(prompt, str) else ""


def delivered_ids(entry: Entry) -> list[str]:
    """The ids a delivery note names ([] for any other entry, or a hand-edited one that lost them)."""
    ids = entry.extra.get("ids") if event(entry) == DELIVERED else None
    return [i for i in ids if isinstance(i, str)] if isinstance(ids, list) else []


def edited_paths(entry: Entry) -> list[str]:
    """The files an edit note (written by a harness hook) says the agent changed."""
    return entry.paths if entry.type == "note" and entry.extra.get("hook") == EDIT_HOOK else []


def restart(project: Project, session_id: str, reason: str | None = None) -> Entry:
    """Start a new iteration: stage history before this point leaves the preamble; the goal, the
    session's identity, steering and visit counts stay."""
    s = identity(project, session_id)
    entry = wal.new_entry(session_id, "note", (reason or "").strip() or "restart", agent=s.agent,
                          thread=s.thread, extra={"event": RESTART})
    return wal.append(project, entry)


def refs(project: Project, issue: str | None, pr: str | None, sha: str | None,
         paths: Iterable[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for flag, value in (("--issue", issue), ("--pr", pr)):
        if value is not None:
            number = value.strip().lstrip("#")
            if not number.isdigit():
                raise UsageError(f"{flag} {value!r} is not a number: write it as 12 or #12")
            out[flag[2:]] = number
    if sha is not None:
        if not _SHA_RE.match(sha.strip()):
            raise UsageError(f"--sha {sha!r} is not a commit id: 4 to 64 hexadecimal characters")
        out["sha"] = sha.strip().lower()
    clean = []
    for given in paths:
        # relative to where the command runs, like every path a user types; stored repo-relative
        path = normalize(project.rel(Path(given) if Path(given).is_absolute() else Path.cwd() / given))
        if not given.strip() or path.startswith(("/", "../")) or path == "..":
            raise UsageError(f"--path {given!r}: give a file inside the repository")
        clean.append(path)
    if clean:
        out["paths"] = list(dict.fromkeys(clean))
        prints = pinned(project, out["paths"])
        if prints:
            out["prints"] = prints
    return out


def pinned(project: Project, paths: list[str]) -> dict[str, str]:
    """The fingerprints of the files (or `path::Symbol`s) an entry is about, as they are when it is
    written: what tells later that the code changed under it (`anchors/drift.py`, a stale entry)."""
    from ..anchors.fingerprint import of_anchor

    def read(path: str) -> str | None:
        try:
            return treefile.read_text(project.root / path, errors="replace", root=project.root)
        except (OSError, ValueError):
            return None

    out = {}
    for path in paths:
        found = of_anchor(path, read)
        if found:
            out[path] = found
    return out


def check_task(task: str | None) -> str | None:
    if task is None:
        return None
    if not ID_RE.match(task.strip().upper()):
        raise UsageError(f"--task {task!r} is not a fact id like TASK-418")
    return task.strip().upper()


def _check_name(value: str, flag: str) -> str:
    value = " ".join(value.split())
    if not value or len(value) > 128:
        raise UsageError(f"{flag} must be 1 to 128 characters")
    return value


def find_entry(project: Project, entry_id: str, report: wal.ReadReport | None = None) -> Entry:
    want = entry_id.strip().upper()
    if not SESSION_ID_RE.match(want):
        raise UsageError(f"{entry_id!r} is not a session entry id (S- and a ULID); `stele session show "
                         "SESSION` lists a session's entries")
    for entry in wal.read_all(project, report):
        if entry.id == want:
            return entry
    raise SteleError(f"no session entry {want} in {project.rel(project.wal_dir)}/: `stele session list` "
                     "shows sessions")


@dataclass
class Filters:
    """`session list` filters. Thread selects sessions; the others must all hold on one entry."""
    issue: str | None = None
    pr: str | None = None
    path: str | None = None
    task: str | None = None
    thread: str | None = None
    q: str | None = None

    def __post_init__(self) -> None:
        if self.q is not None:
            if not self.q.strip():
                raise UsageError("--q is empty: give the words to search for")
            if len(self.q) > MAX_QUERY:
                raise UsageError(f"--q is {len(self.q)} characters; a query holds at most {MAX_QUERY}")
        for name in ("issue", "pr"):
            value = getattr(self, name)
            if value is not None:
                setattr(self, name, value.strip().lstrip("#"))
        if self.task:
            self.task = self.task.strip().upper()

    @property
    def by_entry(self) -> bool:
        return any(v is not None for v in (self.issue, self.pr, self.path, self.task, self.q))

    def matches(self, entry: Entry) -> bool:
        r = entry.refs
        if self.issue is not None and str(r.get("issue", "")) != self.issue:
            return False
        if self.pr is not None and str(r.get("pr", "")) != self.pr:
            return False
        if self.task is not None and (entry.task or "").upper() != self.task:
            return False
        if self.path is not None and not any(path_matches(self.path, p) for p in entry.paths):
            return False
        if self.q is not None:
            hay = search_text(entry).lower()
            return all(term in hay for term in self.q.lower().split())
        return True


def search_text(entry: Entry) -> str:
    """The text a query is matched against (and what the index should embed): the entry's text, its
    stage name and the paths it touched."""
    parts = [entry.text]
    if entry.extra.get("stage"):
        parts.insert(0, str(entry.extra["stage"]))
    parts += entry.paths
    return "\n".join(parts)


def is_bookkeeping(entry: Entry) -> bool:
    """Restart markers, delivery notes and a start without a goal ("session started", which a hook
    writes when it adopts a harness session) carry no knowledge; the index may skip them."""
    return event(entry) in (RESTART, DELIVERED) or (event(entry) == START and not entry.extra.get("goal"))


@dataclass
class Listed:
    session: Session
    hits: list[Entry]

    def as_dict(self) -> dict[str, Any]:
        data = self.session.as_dict()
        data["matches"] = len(self.hits)
        data["hits"] = [{"id": e.id, "ts": e.ts, "type": e.type, "text": textcut.words(e.text, 200),
                         "agent": agent_of(e), "host": host_of(e)} for e in self.hits[:3]]
        return data


def check_limit(limit: int) -> int:
    if limit < 1:
        raise UsageError(f"--limit {limit}: give a number from 1 to {MAX_LIMIT}")
    return min(limit, MAX_LIMIT)


def list_sessions(project: Project, filters: Filters, limit: int = DEFAULT_LIMIT,
                  report: wal.ReadReport | None = None) -> tuple[list[Listed], int]:
    """Sessions with at least one matching entry, most recently active first; returns the first
    `limit` (capped at 32) and how many matched in all."""
    limit = check_limit(limit)
    by_id: dict[str, tuple[Session, list[Entry]]] = {}
    for entry in wal.read_all(project, report):
        s, hits = by_id.setdefault(entry.session, (Session(entry.session), []))
        s.add(entry)
        if filters.by_entry and filters.matches(entry):
            hits.append(entry)
    listed = []
    for s, hits in by_id.values():
        if filters.thread is not None and s.thread != filters.thread:
            continue
        if filters.by_entry and not hits:
            continue
        listed.append(Listed(s, hits))
    listed.sort(key=lambda x: (x.session.last or "", x.session.id), reverse=True)
    return listed[:limit], len(listed)


@dataclass
class Summary:
    """One session in a few lines: the recency fallback when there is no index to search."""
    id: str  # the newest summarized entry: an `S-` id a caller can cite and `show`
    session: str
    last: str
    text: str

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "session": self.session, "last": self.last, "text": self.text}


def recent_summaries(project: Project, limit: int = 8, per_session: int = 3, width: int = 200,
                     report: wal.ReadReport | None = None) -> list[Summary]:
    """The most recently active sessions, newest first, each as its goal and its last few entries
    (each cut to `width` characters)."""
    by_session: dict[str, list[Entry]] = {}
    for entry in wal.read_all(project, report):
        by_session.setdefault(entry.session, []).append(entry)
    out = []
    for sid, entries in by_session.items():
        entries.sort(key=order_key)
        info = summarize(sid, entries)
        told = [e for e in entries if event(e) is None][-per_session:]
        if not told and not info.goal:
            continue
        lines = [f"goal: {textcut.one_line(info.goal, width)}"] if info.goal else []
        lines += [f"{e.type}: {textcut.one_line(e.text, width)}" for e in told]
        newest = (told or entries)[-1]
        out.append(Summary(newest.id, sid, newest.ts, "\n".join(lines)))
    out.sort(key=lambda x: (x.id[2:12], x.session), reverse=True)
    return out[:limit]


def order_key(entry: Entry) -> str:
    """Entry ids are ULIDs: their first 10 characters after `S-` are the millisecond they were made.
    (Use with a stable sort so lines of one millisecond keep their file order.)"""
    return entry.id[2:12]


def turns(entries: Iterable[Entry]) -> list[dict[str, Any]]:
    """A session's hook deliveries by turn, in log order: a delivery of the prompt hook opens a turn
    (with the prompt it answered); the others (session start, edits, subagents, MCP tools) belong to
    the turn they happened in, or to turn 0 before the first prompt. Each delivery names its hook,
    time and ids: what the agent saw, prompt by prompt."""
    out: list[dict[str, Any]] = []
    for entry in sorted(entries, key=order_key):
        if event(entry) != DELIVERED:
            continue
        hook = str(entry.extra.get("hook") or "")
        if hook == "prompt" or not out:
            out.append({"turn": (out[-1]["turn"] + 1) if out else (1 if hook == "prompt" else 0),
                        "prompt": delivered_prompt(entry) if hook == "prompt" else "", "ts": entry.ts,
                        "deliveries": []})
        out[-1]["deliveries"].append({"entry": entry.id, "ts": entry.ts, "hook": hook, "ids": delivered_ids(entry)})
    return out


def deliveries(project: Project, limit: int = DEFAULT_LIMIT) -> list[dict[str, Any]]:
    """Sessions with hook deliveries, most recently active first (at most `limit`), each with its turns."""
    by_id: dict[str, tuple[Session, list[Entry]]] = {}
    for entry in wal.read_all(project, wal.ReadReport()):
        s, mine = by_id.setdefault(entry.session, (Session(entry.session), []))
        s.add(entry)
        mine.append(entry)
    found = [(s, turns(mine)) for s, mine in by_id.values()]
    found = [(s, t) for s, t in found if t]
    found.sort(key=lambda x: (x[0].last or "", x[0].id), reverse=True)
    return [{"session": s.as_dict(), "turns": t} for s, t in found[:check_limit(limit)]]
